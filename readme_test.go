package sessionlog

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeLayout checks that README.md's Layout table names every
// package directory (as `dir/`, or a nested helper package by its name
// in backticks) and every script under .ci, so a newcomer reading it
// finds every part of the repository.
func TestReadmeLayout(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(readme), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no ## Layout section")
	}
	layout, _, _ = strings.Cut(layout, "\n## ")
	seen := map[string]bool{}
	var dirs []string
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if dir := filepath.ToSlash(filepath.Dir(path)); dir != "." && !seen[dir] &&
			strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			seen[dir] = true
			dirs = append(dirs, dir)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := filepath.Glob(".ci/*.sh")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 20 || len(scripts) == 0 {
		t.Fatalf("found %d package directories and %d .ci scripts; run the test from the repository root", len(dirs), len(scripts))
	}
	for _, dir := range dirs {
		if !strings.Contains(layout, "`"+dir+"/`") && !strings.Contains(layout, "`"+filepath.Base(dir)+"`") {
			t.Errorf("README.md's Layout does not list %s/", dir)
		}
	}
	for _, s := range append(scripts, ".ci/run") {
		if !strings.Contains(layout, "`"+s+"`") {
			t.Errorf("README.md's Layout does not list %s", s)
		}
	}
}
