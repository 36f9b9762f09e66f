package transcript_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/corpus"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/transcript"
	"github.com/sessionlog/sessionlog/verify"
)

// sharedFiles returns the shared transcript corpus's files (docs/transcripts.md) by
// format; the test skips when ../shared is absent, and fails when it is
// there without the transcripts.
func sharedFiles(t *testing.T) map[transcript.Format][]string {
	t.Helper()
	shared := filepath.Join(corpus.Shared(t), "testdata", "transcripts")
	out := map[transcript.Format][]string{}
	for dir, f := range map[string]transcript.Format{"codex": transcript.Codex, "claude-code": transcript.ClaudeCode} {
		files, err := filepath.Glob(filepath.Join(shared, dir, "*.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		out[f] = files
	}
	if len(out[transcript.Codex]) == 0 || len(out[transcript.ClaudeCode]) == 0 {
		t.Fatalf("../shared is present but %s holds no codex and claude-code files", shared)
	}
	return out
}

// importFile imports one file into st and returns the session.
func importFile(t *testing.T, st eventlog.Store, f transcript.Format, path string, opts transcript.Options) *transcript.Session {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	opts.Name = path
	s, err := transcript.Open(bytes.NewReader(data), int64(len(data)), f, opts)
	if err != nil {
		t.Fatalf("%s: open: %v", path, err)
	}
	n, err := st.Import(context.Background(), s.Header, s)
	if err != nil {
		t.Fatalf("%s: import: %v", path, err)
	}
	if n != s.Stats().Events {
		t.Fatalf("%s: stored %d events, the session made %d", path, n, s.Stats().Events)
	}
	return s
}

func openStore(t *testing.T) *boltlog.Log {
	t.Helper()
	st, err := boltlog.Open(filepath.Join(t.TempDir(), "s.db"), &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// TestCorpus imports every shared file, exports it back byte for byte and
// verifies it strictly.
func TestCorpus(t *testing.T) {
	ctx := context.Background()
	for f, files := range sharedFiles(t) {
		for _, path := range files {
			t.Run(filepath.Base(path), func(t *testing.T) {
				st := openStore(t)
				s := importFile(t, st, f, path, transcript.Options{})
				stats := s.Stats()
				t.Logf("%s: %+v", s.Header.ID, stats)
				for k, c := range stats.Kinds {
					t.Logf("  %-45s %+v", k, *c)
				}
				want, _ := os.ReadFile(path)
				var got bytes.Buffer
				it, err := st.Scan(ctx, s.Header.ID, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer it.Close()
				if err := transcript.WriteSource(&got, it); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want) {
					t.Fatalf("export --format source differs from the file (%d bytes, want %d)", got.Len(), len(want))
				}
				res, err := verify.Session(ctx, st, s.Header.ID, verify.Options{Strict: true})
				if err != nil {
					t.Fatal(err)
				}
				for _, fd := range res.Findings {
					t.Errorf("verify: %+v", fd)
				}
			})
		}
	}
}
