package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTB records a skip or a failure and stops the call, as testing.T
// does.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

type stopped struct{}

func (f *fakeTB) Skip(args ...any) { f.skipped = fmt.Sprint(args...); panic(stopped{}) }
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	panic(stopped{})
}

func call(t *testing.T, fn func(testing.TB)) *fakeTB {
	f := &fakeTB{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(stopped); !ok {
					panic(r)
				}
			}
		}()
		fn(f)
	}()
	return f
}

// TestLayouts builds a repository and a shared tree beside it in a temp
// dir, and checks what Cases does with each layout: skip only when
// ../shared is absent; fail when it is present but the corpus is missing,
// empty or re-laid out.
func TestLayouts(t *testing.T) {
	write := func(t *testing.T, root, rel, data string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const header = "name\tera\torigin\texpect\tdetail\n"
	for _, c := range []struct {
		name   string
		files  map[string]string // under the temp dir; repo/go.mod is always there
		skip   string
		fail   string
		nCases int
	}{
		{name: "absent", skip: "../shared is absent"},
		{name: "moved", files: map[string]string{"shared/testdata/dsh/ORIGIN.md": "x"}, fail: "has no testdata/dsh/cases directory"},
		{name: "no index", files: map[string]string{"shared/testdata/dsh/cases/a/session.jsonl": "{}"}, fail: "no readable INDEX.tsv"},
		{name: "empty", files: map[string]string{"shared/testdata/dsh/cases/INDEX.tsv": header}, fail: "lists no cases"},
		{name: "re-laid out", files: map[string]string{"shared/testdata/dsh/cases/INDEX.tsv": header + "a\tr\n",
			"shared/testdata/dsh/cases/a/log.jsonl": "{}"}, fail: "case a, listed in INDEX.tsv, has no session.jsonl"},
		{name: "ok", files: map[string]string{"shared/testdata/dsh/cases/INDEX.tsv": header + "a\tr\nb\tr\n",
			"shared/testdata/dsh/cases/a/session.jsonl": "{}", "shared/testdata/dsh/cases/b/session.jsonl": "{}"}, nCases: 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "repo/go.mod", "module x\n")
			for rel, data := range c.files {
				write(t, dir, rel, data)
			}
			t.Chdir(filepath.Join(dir, "repo"))
			var got []string
			f := call(t, func(tb testing.TB) { got = Files(tb) })
			switch {
			case c.skip != "" && !strings.Contains(f.skipped, c.skip):
				t.Errorf("skipped %q, failed %q; want a skip with %q", f.skipped, f.failed, c.skip)
			case c.fail != "" && !strings.Contains(f.failed, c.fail):
				t.Errorf("skipped %q, failed %q; want a failure with %q", f.skipped, f.failed, c.fail)
			case c.skip == "" && c.fail == "" && (f.skipped != "" || f.failed != "" || len(got) != c.nCases):
				t.Errorf("skipped %q, failed %q, %d files; want %d", f.skipped, f.failed, len(got), c.nCases)
			}
		})
	}
}
