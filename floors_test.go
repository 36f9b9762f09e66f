package sessionlog

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The floors of the module (doc.go draws them): every package stands on a
// floor and imports, transitively, only packages on floors below it, or on
// its own floor through the same-floor imports its row names in on. This
// file is the one place the rules live; TestFloors checks them against
// `go list`.

const modulePath = "github.com/sessionlog/sessionlog"

// floorWhy is what each floor holds, in one line.
var floorWhy = map[int]string{
	0: "toolbox leaves and test support: nothing of the module below them, so any floor may stand on them",
	1: "the event model: JSON text, the storage form, the record frame, typed views",
	2: "pure computation over stored values: the header fold, the token estimate and compaction bracket",
	3: "the fold and request of any step; the wire bodies and stream translators; the recorded events (pure: no I/O, no store)",
	4: "storage: the Store contract, its drivers and their on-disk formats; the importers of other agents' transcripts",
	5: "what drives or checks a store: the loop, verify, salvage, audit",
	6: "what faces the outside: HTTP providers, the recording gateway, the scripted driver, the root entry for embedders",
	7: "what a person runs: the commands, the example host, the web UI, the whole-engine proofs",
}

// row places one package (its import path without the module's, "." for
// the root). There is no inheritance: a package under eventlog/ is a
// driver, a format or the contract, which stand at different places, so a
// new package needs a row of its own.
type row struct {
	pkg   string
	floor int
	// on lists the packages of the same floor that pkg imports directly
	// (the only sideways imports allowed; what they import comes along).
	on []string
	// support marks test support: it may import "testing", and only
	// tests, other support packages and floor 7 import it.
	support bool
}

// packages is the table: every package of the module, by path.
var packages = []row{
	{pkg: ".", floor: 6},
	{pkg: "audit", floor: 5},
	{pkg: "cmd/logbench", floor: 7, on: []string{"ui"}},
	{pkg: "cmd/logtool", floor: 7, on: []string{"ui"}},
	{pkg: "codec", floor: 1},
	{pkg: "codec/internal/gendict", floor: 7}, // a command: builds codec's S2 dictionary from loggen's sessions
	{pkg: "compact", floor: 2},
	{pkg: "eventlog", floor: 4, on: []string{"internal/sessioncache"}},
	{pkg: "eventlog/boltlog", floor: 4, on: []string{"eventlog", "eventlog/internal/engine", "eventlog/wal", "internal/atomicfile", "internal/boltfmt"}},
	{pkg: "eventlog/internal/engine", floor: 4, on: []string{"eventlog", "internal/sessioncache"}}, // what both stores do alike
	{pkg: "eventlog/eventlogtest", floor: 4, on: []string{"eventlog"}, support: true},
	{pkg: "eventlog/pglog", floor: 4, on: []string{"eventlog", "eventlog/internal/engine"}},
	{pkg: "eventlog/wal", floor: 4, on: []string{"internal/atomicfile"}},
	{pkg: "examples/agent", floor: 7},
	{pkg: "fuzz", floor: 7},
	{pkg: "gateway", floor: 6},
	{pkg: "header", floor: 2},
	{pkg: "keys", floor: 4}, // reads key files and variables for the stores: the files and randomness floors 1–3 never touch
	{pkg: "internal/agenttest", floor: 0, on: []string{"internal/fakemodel"}, support: true},
	{pkg: "internal/atomicfile", floor: 4},                                        // files written whole: the commands' output, the store's; syncs directories as the store does
	{pkg: "internal/boltfmt", floor: 4, on: []string{"eventlog", "eventlog/wal"}}, // the one home of the bbolt format
	{pkg: "internal/boltfmt/bolttest", floor: 4, on: []string{"internal/boltfmt"}, support: true},
	{pkg: "internal/errclass", floor: 0}, // error classes both errors.Is implementations see
	{pkg: "internal/benchevents", floor: 0, support: true},
	{pkg: "internal/corpus", floor: 0, support: true},
	{pkg: "internal/fakemodel", floor: 0, support: true},
	{pkg: "internal/loggen", floor: 2, support: true},
	{pkg: "internal/loopback", floor: 0},
	{pkg: "internal/metrictest", floor: 0, support: true},
	{pkg: "internal/observe", floor: 0},
	{pkg: "internal/permtest", floor: 0, support: true},
	{pkg: "internal/pgtest", floor: 0, support: true},
	{pkg: "internal/powerfs", floor: 0, on: []string{"internal/errclass"}, support: true},
	{pkg: "internal/powerfs/powerfstest", floor: 0, on: []string{"internal/powerfs"}, support: true},
	{pkg: "internal/printable", floor: 0},
	{pkg: "internal/sessioncache", floor: 4}, // the stores' validator cache and writer locks
	{pkg: "internal/ssegen", floor: 0, support: true},
	{pkg: "loop", floor: 5},
	{pkg: "provider", floor: 6},
	{pkg: "rebuild", floor: 3},
	{pkg: "redact", floor: 2}, // the redactor: string values of events and bodies, a pure function
	{pkg: "salvage", floor: 5},
	{pkg: "scenario", floor: 6},
	{pkg: "stress", floor: 7},
	{pkg: "transcript", floor: 4},
	{pkg: "ui", floor: 7},
	{pkg: "verify", floor: 5},
	{pkg: "wire", floor: 3},
	{pkg: "wire/chunk", floor: 3},
	{pkg: "wire/recorded", floor: 3},
}

