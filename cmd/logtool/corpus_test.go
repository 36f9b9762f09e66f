package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/internal/corpus"
	"github.com/sessionlog/sessionlog/internal/pgtest"
)

// TestCorpus imports every DSH corpus log that has a versioned header and
// no torn tail through the CLI, replays it and exports it again, on both
// stores (a bbolt file and a PostgreSQL schema) from this one test body:
// the export must be byte-identical to the file, and the replayed
// requests byte-identical to the corpus's expected ones. Logs the corpus
// marks valid (they have expected requests) must import; a log the store
// refuses must leave nothing behind.
func TestCorpus(t *testing.T) {
	files := corpus.Files(t)
	stores := []struct {
		name string
		// db returns the --db of a new, empty store for one case.
		db func(t *testing.T, name string) string
	}{
		{"bbolt", func(t *testing.T, name string) string { return filepath.Join(t.TempDir(), name+".db") }},
		{"postgres", func(t *testing.T, _ string) string { u, _ := pgtest.Schema(t); return u }},
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			if st.name == "postgres" {
				pgtest.ServerURL(t) // one skip line, not one per case
			}
			testCorpus(t, files, st.db)
		})
	}
}

func testCorpus(t *testing.T, files []string, newDB func(t *testing.T, name string) string) {
	var (
		mu                                             sync.Mutex
		imported, replayed, refused, unversioned, torn int
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
				ok, rep := importExport(t, name, file, newDB(t, name), valid)
				mu.Lock()
				defer mu.Unlock()
				if ok {
					imported++
				} else {
					refused++
				}
				if rep {
					replayed++
				}
			})
		}
	})
	t.Logf("%d logs imported and exported byte-identical (%d replayed byte-exact), %d refused, %d skipped without header version, %d with a torn tail",
		imported, replayed, refused, unversioned, torn)
	if imported == 0 || replayed == 0 {
		t.Error("no corpus log was imported and replayed")
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

// importExport imports file into the fresh store db, replays it when the
// corpus has its expected requests, and exports it again. It reports
// whether the store took the file, and whether it was replayed.
func importExport(t *testing.T, name, file, db string, valid bool) (ok, replayed bool) {
	t.Helper()
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
		return false, false
	}
	id, _, _ := strings.Cut(stdout.String(), " ")
	if valid {
		replayed = replayExact(t, e, db, id, filepath.Join(filepath.Dir(file), "requests.expected.jsonl"))
	}
	out := filepath.Join(t.TempDir(), name+".jsonl")
	stdout.Reset()
	if code := runEnv(ctx, e, []string{"--db", db, "export", id, "-o", out}, &stdout, &stderr); code != exitOK {
		t.Errorf("%s: export = exit %d\n%s", name, code, stderr.String())
		return true, replayed
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
	return true, replayed
}

// digestField is the field replay --format json adds to the corpus's
// expected request lines.
var digestField = regexp.MustCompile(`,"digest":(null|"[0-9a-f]{64}")`)

// replayExact replays session id of db with --format json and compares
// each line, without its digest, to the corpus's expected request line.
func replayExact(t *testing.T, e env, db, id, expected string) bool {
	t.Helper()
	want, err := os.ReadFile(expected)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := runEnv(context.Background(), e, []string{"--db", db, "replay", id, "--format", "json"}, &stdout, &stderr); code != exitOK {
		t.Errorf("%s: replay = exit %d\n%s", id, code, stderr.String())
		return false
	}
	got := digestField.ReplaceAll(stdout.Bytes(), nil)
	if !bytes.Equal(got, want) {
		t.Errorf("%s: replayed requests differ from the corpus's at byte %s", id, firstDiff(got, want))
		return false
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
