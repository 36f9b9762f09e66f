package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
)

// The broken-file corpus (testdata/broken): import files damaged or wrong
// in one way each, imported through run. Every refusal must exit 1, name
// the file, the line and (for events) the seq on stderr, carry the class
// docs/rules.md#error-classes gives it, and leave nothing imported.

// brokenImport is the outcome of importing one file into a fresh store.
type brokenImport struct {
	code           int
	stdout, stderr string
	// err is importFile's error for the same file in another fresh store,
	// so that its class can be checked.
	err error
	// sessions are the sessions the store holds after the run.
	sessions []string
}

// importBroken imports path (with more args, e.g. --strict) through run,
// then again through importFile for the error value.
func importBroken(t *testing.T, path string, args ...string) brokenImport {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "run.db")
	var stdout, stderr bytes.Buffer
	e := env{stdin: strings.NewReader(""), getenv: func(string) string { return "" },
		now: func() time.Time { return testNow }, random: strings.NewReader(strings.Repeat("r", 64))}
	argv := append([]string{"--db", db, "import"}, args...)
	code := runEnv(ctx, e, append(argv, path), &stdout, &stderr)
	out := brokenImport{code: code, stdout: stdout.String(), stderr: stderr.String()}
	if l, err := boltlog.Open(db, &eventlog.Options{ReadOnly: true}, nil); err == nil {
		out.sessions, err = l.SessionIDs(ctx)
		if cerr := l.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}

	g := &globalOptions{env: e, db: filepath.Join(dir, "direct.db"), lockTimeout: time.Second}
	st, err := g.open(openCreate)
	if err != nil {
		t.Fatal(err)
	}
	strict := len(args) > 0 && args[0] == "--strict"
	_, _, out.err = importFile(ctx, st, importOptions{g: g, strict: strict}, path, io.Discard)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkRefused checks a refusal: exit 1, stderr naming the file and the
// given places ("line N", "seq N"), the class, and an empty store.
func checkRefused(t *testing.T, got brokenImport, path string, class error, names ...string) {
	t.Helper()
	if got.code != exitFailure || got.stdout != "" {
		t.Errorf("import %s: exit %d, stdout %q; want exit 1 and nothing on stdout", path, got.code, got.stdout)
	}
	msg := strings.TrimSpace(got.stderr)
	for _, want := range append([]string{"logtool: import " + path + ":"}, names...) {
		if !strings.Contains(msg, want) {
			t.Errorf("import %s: stderr %q does not say %q", path, msg, want)
		}
	}
	if !errors.Is(got.err, class) {
		t.Errorf("import %s: error %v is not of class %v", path, got.err, class)
	}
	if len(got.sessions) != 0 {
		t.Errorf("import %s: refused, yet the store holds %v", path, got.sessions)
	}
}

// TestBrokenFiles imports each damaged fixture of testdata/broken.
func TestBrokenFiles(t *testing.T) {
	tests := []struct {
		file  string
		class error
		names []string // what stderr must name besides the file
	}{
		// Damage at or before the last turn/end (docs/format.md#torn-tails): corruption.
		{"gap.jsonl", codec.ErrCorrupt, []string{"line 3", "seq 1", "seq 2 where 1 was expected"}},
		{"repeat.jsonl", codec.ErrCorrupt, []string{"line 4", "seq 2", "seq 1 where 2 was expected"}},
		{"turn-end-gap.jsonl", codec.ErrCorrupt, []string{"line 3", "seq 1", "seq 5 where 1 was expected"}},
		{"truncated.jsonl", codec.ErrCorrupt, []string{"line 3", "seq 1", "before the turn/end on line 4"}},
		{"not-json.jsonl", codec.ErrCorrupt, []string{"line 3", "seq 1", "before the turn/end on line 4"}},
		{"nul.jsonl", codec.ErrCorrupt, []string{"line 3", "seq 1", "before the turn/end on line 4"}},
		{"nul-between.jsonl", codec.ErrCorrupt, []string{"line 3", "seq 1", "before the turn/end on line 4"}},
		{"utf8.jsonl", codec.ErrCorrupt, []string{"line 3", "seq 1", "before the turn/end on line 4"}},
		{"utf8-surrogate.jsonl", codec.ErrCorrupt, []string{"line 3", "seq 1", "before the turn/end on line 4"}},
		// Well-formed JSON that breaks a rule (docs/format.md#json-text): invalid.
		{"dup-key.jsonl", codec.ErrInvalid, []string{"line 3", "seq 1", "duplicate"}},
		{"dup-key-envelope.jsonl", codec.ErrInvalid, []string{"line 3", "seq 1", "duplicate"}},
		{"dup-key-header.jsonl", codec.ErrInvalid, []string{"line 1", "duplicate"}},
		{"deep.jsonl", codec.ErrInvalid, []string{"line 3", "seq 1", "nesting deeper than 512"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "broken", tt.file)
			got := importBroken(t, path)
			checkRefused(t, got, path, tt.class, tt.names...)
			t.Logf("%s", strings.TrimSpace(got.stderr))
		})
	}
}

