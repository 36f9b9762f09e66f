package deptest

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Check reports, as errors of t, every import of the non-test Go files in
// dir that banned names (with its reason), and every import of a module
// (a path whose first element has a dot) that allowed does not list.
// Standard-library imports not banned pass, and so do the packages of
// everywhere.
func Check(t testing.TB, dir string, allowed, banned map[string]string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
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
			if _, ok := everywhere[path]; ok {
				continue
			}
			if _, ok := allowed[path]; !ok && strings.Contains(strings.SplitN(path, "/", 2)[0], ".") {
				t.Errorf("%s imports %s, which is not an approved dependency", name, path)
			}
		}
	}
}

// everywhere are the module's packages that every floor may import, with
// their reasons: they sit below codec and import nothing of the module.
var everywhere = map[string]string{
	"github.com/sessionlog/sessionlog/internal/errclass": "error classes that both errors packages see",
}
