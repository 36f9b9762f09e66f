package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/eventlog/wal"
	"github.com/sessionlog/sessionlog/rebuild"
)

// TestVerifyWAL: logtool verify on a store a crash left with writes in
// its write-ahead log says how many records are to replay, and warns of a
// torn tail by segment and offset (exit 0: a warning is no finding; the
// session's own is a structure warning, a turn left open).
func TestVerifyWAL(t *testing.T) {
	ctx := context.Background()
	work := filepath.Join(t.TempDir(), "sessions.db")
	l, err := boltlog.Open(work, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, &boltlog.Options{WAL: boltlog.WALOptions{ApplyInterval: time.Hour, ApplyBytes: 1 << 40}})

	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("testdata/import/basic.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := codec.NewScanner(f, codec.Limits{})
	h, err := sc.Header()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := sc.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Append(ctx, h.ID, []codec.Event{ev}); err != nil {
			t.Fatal(err)
		}
	}
	// The crash: a copy of the files while the store is open.
	db := filepath.Join(t.TempDir(), "sessions.db")
	copyTo(t, work, db)
	segs, err := wal.Segments(boltlog.WALDir(work))
	if err != nil || len(segs) != 1 {
		t.Fatalf("the log has %d segments (%v); want 1", len(segs), err)
	}
	if err := os.Mkdir(boltlog.WALDir(db), 0o755); err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(boltlog.WALDir(db), filepath.Base(segs[0]))
	copyTo(t, segs[0], seg)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	copy(b[len(b)-5:], "torn!")
	if err := os.WriteFile(seg, b, 0o644); err != nil {
		t.Fatal(err)
	}

	var stdout, stderr bytes.Buffer
	e := env{getenv: func(string) string { return "" }, now: func() time.Time { return testNow }, random: strings.NewReader(strings.Repeat("r", 64))}
	if code := runEnv(ctx, e, []string{"--db", db, "verify"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d; stderr %q, stdout %q", code, stderr.String(), stdout.String())
	}
	want := regexp.MustCompile(`(?m)^store: write-ahead log: [1-9][0-9]* records to replay, in 1 segment\n` +
		`store: warning torn: write-ahead log: dropped a torn tail of [0-9]+ bytes at ` + regexp.QuoteMeta(filepath.Base(seg)) + `@[0-9]+ \(a write a crash interrupted, never acknowledged\)\n` +
		`(.*\n)*verified 1 session, .*: 0 findings, 2 warnings\n$`)
	if !want.MatchString(stdout.String()) || strings.Contains(stdout.String(), "torn!") {
		t.Fatalf("stdout:\n%s", stdout.String())
	}
}

func copyTo(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}