// TestBrokenAccepted: what the rules accept — exactly 512 levels of
// nesting, and integers beyond ±2^53, which are rounded to the nearest
// float64 as JSON.parse does and exported as JSON.stringify prints them.
func TestBrokenAccepted(t *testing.T) {
	tests := []struct {
		file, id string
		events   int
		export   string // the expected export; "" means the file itself
	}{
		{"deep-512.jsonl", "deep-512-1", 3, ""},
		{"bigint.jsonl", "bigint-1", 3, "bigint.export.jsonl"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "broken", tt.file)
			db := filepath.Join(t.TempDir(), "sessions.db")
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), []string{"--db", db, "import", path}, &stdout, &stderr); code != exitOK {
				t.Fatalf("import %s: exit %d: %s", path, code, stderr.String())
			}
			if want := fmt.Sprintf("%s %d\n", tt.id, tt.events); stdout.String() != want {
				t.Errorf("import %s: stdout %q, want %q", path, stdout.String(), want)
			}
			stdout.Reset()
			if code := run(context.Background(), []string{"--db", db, "export", tt.id}, &stdout, &stderr); code != exitOK {
				t.Fatalf("export %s: exit %d: %s", tt.id, code, stderr.String())
			}
			want := path
			if tt.export != "" {
				want = filepath.Join("testdata", "broken", tt.export)
			}
			b, err := os.ReadFile(want)
			if err != nil {
				t.Fatal(err)
			}
			if stdout.String() != string(b) {
				t.Errorf("export %s =\n%s\nwant (%s)\n%s", tt.id, stdout.String(), want, b)
			}
		})
	}
}

// TestBrokenTornTail: a torn tail after the last turn/end (a damaged line,
// then a last line without its newline) is dropped and reported on stderr,
// and the events before it are imported; --strict refuses the file.
func TestBrokenTornTail(t *testing.T) {
	path := filepath.Join("testdata", "broken", "torn.jsonl")
	got := importBroken(t, path)
	if got.code != exitOK || got.stdout != "torn-tail-1 3\n" {
		t.Fatalf("import %s: exit %d, stdout %q, stderr %q; want exit 0 and 3 events", path, got.code, got.stdout, got.stderr)
	}
	want := "logtool: warning: " + path + ": dropped a torn tail from line 5 (3 lines, "
	if !strings.HasPrefix(got.stderr, want) || !strings.Contains(got.stderr, "imported the 3 events before it") {
		t.Errorf("import %s: stderr %q, want it to start %q and say what was kept", path, got.stderr, want)
	}
	if got.err != nil || len(got.sessions) != 1 {
		t.Errorf("import %s: error %v, sessions %v", path, got.err, got.sessions)
	}

	strict := importBroken(t, path, "--strict")
	checkRefused(t, strict, path, ErrTornTail, "line 5", "after seq 2")
}

// brokenField is an engine-read field of a line of base.jsonl: the key and
// its value as written there, and wrong values for it. Each wrong value
// (and an explicit null) replaces the value in a copy of the file, which
// must then be refused as invalid.
type brokenField struct {
	line  int // 1-based line of base.jsonl
	key   string
	value string   // as written, following "key":
	wrong []string // values of the wrong type or shape
}

