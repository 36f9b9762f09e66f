package boltlog_test

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
)

// TestLegacySessionIDs: the id rule (no control characters) is for new
// sessions. A store written before it may hold an id with NUL or an
// escape sequence: such a session is still listed, read, appended to,
// forked from, and survives a crash (write-ahead log replay) and a reopen.
func TestLegacySessionIDs(t *testing.T) {
	ctx := context.Background()
	ids := []string{"legacy\x00nul", "\x1b]0;title\x07", "c1\u0085"}
	l, path := openLog(t, nil)
	for _, id := range ids {
		if err := l.Create(ctx, header(id)); !errors.Is(err, eventlog.ErrInvalid) {
			t.Fatalf("Create(%q) = %v, want ErrInvalid", id, err)
		}
		if err := boltlog.CreateLegacy(l, header(id)); err != nil {
			t.Fatalf("CreateLegacy(%q) = %v", id, err)
		}
		if err := l.Append(ctx, id, turnEvents(t, 0, 1)); err != nil {
			t.Fatalf("Append(%q) = %v", id, err)
		}
	}
	if err := boltlog.Crash(l); err != nil {
		t.Fatalf("Crash = %v", err)
	}
	l, err := boltlog.Open(path, testOptions(), nil)
	if err != nil {
		t.Fatalf("Open after a crash = %v", err)
	}
	defer l.Close()
	heads, err := l.Sessions(ctx)
	if err != nil || len(heads) != len(ids) {
		t.Fatalf("Sessions = %d heads, %v; want %d", len(heads), err, len(ids))
	}
	for i, id := range ids {
		h, err := l.Head(ctx, id)
		if err != nil || h.Next != 3 {
			t.Fatalf("Head(%q) = next %d, %v; want 3", id, h.Next, err)
		}
		if n := countEvents(t, l, id); n != 3 {
			t.Fatalf("Scan(%q) = %d events, want 3", id, n)
		}
		if err := l.Append(ctx, id, turnEvents(t, 3, 2)); err != nil {
			t.Fatalf("Append(%q) after reopening = %v", id, err)
		}
		child := fmt.Sprintf("child-%d", i)
		if err := l.Fork(ctx, id, 2, codec.NewSessionHeader(child, 1767225600001, "", id, 3)); err != nil {
			t.Fatalf("Fork(%q) = %v", id, err)
		}
		if n := countEvents(t, l, child); n != 3 {
			t.Fatalf("Scan(%q) = %d events, want 3", child, n)
		}
		if err := l.Fork(ctx, id, 2, codec.NewSessionHeader(id+"-child", 1767225600001, "", id, 3)); !errors.Is(err, eventlog.ErrInvalid) {
			t.Fatalf("Fork(%q) into a child whose id breaks the rule = %v, want ErrInvalid", id, err)
		}
		// A copy (logtool copy) is a new session: refused, with a clear
		// class, before anything is written.
		if _, err := l.Import(ctx, h.Header, emptySource{}); !errors.Is(err, eventlog.ErrInvalid) {
			t.Fatalf("Import(%q) = %v, want ErrInvalid", id, err)
		}
	}
	if heads, err := l.Sessions(ctx); err != nil || len(heads) != 2*len(ids) {
		t.Fatalf("Sessions = %d heads, %v; want %d", len(heads), err, 2*len(ids))
	}
}

// countEvents scans the whole session and counts its events.
func countEvents(t *testing.T, l *boltlog.Log, id string) int {
	t.Helper()
	it, err := l.Scan(context.Background(), id, 0)
	if err != nil {
		t.Fatalf("Scan(%q) = %v", id, err)
	}
	defer it.Close()
	n := 0
	for {
		_, err := it.Next()
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatalf("Scan(%q) = %v", id, err)
		}
		n++
	}
}
