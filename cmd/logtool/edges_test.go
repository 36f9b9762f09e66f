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

// TestUsageEdges: command lines a shell can pass but a script cannot
// spell: an empty --step is a usage error (exit 2), not "every step".
func TestUsageEdges(t *testing.T) {
	tests := []struct {
		args       []string
		code       int
		wantStderr string
	}{
		{[]string{"replay", "s", "--step", ""}, exitUsage,
			"logtool: replay: --step needs a step T.S (turn.step, from 1.1)\nhint: run 'logtool replay --help' for usage\n"},
		{[]string{"replay", "s", "--step="}, exitUsage,
			"logtool: replay: --step needs a step T.S (turn.step, from 1.1)\nhint: run 'logtool replay --help' for usage\n"},
		{[]string{"--db", "", "ls"}, exitUsage,
			"logtool: --db must name a file\nhint: run 'logtool ls --help' for usage\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			e := env{stdin: strings.NewReader(""), getenv: func(string) string { return "" },
				now: func() time.Time { return testNow }, random: strings.NewReader("")}
			var stdout, stderr bytes.Buffer
			code := runEnv(context.Background(), e, tt.args, &stdout, &stderr)
			if code != tt.code || stderr.String() != tt.wantStderr || stdout.Len() != 0 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stderr %q", code, stdout.String(), stderr.String(), tt.code, tt.wantStderr)
			}
		})
	}
}
