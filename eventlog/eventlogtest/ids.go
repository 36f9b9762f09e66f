package eventlogtest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"errors"

	"github.com/sessionlog/sessionlog/eventlog"
)

// testSessionIDs: one rule for the id of a new session in every store.
// Create, Import and Fork refuse an id with a control character (C0, NUL
// included, DEL, C1) or of invalid UTF-8 with ErrInvalid and write
// nothing; any other id of up to eventlog.MaxSessionID bytes is taken and
// read back, listed in bytewise order. A read of an id that no store can
// hold is ErrNotFound, not a failure of the store.
func testSessionIDs(t *testing.T, s eventlog.Store) {
	ctx := context.Background()
	mustCreate(t, s, "src", turns(t, 2))
	before := listIDs(t, s)
	refused := []struct{ name, id string }{
		{"NUL", "a\x00b"},
		{"NUL alone", "\x00"},
		{"tab", "a\tb"},
		{"newline", "a\nb"},
		{"carriage return", "a\rb"},
		{"escape sequence", "\x1b]0;title\x07"},
		{"unit separator", "a\x1f"},
		{"DEL", "a\x7fb"},
		{"C1 NEL", "a\u0085b"},
		{"C1 CSI", "\u009b31m"},
		{"C1 last", "a\u009f"},
		{"invalid UTF-8", "a\xffb"},
		{"truncated UTF-8", "a\xc3"},
		{"too long", strings.Repeat("x", eventlog.MaxSessionID+1)},
	}
	for _, tt := range refused {
		t.Run("refused/"+tt.name, func(t *testing.T) {
			if err := s.Create(ctx, header(tt.id)); !errors.Is(err, eventlog.ErrInvalid) {
				t.Errorf("Create(%q) = %v, want ErrInvalid", tt.id, err)
			}
			if _, err := s.Import(ctx, header(tt.id), &sliceSource{evs: turns(t, 1)}); !errors.Is(err, eventlog.ErrInvalid) {
				t.Errorf("Import(%q) = %v, want ErrInvalid", tt.id, err)
			}
			if err := s.Fork(ctx, "src", 2, childHeader(tt.id, "src", 2)); !errors.Is(err, eventlog.ErrInvalid) {
				t.Errorf("Fork(src, 2, %q) = %v, want ErrInvalid", tt.id, err)
			}
			if _, err := s.Head(ctx, tt.id); !errors.Is(err, eventlog.ErrNotFound) {
				t.Errorf("Head(%q) after the refusals = %v, want ErrNotFound", tt.id, err)
			}
			if _, err := s.Scan(ctx, tt.id, 0); !errors.Is(err, eventlog.ErrNotFound) {
				t.Errorf("Scan(%q) after the refusals = %v, want ErrNotFound", tt.id, err)
			}
			if got := listIDs(t, s); !slices.Equal(got, before) {
				t.Errorf("after the refusals Sessions lists %q, want %q", got, before)
			}
		})
	}
	taken := []string{
		"with space",
		"sessão-ü",
		"emoji-\U0001F642",
		"a\u00a0b", // NO-BREAK SPACE: U+00A0 follows C1
		"a~b",      // U+007E precedes DEL
		"../..",
		strings.Repeat("x", eventlog.MaxSessionID),
	}
	for _, id := range taken {
		name := id
		if len(name) > 40 {
			name = "longest"
		}
		t.Run("taken/"+name, func(t *testing.T) {
			mustCreate(t, s, id, turns(t, 1))
			head, err := s.Head(ctx, id)
			if err != nil {
				t.Fatalf("Head(%q) = %v", id, err)
			}
			wantHead(t, head, header(id), scanAll(t, s, id, 0))
			child := "fork of " + id[:min(len(id), 100)]
			if err := s.Fork(ctx, id, 2, childHeader(child, id, 2)); err != nil {
				t.Fatalf("Fork(%q) = %v", id, err)
			}
			imported := "import of " + id[:min(len(id), 100)]
			if _, err := s.Import(ctx, header(imported), &sliceSource{evs: turns(t, 1)}); err != nil {
				t.Fatalf("Import(%q) = %v", imported, err)
			}
		})
	}
	got := listIDs(t, s)
	for i := 1; i < len(got); i++ {
		if got[i-1] >= got[i] {
			t.Fatalf("Sessions is not in bytewise id order: %q before %q", got[i-1], got[i])
		}
	}
	if want := len(before) + 3*len(taken); len(got) != want {
		t.Errorf("Sessions lists %d sessions, want %d", len(got), want)
	}
}

// listIDs returns the ids Sessions lists, in its order.
func listIDs(t testing.TB, s eventlog.Store) []string {
	t.Helper()
	heads, err := s.Sessions(context.Background())
	if err != nil {
		t.Fatalf("Sessions = %v", err)
	}
	ids := make([]string, len(heads))
	for i, h := range heads {
		ids[i] = h.Header.ID
	}
	return ids
}
