package salvage_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDeps keeps salvage's direct imports to the standard library, the
// engine's own packages and the approved modules it needs (style R28).
func TestDeps(t *testing.T) {
	allowed := map[string]string{
		"github.com/cockroachdb/errors":             "error classes (SPEC §11)",
		"go.etcd.io/bbolt":                          "File reads the store file directly",
		"go.etcd.io/bbolt/errors":                   "bbolt's lock timeout",
		"github.com/vmihailenco/msgpack/v5":         "engine records (head, format) are typed msgpack",
		"github.com/sessionlog/sessionlog/codec":    "records and events",
		"github.com/sessionlog/sessionlog/eventlog": "the store",
		"github.com/sessionlog/sessionlog/rebuild":  "the fold that decides what still verifies",
	}
	banned := map[string]string{
		"testing":                "test-only code in production",
		"github.com/spf13/cobra": "CLI only",
		"encoding/json":          "sorts map keys; events are transcoded by codec",
		"net/http":               "salvage does no networking",
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if why, ok := banned[path]; ok {
				t.Errorf("%s imports %s: %s", name, path, why)
				continue
			}
			if _, ok := allowed[path]; !ok && strings.Contains(strings.SplitN(path, "/", 2)[0], ".") {
				t.Errorf("%s imports %s, which is not an approved dependency", name, path)
			}
		}
	}
}
