package sessionlog

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestPackageDocs checks that every package of the repository has exactly
// one package doc comment, in doc.go, opening "Package <name> " (or
// "Command <name> " for a command). Test files, testdata and hidden
// directories are skipped; so is a directory with no non-test Go file.
func TestPackageDocs(t *testing.T) {
	dirs := map[string][]string{} // dir -> its non-test .go files
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			dirs[filepath.Dir(path)] = append(dirs[filepath.Dir(path)], path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("found no Go packages; run the test from the repository root")
	}
	names := make([]string, 0, len(dirs))
	for dir := range dirs {
		names = append(names, dir)
	}
	sort.Strings(names)
	for _, dir := range names {
		t.Run(filepath.ToSlash(dir), func(t *testing.T) {
			problems, err := packageDocProblems(dir, dirs[dir])
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				t.Error(p)
			}
		})
	}
}

// packageDocProblems returns what is wrong with the package doc of the
// package in dir made of files (its non-test Go files).
func packageDocProblems(dir string, files []string) ([]string, error) {
	fset := token.NewFileSet()
	var docFiles []string
	var pkg string
	var doc *ast.CommentGroup
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return nil, err
		}
		pkg = f.Name.Name
		if f.Doc != nil {
			docFiles = append(docFiles, filepath.Base(path))
			if filepath.Base(path) == "doc.go" {
				doc = f.Doc
			}
		}
	}
	var problems []string
	switch {
	case len(docFiles) == 0:
		return []string{dir + ": no package doc; want one in doc.go"}, nil
	case len(docFiles) > 1:
		problems = append(problems, dir+": package doc in "+strings.Join(docFiles, ", ")+"; want it only in doc.go")
	case doc == nil:
		problems = append(problems, dir+": package doc in "+docFiles[0]+"; want it in doc.go")
	}
	if doc == nil {
		return problems, nil
	}
	want := "Package " + pkg + " "
	if pkg == "main" {
		want = "Command " + filepath.Base(dir) + " "
	}
	if text := doc.Text(); !strings.HasPrefix(text, want) {
		first, _, _ := strings.Cut(text, "\n")
		problems = append(problems, fmt.Sprintf(
			"%s: doc.go's package doc opens %q; want %q (has a license header or a stray comment become the doc?)",
			dir, first, want))
	}
	return problems, nil
}

func TestPackageDocProblems(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  int // number of problems
	}{
		{"good", map[string]string{"doc.go": "// Package p does things.\npackage p\n", "p.go": "package p\n"}, 0},
		{"good command", map[string]string{"doc.go": "// Command x does things.\npackage main\n"}, 0},
		{"missing", map[string]string{"p.go": "package p\n"}, 1},
		{"not in doc.go", map[string]string{"p.go": "// Package p does things.\npackage p\n"}, 1},
		{"twice", map[string]string{"doc.go": "// Package p does things.\npackage p\n", "p.go": "// Package p again.\npackage p\n"}, 1},
		{"license header", map[string]string{"doc.go": "// Copyright 2026 someone.\npackage p\n"}, 1},
		{"lower case", map[string]string{"doc.go": "// package p does things.\npackage p\n"}, 1},
		{"command named as package", map[string]string{"doc.go": "// Package main does things.\npackage main\n"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "x")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			var files []string
			for name, text := range tt.files {
				path := filepath.Join(dir, name)
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				files = append(files, path)
			}
			sort.Strings(files)
			got, err := packageDocProblems(dir, files)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.want {
				t.Errorf("packageDocProblems = %q, want %d problems", got, tt.want)
			}
		})
	}
}