// never are in-module imports the floors allow but the design does not.
// A pattern "x/..." matches x and every package under it.
var never = []struct {
	from, to []string
	direct   bool // only direct imports (the package may reach one through another)
	why      string
}{
	{
		from: []string{"eventlog/...", "internal/sessioncache", "internal/boltfmt"},
		to:   []string{"header", "compact", "rebuild", "wire/..."},
		why:  "storage knows the event model alone: the rules it validates with are wired in from above (sessionlog.Open)",
	},
	{
		from:   []string{"provider"},
		to:     []string{"eventlog/...", "rebuild"},
		direct: true,
		why:    "a provider sends the request it is handed and knows no store",
	},
}

// stdRules bind the standard library imports of every package that is
// not test support, direct imports only (cockroachdb/errors links
// net/http through sentry-go, so a transitive ban could not hold).
var stdRules = []struct {
	imports []string
	upTo    int      // banned on floors 1..upTo; 0: see only
	only    []string // with upTo 0: banned except in these packages
	why     string
}{
	{
		imports: []string{"os", "net", "net/http", "time", "math/rand", "math/rand/v2", "reflect"},
		upTo:    3,
		why:     "floors 1–3 are pure: no files, no network, no clock, no randomness, no dynamic types",
	},
	{
		imports: []string{"encoding/json"},
		only:    []string{"scenario", "cmd/...", "examples/..."},
		why:     "one JSON text encoder, codec's: encoding/json escapes <>&, U+2028 and lone surrogates and sorts map keys (scenario only parses its own files into structs)",
	},
	{
		imports: []string{"os"},
		only:    []string{"eventlog/...", "salvage", "provider", "keys", "internal/atomicfile", "internal/boltfmt", "cmd/...", "examples/...", "codec/internal/gendict"},
		why:     "nothing below cmd/ reads files or variables it was not handed: the stores open the path they are given, salvage the file it copies, provider the key variable its caller names, keys the key file or variable its caller names",
	},
	{
		imports: []string{"net", "net/http"},
		only:    []string{"provider", "gateway", "ui", "internal/loopback", "cmd/...", "examples/..."},
		why:     "provider is the only package that speaks HTTP to a model; the gateway forwards, the UI serves",
	},
	{
		imports: []string{"flag"},
		only:    []string{"cmd/...", "examples/...", "codec/internal/gendict"},
		why:     "nothing below cmd/ reads flags",
	},
	{
		imports: []string{"text/template"},
		why:     "html/template escapes by context; text/template does not",
	},
}

