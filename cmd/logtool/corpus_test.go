package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/internal/corpus"
)

// TestCorpus imports every DSH corpus log that has a versioned header and
// no torn tail through the CLI, and exports it again: the export must be
// byte-identical to the file. Logs the corpus marks valid (they have
// expected requests) must import; a log the store refuses must leave
// nothing behind.
func TestCorpus(t *testing.T) {
	files := corpus.Files(t)
	var (
		mu                                   sync.Mutex
		imported, refused, unversioned, torn int
	)
	t.Run("import-export", func(t *testing.T) {
		for _, file := range files {
			dir := filepath.Dir(file)
			name := filepath.Base(dir)
			switch corpusKind(t, file) {
			case "unversioned":
				unversioned++
				continue
			case "torn":
				torn++
				continue
			}
			_, err := os.Stat(filepath.Join(dir, "requests.expected.jsonl"))
			valid := err == nil
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				ok := importExport(t, name, file, valid)
				mu.Lock()
				defer mu.Unlock()
				if ok {
					imported++
				} else {
					refused++
				}
			})
		}
	})
	t.Logf("%d logs imported and exported byte-identical, %d refused, %d skipped without header version, %d with a torn tail",
		imported, refused, unversioned, torn)
	if imported == 0 {
		t.Error("no corpus log was imported")
	}
}

// corpusKind classifies a corpus file the way the test selects them:
// "unversioned" (its header has no version), "torn" (it ends in a torn
// tail), or "" for the others, damaged ones included.
func corpusKind(t *testing.T, file string) string {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sc := codec.NewScanner(bytes.NewReader(data), codec.Limits{})
	if _, err := sc.Header(); err != nil {
		if errors.Is(err, codec.ErrUnsupported) {
			return "unversioned"
		}
		return ""
	}
	for {
		_, err := sc.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return ""
		}
	}
	if sc.Torn().FirstLine != 0 {
		return "torn"
	}
	return ""
}

// importExport imports file into a fresh store and exports it again. It
// reports whether the store took the file.
func importExport(t *testing.T, name, file string, valid bool) bool {
	t.Helper()
	db := filepath.Join(t.TempDir(), name+".db")
	e := env{
		stdin:  strings.NewReader(""),
		getenv: func(string) string { return "" },
		now:    func() time.Time { return testNow },
		random: strings.NewReader(strings.Repeat("r", 64)),
	}
	ctx := context.Background()
	var stdout, stderr bytes.Buffer
	code := runEnv(ctx, e, []string{"--db", db, "import", file}, &stdout, &stderr)
	if code != exitOK {
		if valid {
			t.Errorf("%s: import = exit %d, want 0 (the corpus rebuilds it)\n%s", name, code, stderr.String())
		}
		if code != exitFailure {
			t.Errorf("%s: refused import = exit %d, want 1\n%s", name, code, stderr.String())
		}
		t.Logf("%s: refused: %s", name, strings.TrimSpace(stderr.String()))
		stdout.Reset()
		if code := runEnv(ctx, e, []string{"--db", db, "ls"}, &stdout, &stderr); code == exitOK &&
			strings.Count(stdout.String(), "\n") != 1 {
			t.Errorf("%s: a refused import left sessions behind:\n%s", name, stdout.String())
		}
		return false
	}
	id, _, _ := strings.Cut(stdout.String(), " ")
	out := filepath.Join(t.TempDir(), name+".jsonl")
	stdout.Reset()
	if code := runEnv(ctx, e, []string{"--db", db, "export", id, "-o", out}, &stdout, &stderr); code != exitOK {
		t.Errorf("%s: export = exit %d\n%s", name, code, stderr.String())
		return true
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: export differs from the imported file at byte %s", name, firstDiff(got, want))
	}
	return true
}

// firstDiff returns the offset of the first byte where a and b differ.
func firstDiff(a, b []byte) string {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return fmt.Sprint(i)
		}
	}
	return fmt.Sprintf("%d (lengths %d and %d)", n, len(a), len(b))
}