// brokenFields are the fields the engine reads (package codec's views,
// package header's snapshot and delta), one line of base.jsonl each.
var brokenFields = []brokenField{
	// The header line (docs/format.md#header-line).
	{1, "type", `"session"`, []string{`1`, `"sessions"`}},
	{1, "version", `0`, []string{`"0"`, `false`, `1`}},
	{1, "id", `"base-1"`, []string{`1`, `""`, `["base-1"]`}},
	{1, "createdAt", `1767225600000`, []string{`"1767225600000"`}},
	{1, "cwd", `"/home/dev"`, []string{`1`}},
	{1, "parentSession", `"root-0"`, []string{`{}`}},
	{1, "seedLength", `0`, []string{`"0"`, `-1`, `0.5`}},
	// The envelope (docs/format.md#envelope).
	{2, "type", `"turn/start"`, []string{`7`}},
	{2, "seq", `0`, []string{`"0"`, `-1`, `0.5`}},
	{2, "time", `1767225600001`, []string{`"now"`}},
	{2, "data", `{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}`, []string{`[1]`, `"x"`}},
	{3, "surfaceOp", `"append"`, []string{`"prepend"`, `1`, `["append"]`}},
	{17, "surfaceOp", `{"op":"replace","start":1,"end":2}`, []string{`{"op":"replace","start":"1","end":2}`, `{"op":"swap","start":1,"end":2}`, `{"op":"replace","start":1}`}},
	{17, "sourceEventSeqs", `[13,14,1,2]`, []string{`{"0":13}`, `[13,14,"1",2]`, `[13,14,1,2,2]`, `[]`}},
	// Turns and steps (docs/format.md#event-types).
	{2, "turn", `1`, []string{`"1"`, `1.5`, `-1`}},
	{20, "turn", `1`, []string{`true`}},
	{20, "reason", `{"kind":"completed"}`, []string{`"completed"`, `{"kind":1}`, `{}`}},
	{5, "step", `1`, []string{`"1"`}},
	{12, "turn", `1`, []string{`[1]`}},
	// Messages and content (docs/format.md#event-types, docs/format.md#content-blocks).
	{3, "content", `[{"type":"text","text":"hi"}]`, []string{`"hi"`, `[{"type":"text","text":1}]`, `[{"text":"hi"}]`, `["hi"]`}},
	{3, "source", `{"kind":"user"}`, []string{`"user"`, `{"kind":1}`, `{}`}},
	{4, "source", `{"kind":"plugin","plugin":"git"}`, []string{`{"kind":"plugin","plugin":7}`}},
	{4, "envelope", `"raw"`, []string{`"wrapped"`, `0`}},
	{11, "turn", `1`, []string{`"1"`}},
	{19, "content", `[{"type":"text","text":"no"}]`, []string{`{}`}},
	{8, "chunk", `{"type":"text-delta","index":0,"text":"ok"}`, []string{`"text-delta"`, `{"type":1,"index":0}`, `{"type":"text-delta","index":0,"text":5}`, `{"index":0}`}},
	{9, "content", `[{"type":"tool-call","id":"c1","name":"ls","arguments":"{}"}]`, []string{`[{"type":"tool-call","id":1,"name":"ls","arguments":"{}"}]`, `[{"type":"tool-call","id":"c1","name":"ls","arguments":{}}]`}},
	{9, "provenance", `{"provider":"p","model":"m"}`, []string{`"p/m"`}},
	{9, "usage", `{"inputTokens":1,"outputTokens":2}`, []string{`3`}},
	{9, "sourceEventSeqs", `[6]`, []string{`[9]`, `6`}},
	{10, "callId", `"c1"`, []string{`1`}},
	{10, "name", `"ls"`, []string{`["ls"]`}},
	{10, "arguments", `"{}"`, []string{`{}`}},
	{11, "isError", `false`, []string{`"false"`, `0`}},
	{11, "callId", `"c1"`, []string{`false`}},
	{11, "content", `[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"a"}],"isError":true}]`, []string{`[{"type":"tool-result","toolCallId":2,"content":[],"isError":true}]`, `[{"type":"tool-result","toolCallId":"c1","content":[],"isError":"yes"}]`}},
	{11, "meta", `{"ms":1}`, nil},
	{11, "error", `{"name":"E","code":"e"}`, nil},
	// Headers (docs/rules.md#header).
	{6, "header", `{"config":{"provider":"p","model":"m","temperature":0.5,"maxTokens":100,"stop":["x"]},"system":"s","tools":[{"name":"ls","description":"d","parameters":{"type":"object"}}],"messagePrefix":[{"role":"user","content":[{"type":"text","text":"pre"}]}]}`, []string{`[]`, `"h"`}},
	{6, "reason", `"initial"`, []string{`"first"`, `0`}},
	{6, "config", `{"provider":"p","model":"m","temperature":0.5,"maxTokens":100,"stop":["x"]}`, []string{`[]`}},
	{6, "model", `"m"`, []string{`1`}},
	{6, "provider", `"p"`, []string{`{}`}},
	{6, "temperature", `0.5`, []string{`"0.5"`}},
	{6, "maxTokens", `100`, []string{`"100"`, `1.5`}},
	{6, "stop", `["x"]`, []string{`"x"`, `[1]`}},
	{6, "system", `"s"`, []string{`["s"]`}},
	{6, "tools", `[{"name":"ls","description":"d","parameters":{"type":"object"}}]`, []string{`{}`, `[{"name":1,"description":"d","parameters":{}}]`, `["ls"]`}},
	{6, "messagePrefix", `[{"role":"user","content":[{"type":"text","text":"pre"}]}]`, []string{`{}`, `[{"role":1,"content":[]}]`, `[{"role":"user","content":"pre"}]`}},
	{7, "sha256", `"f53991811d1078a4d9321799b10f1202216eff4b3bda2d619f45e5c72e20a24d"`, []string{`"F53991811D1078A4D9321799B10F1202216EFF4B3BDA2D619F45E5C72E20A24D"`, `"f539"`, `1`}},
	{14, "system", `{"keepStart":1,"keepEnd":0,"insert":["u"]}`, []string{`"u"`, `{"keepStart":"1","keepEnd":0,"insert":["u"]}`, `{"keepStart":1,"keepEnd":0,"insert":"u"}`}},
	{14, "tools", `{"added":[{"name":"cat","description":"c","parameters":{}}],"removed":["ls"],"changed":[]}`, []string{`[]`, `{"added":{},"removed":["ls"],"changed":[]}`, `{"added":[],"removed":[1],"changed":[]}`}},
	{14, "config", `{"provider":"p","model":"m2"}`, []string{`"m2"`, `{"provider":"p","model":2}`}},
	{14, "messagePrefix", `[]`, []string{`{}`, `[1]`}},
	// Compaction (docs/rules.md#compaction).
	{15, "turn", `1`, []string{`"1"`}},
	{16, "summary", `[{"type":"text","text":"sum"}]`, []string{`"sum"`, `[{"type":"text","text":[]}]`}},
	{18, "error", `"none"`, nil},
}

