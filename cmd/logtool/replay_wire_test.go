package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/internal/corpus"
)

// TestReplayWireCorpus: for every shared case with bodies computed by
// DSH's own DeepSeek serializer, replay --wire openai-chat prints them
// byte for byte, through the CLI and the store.
func TestReplayWireCorpus(t *testing.T) {
	files := corpus.With(t, "wire-openai-chat.expected.jsonl")
	ctx := context.Background()
	e := env{
		stdin:  strings.NewReader(""),
		getenv: func(string) string { return "" },
		now:    func() time.Time { return testNow },
		random: strings.NewReader(strings.Repeat("r", 64)),
	}
	checked := 0
	for _, file := range files {
		dir := filepath.Dir(file)
		name := filepath.Base(dir)
		session := filepath.Join(dir, "session.jsonl")
		if corpusKind(t, session) != "" {
			continue // unversioned or torn: the import refuses or trims it
		}
		t.Run(name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "s.db")
			var stdout, stderr bytes.Buffer
			if code := runEnv(ctx, e, []string{"--db", db, "import", session}, &stdout, &stderr); code != exitOK {
				t.Fatalf("import = exit %d\n%s", code, stderr.String())
			}
			id, _, _ := strings.Cut(stdout.String(), " ")
			stdout.Reset()
			if code := runEnv(ctx, e, []string{"--db", db, "replay", id, "--wire", "openai-chat"}, &stdout, &stderr); code != exitOK {
				t.Fatalf("replay --wire = exit %d\n%s", code, stderr.String())
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(stdout.Bytes(), want) {
				t.Fatalf("replay --wire differs from DSH's bodies at byte %s", firstDiff(stdout.Bytes(), want))
			}
		})
		checked++
	}
	if checked == 0 {
		t.Fatal("no corpus case was checked")
	}
}
