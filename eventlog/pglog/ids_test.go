package pglog_test

import (
	"context"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/jackc/pgx/v5"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/pgtest"
)

// TestLegacySessionIDs: the id rule is for new sessions. A session whose
// id has control characters, written before the rule (here by SQL), is
// still listed, read and appended to; a read of an id no
// text column can hold (NUL, invalid UTF-8) is ErrNotFound, as on bbolt,
// not the server's encoding error.
func TestLegacySessionIDs(t *testing.T) {
	ctx := context.Background()
	u, _ := pgtest.Schema(t)
	s := openAt(t, u, unvalidated)
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	ids := []string{"\x1b]0;title\x07", "c1\u0085", "tab\there"}
	for _, id := range ids {
		h := codec.NewSessionHeader(id, 1000, "", "", 0)
		if err := s.Create(ctx, h); !errors.Is(err, eventlog.ErrInvalid) {
			t.Fatalf("Create(%q) = %v, want ErrInvalid", id, err)
		}
		rec := codec.EncodeRecord(nil, h.Raw)
		chain := eventlog.ChainStart(rec)
		if _, err := conn.Exec(ctx, `INSERT INTO sessionlog_sessions (id, header, published, next, turns, last_time, chain, stored)
			VALUES ($1, $2, true, 0, 0, 1000, $3, 0)`, id, rec, chain[:]); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		if err := s.Append(ctx, id, []codec.Event{note(t, 0), note(t, 1)}); err != nil {
			t.Fatalf("Append(%q) = %v", id, err)
		}
		h, err := s.Head(ctx, id)
		if err != nil || h.Next != 2 || h.Header.ID != id {
			t.Fatalf("Head(%q) = %q next %d, %v", id, h.Header.ID, h.Next, err)
		}
		it, err := s.Scan(ctx, id, 1)
		if err != nil {
			t.Fatalf("Scan(%q) = %v", id, err)
		}
		if ev, err := it.Next(); err != nil || ev.Seq != 1 {
			t.Fatalf("Scan(%q).Next = seq %d, %v", id, ev.Seq, err)
		}
		it.Close()
	}
	heads, err := s.Sessions(ctx)
	if err != nil || len(heads) != len(ids) {
		t.Fatalf("Sessions = %d heads, %v; want %d", len(heads), err, len(ids))
	}
	for _, id := range []string{"nul\x00", "bad\xff"} {
		if _, err := s.Head(ctx, id); !errors.Is(err, eventlog.ErrNotFound) {
			t.Errorf("Head(%q) = %v, want ErrNotFound", id, err)
		}
		if _, err := s.HeaderRecord(ctx, id); !errors.Is(err, eventlog.ErrNotFound) {
			t.Errorf("HeaderRecord(%q) = %v, want ErrNotFound", id, err)
		}
		if err := s.Append(ctx, id, []codec.Event{note(t, 0)}); !errors.Is(err, eventlog.ErrNotFound) {
			t.Errorf("Append(%q) = %v, want ErrNotFound", id, err)
		}
	}
}