// outside is, per floor, the packages from other modules that non-test
// code of the floor may import directly (a path matches itself and what is
// under it), each limited to the packages in only when it is set. What
// they link in turn is in testdata/deps.golden.
var outside = map[int][]struct {
	path string
	only []string
	why  string
}{
	0: {
		{path: "github.com/cockroachdb/errors", why: "the one errors library: classes, wrapping, redaction"},
		{path: "go.opentelemetry.io/otel", only: []string{"internal/observe", "internal/metrictest"}, why: "the metric API (no SDK), and a recording provider for tests"},
		{path: "github.com/jackc/pgx/v5", only: []string{"internal/pgtest"}, why: "a PostgreSQL schema per test"},
		{path: "github.com/hanwen/go-fuse/v2", only: []string{"internal/powerfs"}, why: "the FUSE loopback of the power-cut proof"},
		{path: "golang.org/x/sys/unix", only: []string{"internal/powerfs"}, why: "linkat(2) with AT_EMPTY_PATH, go-fuse's own dependency"},
	},
	1: {
		{path: "github.com/cockroachdb/errors", why: "error classes"},
		{path: "github.com/klauspost/compress/s2", only: []string{"codec"}, why: "compressed records and packs (pure Go)"},
	},
	2: {{path: "github.com/cockroachdb/errors", why: "error classes"}},
	3: {{path: "github.com/cockroachdb/errors", why: "error classes"}},
	4: {
		{path: "github.com/cockroachdb/errors", why: "error classes"},
		{path: "github.com/vmihailenco/msgpack/v5", only: []string{"internal/boltfmt"}, why: "the bbolt store's engine records (meta, head)"},
		{path: "go.etcd.io/bbolt", only: []string{"eventlog/boltlog", "internal/boltfmt", "internal/boltfmt/bolttest"}, why: "the embedded store, its format's one home, and the test helper that rewrites a store file for damage tests"},
		{path: "go.etcd.io/bbolt/errors", only: []string{"eventlog/boltlog"}, why: "bbolt's own error values, to class them"},
		{path: "github.com/jackc/pgx/v5", only: []string{"eventlog/pglog"}, why: "the PostgreSQL store"},
		{path: "go.opentelemetry.io/otel", only: []string{"eventlog/...", "internal/sessioncache"}, why: "the metric API (no SDK)"},
	},
	5: {
		{path: "github.com/cockroachdb/errors", why: "error classes"},
		{path: "go.etcd.io/bbolt", only: []string{"salvage"}, why: "salvage reads a damaged store file directly"},
		{path: "go.opentelemetry.io/otel", only: []string{"loop"}, why: "the loop's metrics (API only)"},
	},
	6: {{path: "github.com/cockroachdb/errors", why: "error classes"}},
	7: {
		{path: "github.com/cockroachdb/errors", why: "error classes"},
		{path: "github.com/spf13/cobra", only: []string{"cmd/logtool"}, why: "the command line"},
		{path: "go.etcd.io/bbolt", only: []string{"cmd/logbench"}, why: "measures the bbolt store's engine directly"},
		{path: "github.com/jackc/pgx/v5", only: []string{"cmd/logbench"}, why: "measures the PostgreSQL store's round trips directly"},
		{path: "github.com/klauspost/compress/dict", only: []string{"codec/internal/gendict"}, why: "builds codec's S2 dictionary"},
	},
}

// testModules are the modules tests may import (test files, any package):
// the approved dependencies.
var testModules = map[string]string{
	"github.com/cockroachdb/errors":     "error classes",
	"github.com/cockroachdb/datadriven": "scenario tests",
	"github.com/chromedp/chromedp":      "the UI's browser test",
	"github.com/chromedp/cdproto":       "chromedp's protocol types",
	"github.com/hanwen/go-fuse/v2":      "the power-cut proof",
	"golang.org/x/sys":                  "go-fuse's system calls",
	"go.etcd.io/bbolt":                  "damage tests of real store files",
	"github.com/vmihailenco/msgpack/v5": "engine records written by hand in damage tests",
	"github.com/jackc/pgx/v5":           "the PostgreSQL store's tests",
	"github.com/klauspost/compress":     "records compressed by hand",
	"go.opentelemetry.io/otel":          "metric tests",
	"github.com/spf13/cobra":            "logtool's tests",
	"github.com/spf13/pflag":            "logtool's flag tests",
}

var updateDeps = flag.Bool("update", false, "rewrite testdata/deps.golden from go list")

// listed is what TestFloors reads of a package from go list.
type listed struct {
	ImportPath                string
	Imports, Deps             []string
	TestImports, XTestImports []string
	Error                     *struct{ Err string }
}

// TestFloors checks the tables above against the module's packages (go
// list): every package has a row and every row a package; transitive
// in-module imports go down, or sideways only as on says; never,
// stdRules, outside and testModules hold; testdata/deps.golden is the
// module's non-test set of outside packages.
func TestFloors(t *testing.T) {
	pkgs := goList(t)
	for _, p := range floorProblems(pkgs) {
		t.Error(p)
	}
	checkGolden(t, pkgs)
}

