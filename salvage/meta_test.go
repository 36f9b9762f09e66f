package salvage_test

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/salvage"
)

// TestBothMetaPagesZeroed zeroes both bbolt meta pages of a store whose
// data pages are all intact: boltlog.Open refuses it, and salvage finds
// the tree from the pages themselves and copies every session whole,
// saying how it found the tree; the damaged file is never changed.
func TestBothMetaPagesZeroed(t *testing.T) {
	path, want := buildStore(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := int(binary.LittleEndian.Uint32(b[16+8:])) // the page size meta page 0 records
	clear(b[:2*ps])
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	before := fileSum(t, path)
	if _, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil); !errors.Is(err, eventlog.ErrCorrupt) {
		t.Fatalf("boltlog.Open of a store without meta pages = %v, want ErrCorrupt", err)
	}
	st, err := salvage.Open(path, nil)
	if err != nil {
		t.Fatalf("salvage.Open = %+v", err)
	}
	out := filepath.Join(t.TempDir(), "new.db")
	rep, err := salvage.Into(context.Background(), st, out, &salvage.Options{NoSync: true})
	notes := st.Notes()
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("warnings: %v\nnotes: %v\n%s", st.Warnings, notes, rep.Summary())
	if !strings.Contains(strings.Join(notes, "\n"), "both bbolt meta pages are damaged: the store was read from the tree found at page") {
		t.Errorf("the notes do not say how the tree was found: %q", notes)
	}
	if len(rep.Sessions) != len(want) {
		t.Fatalf("report has %d sessions, want %d", len(rep.Sessions), len(want))
	}
	for _, s := range rep.Sessions {
		if !s.Whole() || s.Copied != int64(len(want[s.ID])) {
			t.Errorf("session %s: %s, want all %d events", s.ID, s.String(), len(want[s.ID]))
		}
	}
	nl := openRead(t, out)
	for id, evs := range want {
		got := payloads(t, nl, id)
		if len(got) != len(evs) {
			t.Errorf("session %s: %d events in the new store, want %d", id, len(got), len(evs))
		}
	}
	if fileSum(t, path) != before {
		t.Error("salvage changed the damaged store")
	}
}
