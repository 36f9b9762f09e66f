package stress_test

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/verify"
)

// TestCorruptNewestMeta is the recipe of the SILENT probes that
// TestCorrupt/meta finds, reduced to one flip. It FAILS until the store
// (or verify) notices a damaged meta page.
//
// bbolt keeps two meta pages and writes transaction T's meta to page T%2.
// Open validates both and, when the newer one fails its checksum, uses the
// older one without a word: that is how it survives a crash in the middle
// of a meta write. But a flipped bit in the newest meta of a store whose
// last commit succeeded (fsynced, acknowledged) looks exactly the same, so
// the store opens as of the transaction before: here the last session
// imported is gone, and verify, which checks the sessions it is given,
// finds nothing. The next read-write commit then overwrites the damaged
// page, and the loss is invisible for good.
//
// What would make this pass: eventlog.Open reads both meta pages itself
// (magic, version, FNV-64a checksum over the first 56 bytes of the meta,
// as bbolt does) and, when one fails, refuses a read-only open or reports
// it (a warning that verify and salvage print: "meta page N is damaged;
// the store opened at txid X, the transaction after it may be lost").
func TestCorruptNewestMeta(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	l, err := eventlog.Open(path, &eventlog.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"first", "last"} {
		h := codec.NewSessionHeader(id, 1767225600000, "", "", 0)
		var evs []codec.Event
		for seq, line := range []string{
			`{"type":"turn/start","seq":0,"time":1767225600001,"data":{"turn":1}}`,
			`{"type":"turn/end","seq":1,"time":1767225600002,"data":{"turn":1,"reason":{"kind":"completed"}}}`,
		} {
			ev, err := codec.ParseEvent([]byte(line), codec.Limits{})
			if err != nil {
				t.Fatalf("seq %d: %v", seq, err)
			}
			evs = append(evs, ev)
		}
		if _, err := l.Import(ctx, h, &eventSource{evs: evs}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// Flip one bit of the txid of the newest meta page.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := int(binary.LittleEndian.Uint32(b[bbPageHeader+8:]))
	txid := func(page int) uint64 { return binary.LittleEndian.Uint64(b[page*ps+bbPageHeader+48:]) }
	newest := 0
	if txid(1) > txid(0) {
		newest = 1
	}
	off := newest*ps + bbPageHeader + 48
	b[off] ^= 0x01
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("flipped bit 0 of byte %d: the txid of meta page %d (txid %d; the other is %d)",
		off, newest, txid(newest)^1, txid(1-newest))

	ro, err := eventlog.Open(path, &eventlog.Options{ReadOnly: true})
	if err != nil {
		if !errors.Is(err, eventlog.ErrCorrupt) {
			t.Fatalf("Open = %v, want an ErrCorrupt refusal", err)
		}
		return // refused with a classified error: not silent
	}
	defer ro.Close()
	ids, err := ro.SessionIDs(ctx)
	if err != nil {
		if !errors.Is(err, eventlog.ErrCorrupt) {
			t.Fatalf("SessionIDs = %v, want an ErrCorrupt refusal", err)
		}
		return
	}
	findings := 0
	for _, id := range ids {
		res, err := verify.Session(ctx, ro, id, verify.Options{Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		findings += len(res.Findings)
	}
	if len(ids) != 2 && findings == 0 {
		t.Errorf("SILENT: after one flipped bit in the newest meta page, the store opens without an error, "+
			"lists sessions %v instead of [first last], and verify finds nothing: bbolt fell back to the "+
			"older meta page, losing the last committed transaction", ids)
	}
}