// TestBrokenFieldTypes refuses, as invalid, a copy of base.jsonl with one
// engine-read field of the wrong type, and one with it set to an explicit
// null, for every field of brokenFields; the error names file, line and
// seq. base.jsonl itself imports, exports byte-identical, and verifies.
func TestBrokenFieldTypes(t *testing.T) {
	base := filepath.Join("testdata", "broken", "base.jsonl")
	raw, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	t.Run("base", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "sessions.db")
		for _, args := range [][]string{{"import", base}, {"verify", "--strict"}, {"export", "base-1"}} {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), append([]string{"--db", db}, args...), &stdout, &stderr); code != exitOK {
				t.Fatalf("%v: exit %d: %s%s", args, code, stdout.String(), stderr.String())
			}
			if args[0] == "export" && stdout.String() != string(raw) {
				t.Errorf("export of base.jsonl differs from it:\n%s", stdout.String())
			}
		}
	})
	dir := t.TempDir()
	n := 0
	for _, f := range brokenFields {
		old := fmt.Sprintf("%q:%s", f.key, f.value)
		line := lines[f.line-1]
		if strings.Count(line, old) != 1 {
			t.Fatalf("line %d of base.jsonl holds %q %d times, want once", f.line, old, strings.Count(line, old))
		}
		for _, v := range append(append([]string(nil), f.wrong...), "null") {
			n++
			name := fmt.Sprintf("%d-%s=%s", f.line, f.key, v)
			t.Run(name, func(t *testing.T) {
				path := filepath.Join(dir, fmt.Sprintf("case-%d.jsonl", n))
				mutated := append(append(append([]string(nil), lines[:f.line-1]...),
					strings.Replace(line, old, fmt.Sprintf("%q:%s", f.key, v), 1)), lines[f.line:]...)
				if err := os.WriteFile(path, []byte(strings.Join(mutated, "")), 0o600); err != nil {
					t.Fatal(err)
				}
				names := []string{fmt.Sprintf("line %d", f.line)}
				if f.line > 1 {
					names = append(names, fmt.Sprintf("seq %d", f.line-2))
				}
				got := importBroken(t, path)
				class := codec.ErrInvalid
				if f.line == 1 && f.key == "version" && v == "1" {
					class = codec.ErrUnsupported // docs/rules.md#error-classes: a version other than 0
				}
				checkRefused(t, got, path, class, names...)
			})
		}
	}
	t.Logf("%d mutations of %d fields", n, len(brokenFields))
}

