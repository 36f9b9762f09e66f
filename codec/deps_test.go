package codec_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDeps keeps codec's direct imports to the standard library and
// cockroachdb/errors (style R28): codec is the bottom of the engine's
// import graph, every module dependency is an embedding cost, and
// encoding/json or a msgpack library would break byte-exact transcoding
// (SPEC §2.2, §2.7).
func TestDeps(t *testing.T) {
	allowed := map[string]string{
		"github.com/cockroachdb/errors": "error classes (SPEC §11)",
	}
	banned := map[string]string{
		"testing":                           "test-only code in production",
		"encoding/json":                     "escapes <>&, U+2028 and lone surrogates, sorts map keys",
		"github.com/vmihailenco/msgpack/v5": "dynamic type reconstruction; the storage form is written by hand",
		"go.etcd.io/bbolt":                  "codec knows nothing of storage",
		"github.com/spf13/cobra":            "CLI only",
		"time":                              "stored times are JSON numbers; codec reads no clock",
		"math/rand":                         "codec is deterministic",
		"math/rand/v2":                      "codec is deterministic",
		"reflect":                           "no dynamic type reconstruction (SPEC §8.1)",
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
