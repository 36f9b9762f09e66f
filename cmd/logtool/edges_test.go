package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/eventlog"
)

// cancelReader cancels a context on its first Read, then reads r: an
// interrupt that arrives while a file is being imported.
type cancelReader struct {
	cancel context.CancelFunc
	r      io.Reader
}

func (c *cancelReader) Read(p []byte) (int, error) {
	c.cancel()
	return c.r.Read(p)
}

// TestImportInterrupted: an interrupt during import rolls the current file
// back, leaves the files after it unattempted, says how many, and exits
// 130. The file before it stays imported.
func TestImportInterrupted(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sessions.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kinds, err := os.ReadFile("testdata/import/kinds.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	e := env{
		stdin:  &cancelReader{cancel: cancel, r: bytes.NewReader(kinds)},
		getenv: func(string) string { return "" },
		now:    func() time.Time { return testNow },
		random: strings.NewReader(strings.Repeat("r", 64)),
	}
	var stdout, stderr bytes.Buffer
	args := []string{"--db", db, "import", "testdata/import/basic.jsonl", "-", "testdata/import/torn.jsonl", "testdata/import/delta-first.jsonl"}
	code := runEnv(ctx, e, args, &stdout, &stderr)
	if code != exitInterrupted {
		t.Errorf("exit %d; want %d (stderr %q)", code, exitInterrupted, stderr.String())
	}
	if got, want := stdout.String(), "basic-1 28\n"; got != want {
		t.Errorf("stdout %q; want %q", got, want)
	}
	if got, want := stderr.String(), "logtool: import interrupted: stdin was rolled back; 2 of 4 files not attempted\n"; got != want {
		t.Errorf("stderr %q; want %q", got, want)
	}
	st, err := eventlog.Open(db, &eventlog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	heads, err := st.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(heads) != 1 || heads[0].Header.ID != "basic-1" {
		t.Errorf("the store holds %d sessions; want basic-1 alone", len(heads))
	}
}