// floorProblems returns what breaks the tables' rules in pkgs, the
// module's packages by path relative to the module.
func floorProblems(pkgs map[string]*listed) []string {
	var out problems
	rows := map[string]row{}
	for _, r := range packages {
		if _, dup := rows[r.pkg]; dup {
			out.add("floors: %s has two rows", r.pkg)
		}
		if _, ok := floorWhy[r.floor]; !ok {
			out.add("floors: %s is on floor %d, which floorWhy does not describe", r.pkg, r.floor)
		}
		rows[r.pkg] = r
	}
	for _, p := range sortedKeys(pkgs) {
		if _, ok := rows[p]; !ok {
			out.add("floors: package %s has no row: add {pkg: %q, floor: N} to packages in floors_test.go, "+
				"N the floor of doc.go's table it belongs to (a package under a listed one does not inherit its floor), "+
				"and on: the same-floor packages it imports", p, p)
		}
	}
	for _, r := range packages {
		if _, ok := pkgs[r.pkg]; !ok {
			out.add("floors: the row of %s names no package (its directory is gone or holds no Go code): remove the row", r.pkg)
		}
	}
	if len(out) > 0 {
		return out
	}
	checkDown(&out, pkgs, rows)
	checkNever(&out, pkgs)
	checkStd(&out, pkgs, rows)
	checkOutside(&out, pkgs, rows)
	return out
}

// problems collects what a check finds.
type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// listOnce runs go list once for the tests of this file.
var listOnce struct {
	sync.Once
	pkgs map[string]*listed
	err  string
}

// goList returns the module's packages by path relative to the module.
func goList(t *testing.T) map[string]*listed {
	t.Helper()
	listOnce.Do(func() { listOnce.pkgs, listOnce.err = runGoList() })
	if listOnce.err != "" {
		t.Fatal(listOnce.err)
	}
	return clonePackages(listOnce.pkgs)
}

// runGoList reads the module's packages with go list; the string says
// what went wrong.
func runGoList() (map[string]*listed, string) {
	gotool, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Sprintf("floors: the go command is not on PATH (%v); TestFloors reads the packages with go list", err)
	}
	cmd := exec.Command(gotool, "list", "-json=ImportPath,Imports,Deps,TestImports,XTestImports,Error", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Sprintf("floors: go list: %v\n%s", err, stderr.Bytes())
	}
	pkgs := map[string]*listed{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		p := new(listed)
		if err := dec.Decode(p); err != nil {
			return nil, fmt.Sprintf("floors: go list output: %v", err)
		}
		if p.Error != nil {
			return nil, fmt.Sprintf("floors: go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		rel, ok := inModule(p.ImportPath)
		if !ok {
			return nil, fmt.Sprintf("floors: go list ./... named %s, outside %s: run the test from the module root", p.ImportPath, modulePath)
		}
		pkgs[rel] = p
	}
	if len(pkgs) < 20 {
		return nil, fmt.Sprintf("floors: go list found %d packages; run the test from the module root", len(pkgs))
	}
	return pkgs, ""
}

// inModule returns path relative to the module ("." for the root).
func inModule(path string) (string, bool) {
	if path == modulePath {
		return ".", true
	}
	rel, ok := strings.CutPrefix(path, modulePath+"/")
	return rel, ok
}

// checkDown checks that every in-module dependency of every package is on
// a lower floor, or on its own floor and reached through on.
func checkDown(out *problems, pkgs map[string]*listed, rows map[string]row) {
	direct := map[string][]string{} // in-module direct imports
	for _, p := range sortedKeys(pkgs) {
		for _, imp := range pkgs[p].Imports {
			if rel, ok := inModule(imp); ok {
				direct[p] = append(direct[p], rel)
			}
		}
	}
	for _, p := range sortedKeys(pkgs) {
		r := rows[p]
		sideways := map[string]bool{} // same-floor packages p may reach
		var walk func(q string)
		walk = func(q string) {
			for _, s := range rows[q].on {
				if !sideways[s] {
					sideways[s] = true
					walk(s)
				}
			}
		}
		walk(p)
		for _, s := range r.on {
			switch {
			case rows[s].pkg == "":
				out.add("%s: on names %s, which has no row", p, s)
			case rows[s].floor != r.floor:
				out.add("%s: on names %s, which is on floor %d, not %d: on is for same-floor imports only", p, s, rows[s].floor, r.floor)
			case !slices.Contains(direct[p], s):
				out.add("%s: on names %s, which it does not import: remove it", p, s)
			}
		}
		for _, dep := range pkgs[p].Deps {
			q, ok := inModule(dep)
			if !ok {
				continue
			}
			f := rows[q].floor
			switch {
			case f > r.floor:
				out.add("%s (floor %d) depends on %s (floor %d), above it: %s", p, r.floor, q, f, importPath(direct, p, q))
			case f == r.floor && !sideways[q]:
				out.add("%s depends on %s, on its own floor %d, which its row's on does not allow: %s", p, q, f, importPath(direct, p, q))
			}
			if rows[q].support && !r.support && r.floor != 7 && slices.Contains(direct[p], q) {
				out.add("%s imports %s, which is test support: only tests, support and floor 7 may", p, q)
			}
		}
		if slices.Contains(pkgs[p].Imports, "testing") && !r.support {
			out.add("%s imports testing outside its tests: only test support (support: true) may", p)
		}
	}
}

// importPath returns a shortest chain of direct imports from p to q.
func importPath(direct map[string][]string, p, q string) string {
	prev := map[string]string{p: ""}
	queue := []string{p}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		if x == q {
			var chain []string
			for ; x != ""; x = prev[x] {
				chain = append(chain, x)
			}
			slices.Reverse(chain)
			return strings.Join(chain, " → ")
		}
		for _, y := range direct[x] {
			if _, seen := prev[y]; !seen {
				prev[y] = x
				queue = append(queue, y)
			}
		}
	}
	return p + " → … → " + q
}

