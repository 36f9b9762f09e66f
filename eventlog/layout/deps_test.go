package layout_test

import (
	"go/build"
	"testing"
)

// TestDeps: the layout is names and types only; it imports nothing but
// the standard library, so both the store and salvage can share it.
func TestDeps(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if imp != "encoding/binary" && imp != "math" {
			t.Errorf("layout imports %s", imp)
		}
	}
}
