package errclass_test

import (
	stderrors "errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

var (
	errClass = errors.New("errclass: a class")
	errOther = errors.New("errclass: another class")
	// errSub is a class marked with errClass: its errors are errClass's too.
	errSub = errclass.Mark(errors.New("errclass: a narrower class"), errClass)
)

// TestBothLibraries checks that both errors packages see a class through
// any wrapping cockroachdb/errors adds, and neither sees a class the error
// does not have or one a barrier hides.
func TestBothLibraries(t *testing.T) {
	base := errclass.Mark(errors.Newf("errclass: the page %d is damaged", errors.Safe(7)), errClass)
	tests := []struct {
		name  string
		err   error
		class error
		want  bool
	}{
		{"marked", base, errClass, true},
		{"wrapped", errors.Wrap(base, "read"), errClass, true},
		{"hint", errors.WithHint(errors.Wrapf(base, "open %s", "x"), "retry"), errClass, true},
		{"fmt wrap", fmt.Errorf("outer: %w", base), errClass, true},
		{"other class", base, errOther, false},
		{"twice", errclass.Mark(base, errOther), errOther, true},
		{"twice, first", errclass.Mark(base, errOther), errClass, true},
		{"narrower", errclass.Mark(errors.New("errclass: x"), errSub), errClass, true},
		{"narrower itself", errclass.Mark(errors.New("errclass: x"), errSub), errSub, true},
		{"behind a barrier", errors.Handled(base), errClass, false},
		{"reclassified", errclass.Mark(errors.Handled(base), errOther), errClass, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stderrors.Is(tt.err, tt.class); got != tt.want {
				t.Errorf("errors.Is (standard library) = %v, want %v", got, tt.want)
			}
			if got := errors.Is(tt.err, tt.class); got != tt.want {
				t.Errorf("errors.Is (cockroachdb) = %v, want %v", got, tt.want)
			}
		})
	}
	if errclass.Mark(nil, errClass) != nil {
		t.Error("Mark(nil) is not nil")
	}
}

// TestText checks that the mark adds no text, keeps the redaction of the
// cause's message, and keeps its stack for %+v.
func TestText(t *testing.T) {
	err := errors.Wrap(errclass.Mark(errors.Newf("errclass: session %q is %s",
		errors.Safe("s1"), "secret"), errClass), "open")
	if got, want := err.Error(), `open: errclass: session "s1" is secret`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := errors.Redact(err), `open: errclass: session "s1" is ×`; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	if v := fmt.Sprintf("%+v", err); !strings.Contains(v, "errclass_test.go") || !strings.Contains(v, "secret") {
		t.Errorf("%%+v lacks the stack or the message:\n%s", v)
	}
}

// TestNoCockroachMark keeps the module's classes visible to the standard
// library: no non-test file marks an error with cockroachdb's Mark, which
// only cockroachdb's errors.Is sees, except codec's place marks, which
// are no class (codec.At reads them, with cockroachdb's errors.Is).
func TestNoCockroachMark(t *testing.T) {
	allowed := map[string]bool{"codec/place.go": true}
	root := filepath.Join("..", "..")
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		if !allowed[filepath.ToSlash(rel)] && regexp.MustCompile(`\b(errors|crdb)\.Mark\(`).Match(b) {
			t.Errorf("%s marks an error with cockroachdb's Mark: use errclass.Mark, which the standard library's errors.Is sees too", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("read %d Go files: the walk missed the module", n)
	}
}