// matches reports whether pkg is one of patterns ("x/..." is x and what
// is under it).
func matches(pkg string, patterns []string) bool {
	for _, pat := range patterns {
		if base, ok := strings.CutSuffix(pat, "/..."); ok {
			if pkg == base || strings.HasPrefix(pkg, base+"/") {
				return true
			}
		} else if pkg == pat {
			return true
		}
	}
	return false
}

func checkNever(out *problems, pkgs map[string]*listed) {
	for _, rule := range never {
		for _, p := range sortedKeys(pkgs) {
			if !matches(p, rule.from) {
				continue
			}
			deps := pkgs[p].Deps
			if rule.direct {
				deps = pkgs[p].Imports
			}
			for _, dep := range deps {
				if q, ok := inModule(dep); ok && matches(q, rule.to) {
					out.add("%s depends on %s: %s", p, q, rule.why)
				}
			}
		}
	}
}

func checkStd(out *problems, pkgs map[string]*listed, rows map[string]row) {
	for _, p := range sortedKeys(pkgs) {
		r := rows[p]
		if r.support {
			continue
		}
		for _, rule := range stdRules {
			banned := matches(p, rule.only)
			if rule.upTo > 0 {
				banned = r.floor >= 1 && r.floor <= rule.upTo
			} else {
				banned = !banned
			}
			if !banned {
				continue
			}
			for _, imp := range pkgs[p].Imports {
				if slices.Contains(rule.imports, imp) {
					out.add("%s imports %s: %s", p, imp, rule.why)
				}
			}
		}
	}
}

// isOutside reports whether an import path is of another module: its
// first element has a dot, and it is not the module's.
func isOutside(path string) bool {
	if _, ok := inModule(path); ok {
		return false
	}
	first, _, _ := strings.Cut(path, "/")
	return strings.Contains(first, ".")
}

// under reports whether path is base or a package under it.
func under(path, base string) bool {
	return path == base || strings.HasPrefix(path, base+"/")
}

func checkOutside(out *problems, pkgs map[string]*listed, rows map[string]row) {
	used := map[string]bool{} // floor/path of the entries some package uses
	for _, p := range sortedKeys(pkgs) {
		r := rows[p]
		for _, imp := range pkgs[p].Imports {
			if !isOutside(imp) {
				continue
			}
			ok := false
			for _, a := range outside[r.floor] {
				if under(imp, a.path) && (a.only == nil || matches(p, a.only)) {
					ok = true
					used[fmt.Sprint(r.floor, a.path)] = true
				}
			}
			if !ok {
				out.add("%s (floor %d) imports %s, which floor %d's outside list does not allow it: "+
					"add it there with its reason if it is one of the approved dependencies", p, r.floor, imp, r.floor)
			}
		}
		for _, imp := range slices.Concat(pkgs[p].TestImports, pkgs[p].XTestImports) {
			if !isOutside(imp) {
				continue
			}
			ok := false
			for m := range testModules {
				ok = ok || under(imp, m)
			}
			if !ok {
				out.add("tests of %s import %s, which is not an approved dependency", p, imp)
			}
		}
	}
	for f, list := range outside {
		for _, a := range list {
			if !used[fmt.Sprint(f, a.path)] {
				out.add("floor %d's outside list allows %s, which none of its packages imports: remove it", f, a.path)
			}
		}
	}
}