// TestBrokenLongLine imports a file whose one event line is 100 MB, above
// the 64 MiB line limit, generated into a temp dir: it is refused as
// invalid, names the line and seq, and imports nothing.
func TestBrokenLongLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 100 MB file")
	}
	path := writeLongLine(t)
	got := importBroken(t, path)
	checkRefused(t, got, path, codec.ErrInvalid, "line 3", "seq 1", "longer than 67108864 bytes")
}

// TestBrokenLongLineMemory imports a line of 100 MiB and one of 300 MiB,
// both over the 64 MiB line limit, each in a child process (this test
// binary run again), and checks their peak resident sets, from the
// kernel: codec.Scanner streams past an over-long line holding at most the
// limit, so the peak does not grow with the line, and stays near the
// limit (the race detector's shadow memory adds up to four times the
// limit).
func TestBrokenLongLineMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes files of 100 and 300 MiB")
	}
	const limit = 64 << 20
	peak := func(size int) int64 {
		path := writeLongLineOf(t, size)
		cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenLongLineChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), envLongLine+"="+path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "long-line-child: refused") {
			t.Fatalf("child did not import:\n%s", out)
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		p := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
		t.Logf("refusing a %d MiB line: peak resident set %d MiB", size>>20, p>>20)
		return p
	}
	small, large := peak(longLine), peak(3*longLine)
	if grew := large - small; grew > 32<<20 {
		t.Errorf("the peak grew by %d MiB from a %d MiB line to a %d MiB one: the scanner holds more than the limit",
			grew>>20, longLine>>20, 3*longLine>>20)
	}
	// The bounds leave room for a garbage collector that lags behind on
	// a loaded machine (CI measured 422 MiB under -race with every package
	// testing at once, 227 MiB alone): one refused block of the limit may
	// still be garbage when the next is filled. They stay far below what
	// holding the line would cost (300 MiB, and four times more shadow
	// under the race detector), and the growth check above is exact.
	bound := int64(2*limit + 48<<20)
	if raceBuild {
		bound = 7*limit + 64<<20
	}
	if large > bound {
		t.Errorf("refusing a %d MiB line peaked at %d MiB resident, want at most %d MiB (the %d MiB limit and the runtime)",
			3*longLine>>20, large>>20, bound>>20, limit>>20)
	}
}

// longLine is the size of the long line.
const longLine = 100 << 20

// writeLongLine writes a file whose third line, event seq 1, is longLine
// bytes, streaming it into a temp dir.
func writeLongLine(t *testing.T) string {
	t.Helper()
	return writeLongLineOf(t, longLine)
}

// writeLongLineOf writes a file whose third line, event seq 1, is size
// bytes, streaming it into a temp dir.
func writeLongLineOf(t *testing.T, size int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "long.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, `{"type":"session","version":0,"id":"long-1","createdAt":1}`)
	fmt.Fprintln(w, `{"type":"turn/start","seq":0,"time":2,"data":{"turn":1}}`)
	head := `{"type":"user/message","seq":1,"time":3,"data":{"content":[{"type":"text","text":"`
	tail := `"}],"source":{"kind":"user"}},"surfaceOp":"append"}`
	w.WriteString(head)
	chunk := strings.Repeat("0123456789abcdef", 4096)
	for n := len(head) + len(tail); n < size; n += len(chunk) {
		w.WriteString(chunk[:min(len(chunk), size-n)])
	}
	fmt.Fprintln(w, tail)
	fmt.Fprintln(w, `{"type":"turn/end","seq":2,"time":4,"data":{"turn":1,"reason":{"kind":"completed"}}}`)
	if err := errors.CombineErrors(w.Flush(), f.Close()); err != nil {
		t.Fatal(err)
	}
	return path
}

// envLongLine names the file TestBrokenLongLineChild imports.
const envLongLine = "LOGTOOL_TEST_LONG_LINE"

// TestBrokenLongLineChild is the child process of TestBrokenLongLine: it
// imports the file named by $LOGTOOL_TEST_LONG_LINE into a new store, so
// that the parent can read the peak memory of exactly one import.
func TestBrokenLongLineChild(t *testing.T) {
	path := os.Getenv(envLongLine)
	if path == "" {
		t.Skip("the child process of TestBrokenLongLine")
	}
	g := &globalOptions{env: processEnv(), db: filepath.Join(t.TempDir(), "mem.db"), lockTimeout: time.Second}
	st, err := g.open(openCreate)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, _, err = importFile(context.Background(), st, importOptions{g: g}, path, io.Discard)
	if !errors.Is(err, codec.ErrInvalid) {
		t.Fatalf("import %s = %v, want ErrInvalid", path, err)
	}
	fmt.Println("long-line-child: refused")
}