// goldenFile holds the outside packages the module's non-test code links.
const goldenFile = "testdata/deps.golden"

// checkGolden compares goldenFile with go list, or rewrites it with
// -update.
func checkGolden(t *testing.T, pkgs map[string]*listed) {
	got := goldenText(pkgs)
	if *updateDeps {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatalf("%v: create it with go test -run TestFloors -update .", err)
	}
	for _, p := range goldenProblems(string(want), got) {
		t.Error(p)
	}
}

// goldenText is goldenFile's text for pkgs: a comment, then the outside
// packages their non-test code links, sorted, one a line.
func goldenText(pkgs map[string]*listed) string {
	set := map[string]bool{}
	for _, p := range pkgs {
		for _, dep := range p.Deps {
			if isOutside(dep) {
				set[dep] = true
			}
		}
	}
	var b strings.Builder
	b.WriteString("# The packages of other modules that the module's non-test code links\n")
	b.WriteString("# (go list -deps ./..., standard library left out), sorted. TestFloors\n")
	b.WriteString("# compares; after a change of dependencies: go test -run TestFloors -update .\n")
	for _, dep := range sortedKeys(set) {
		b.WriteString(dep + "\n")
	}
	return b.String()
}

// goldenProblems names each package that got adds to or drops from want.
func goldenProblems(want, got string) []string {
	if want == got {
		return nil
	}
	lines := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			if l != "" && !strings.HasPrefix(l, "#") {
				m[l] = true
			}
		}
		return m
	}
	old, now := lines(want), lines(got)
	var out problems
	for _, dep := range sortedKeys(now) {
		if !old[dep] {
			out.add("%s: new outside package %s", goldenFile, dep)
		}
	}
	for _, dep := range sortedKeys(old) {
		if !now[dep] {
			out.add("%s: outside package %s is no longer linked", goldenFile, dep)
		}
	}
	out.add("%s differs from go list: review the change, then go test -run TestFloors -update .", goldenFile)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestFloorProblems breaks the module's real import graph one way at a
// time, in memory, and checks that floorProblems names each break.
func TestFloorProblems(t *testing.T) {
	base := goList(t)
	tests := []struct {
		name     string
		sabotage func(pkgs map[string]*listed)
		want     string
	}{
		{"a package without a row", func(pkgs map[string]*listed) {
			pkgs["eventlog/bolt"] = &listed{ImportPath: modulePath + "/eventlog/bolt"}
		}, "package eventlog/bolt has no row"},
		{"a row without a package", func(pkgs map[string]*listed) { delete(pkgs, "verify") },
			"the row of verify names no package"},
		{"an import up", func(pkgs map[string]*listed) { addImport(pkgs, "codec", modulePath+"/rebuild") },
			"codec (floor 1) depends on rebuild (floor 3), above it: codec → rebuild"},
		{"an import up, transitively", func(pkgs map[string]*listed) { addImport(pkgs, "eventlog/wal", modulePath+"/loop") },
			"eventlog/boltlog (floor 4) depends on loop (floor 5), above it: eventlog/boltlog → eventlog/wal → loop"},
		{"sideways without on", func(pkgs map[string]*listed) { addImport(pkgs, "transcript", modulePath+"/eventlog") },
			"transcript depends on eventlog, on its own floor 4, which its row's on does not allow"},
		{"storage on the domain", func(pkgs map[string]*listed) { addImport(pkgs, "eventlog/internal/engine", modulePath+"/header") },
			"eventlog/pglog depends on header: storage knows the event model alone"},
		{"a provider on the store", func(pkgs map[string]*listed) { addImport(pkgs, "provider", modulePath+"/eventlog") },
			"provider depends on eventlog: a provider sends"},
		{"I/O in a pure floor", func(pkgs map[string]*listed) { addImport(pkgs, "wire", "net/http") },
			"wire imports net/http: floors 1–3 are pure"},
		{"a second JSON encoder", func(pkgs map[string]*listed) { addImport(pkgs, "ui", "encoding/json") },
			"ui imports encoding/json: one JSON text encoder"},
		{"flags below cmd", func(pkgs map[string]*listed) { addImport(pkgs, "gateway", "flag") },
			"gateway imports flag: nothing below cmd/ reads flags"},
		{"a module the floor does not allow", func(pkgs map[string]*listed) { addImport(pkgs, "header", "go.etcd.io/bbolt") },
			"header (floor 2) imports go.etcd.io/bbolt, which floor 2's outside list does not allow"},
		{"a module limited to another package", func(pkgs map[string]*listed) { addImport(pkgs, "transcript", "go.etcd.io/bbolt") },
			"transcript (floor 4) imports go.etcd.io/bbolt"},
		{"an unapproved test dependency", func(pkgs map[string]*listed) {
			pkgs["rebuild"].XTestImports = append(pkgs["rebuild"].XTestImports, "github.com/stretchr/testify/require")
		}, "tests of rebuild import github.com/stretchr/testify/require, which is not an approved dependency"},
		{"testing in a library", func(pkgs map[string]*listed) { addImport(pkgs, "loop", "testing") },
			"loop imports testing outside its tests"},
		{"test support in a library", func(pkgs map[string]*listed) { addImport(pkgs, "verify", modulePath+"/internal/pgtest") },
			"verify imports internal/pgtest, which is test support"},
		{"a stale on", func(pkgs map[string]*listed) {
			p := pkgs["eventlog/boltlog"]
			p.Imports = slices.DeleteFunc(p.Imports, func(s string) bool { return s == modulePath+"/eventlog/wal" })
		}, "eventlog/boltlog: on names eventlog/wal, which it does not import"},
		{"a stale outside entry", func(pkgs map[string]*listed) {
			p := pkgs["eventlog/pglog"]
			p.Imports = slices.DeleteFunc(p.Imports, func(s string) bool { return under(s, "github.com/jackc/pgx/v5") })
		}, "floor 4's outside list allows github.com/jackc/pgx/v5, which none of its packages imports"},
	}
	golden := goldenText(base)
	for _, tt := range []struct {
		name, want string
		sabotage   func(pkgs map[string]*listed)
	}{
		{"golden: a new dependency", "new outside package github.com/stretchr/testify/require", func(pkgs map[string]*listed) {
			addImport(pkgs, "cmd/logtool", "github.com/stretchr/testify/require")
		}},
		{"golden: a dependency gone", "outside package github.com/spf13/cobra is no longer linked", func(pkgs map[string]*listed) {
			for _, p := range pkgs {
				p.Deps = slices.DeleteFunc(p.Deps, func(s string) bool { return s == "github.com/spf13/cobra" })
			}
		}},
	} {
		pkgs := clonePackages(base)
		tt.sabotage(pkgs)
		if got := goldenProblems(golden, goldenText(pkgs)); !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, tt.want) }) {
			t.Errorf("%s: no problem names %q; got %q", tt.name, tt.want, got)
		}
	}
	if got := floorProblems(clonePackages(base)); len(got) != 0 {
		t.Fatalf("the module as it is breaks the floors: %q", got)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pkgs := clonePackages(base)
			tt.sabotage(pkgs)
			got := floorProblems(pkgs)
			for _, p := range got {
				if strings.Contains(p, tt.want) {
					return
				}
			}
			t.Errorf("no problem names %q; got %q", tt.want, got)
		})
	}
}

func clonePackages(pkgs map[string]*listed) map[string]*listed {
	out := make(map[string]*listed, len(pkgs))
	for k, p := range pkgs {
		c := *p
		c.Imports, c.Deps = slices.Clone(p.Imports), slices.Clone(p.Deps)
		c.TestImports, c.XTestImports = slices.Clone(p.TestImports), slices.Clone(p.XTestImports)
		out[k] = &c
	}
	return out
}

// addImport makes from import path directly, and everything that depends
// on from depend on path and its dependencies.
func addImport(pkgs map[string]*listed, from, path string) {
	deps := []string{path}
	if rel, ok := inModule(path); ok {
		deps = append(deps, pkgs[rel].Deps...)
	}
	fromPath := pkgs[from].ImportPath
	for _, p := range pkgs {
		if p.ImportPath == fromPath {
			p.Imports = append(p.Imports, path)
		}
		if p.ImportPath == fromPath || slices.Contains(p.Deps, fromPath) {
			p.Deps = append(p.Deps, deps...)
		}
	}
}
