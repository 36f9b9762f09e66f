package salvage_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/eventlog/wal"
	"github.com/sessionlog/sessionlog/internal/loggen"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/salvage"
)

// The sessions of the crashed store: one in the tree with appends in the
// log, one created in the log only, one in the tree only.
const (
	walBoth = "gen-1"
	walLog  = "gen-2"
	walTree = "gen-3"
)

// crashedStore writes a store whose write-ahead log holds acknowledged
// writes the tree does not (walBoth's events from seq 60 on, all of
// walLog), copied while the store is open, as a crash leaves it; it
// returns the copy's path and each session's payloads.
func crashedStore(t *testing.T) (string, map[string][][]byte) {
	t.Helper()
	ctx := context.Background()
	work := filepath.Join(t.TempDir(), "sessions.db")
	want := map[string][][]byte{}
	evs := map[string][]codec.Event{}
	hdrs := map[string]codec.SessionHeader{}
	for seed, n := range map[int64]int{1: 150, 2: 90, 3: 40} {
		h, e, err := loggen.Session(seed, loggen.Options{Events: n})
		if err != nil {
			t.Fatal(err)
		}
		hdrs[h.ID], evs[h.ID] = h, e
		for _, ev := range e {
			want[h.ID] = append(want[h.ID], ev.Raw)
		}
	}
	appendAll := func(l *boltlog.Log, id string, evs []codec.Event) {
		for len(evs) > 0 {
			n := min(7, len(evs))
			if err := l.Append(ctx, id, evs[:n]); err != nil {
				t.Fatal(err)
			}
			evs = evs[n:]
		}
	}
	l, err := boltlog.Open(work, writeOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{walBoth, walTree} {
		if err := l.Create(ctx, hdrs[id]); err != nil {
			t.Fatal(err)
		}
	}
	appendAll(l, walBoth, evs[walBoth][:60])
	appendAll(l, walTree, evs[walTree])
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = boltlog.Open(work, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, &boltlog.Options{WAL: boltlog.WALOptions{SegmentSize: 4 << 10, ApplyInterval: time.Hour, ApplyBytes: 1 << 40}})

	if err != nil {
		t.Fatal(err)
	}
	if err := l.Create(ctx, hdrs[walLog]); err != nil {
		t.Fatal(err)
	}
	appendAll(l, walBoth, evs[walBoth][60:])
	appendAll(l, walLog, evs[walLog])

	path := filepath.Join(t.TempDir(), "sessions.db")
	copyFile(t, work, path)
	if err := os.Mkdir(boltlog.WALDir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	segs, err := wal.Segments(boltlog.WALDir(work))
	if err != nil || len(segs) < 2 {
		t.Fatalf("the log has %d segments (%v); want several", len(segs), err)
	}
	for _, s := range segs {
		copyFile(t, s, filepath.Join(boltlog.WALDir(path), filepath.Base(s)))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return path, want
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// wantCopy checks that the new store at path holds exactly want's
// sessions, each with its first n[id] events (all when not in n).
func wantCopy(t *testing.T, path string, want map[string][][]byte, n map[string]int) {
	t.Helper()
	l := openRead(t, path)
	ids, err := l.SessionIDs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(want) {
		t.Fatalf("the new store holds %v; want %d sessions", ids, len(want))
	}
	for id, evs := range want {
		k, ok := n[id]
		if !ok {
			k = len(evs)
		}
		got := payloads(t, l, id)
		if len(got) != k {
			t.Errorf("session %s: %d events copied, want %d", id, len(got), k)
			continue
		}
		for i := range got {
			if !bytes.Equal(got[i], evs[i]) {
				t.Errorf("session %s seq %d: the copy differs", id, i)
				break
			}
		}
	}
}

// TestIntoWAL: salvage carries over the writes a crash left in the
// write-ahead log: appends that continue a session of the tree (their
// chain continuing its), and a session the log alone creates; through
// Open (eventlog's reader, which replays the log) and through a File
// with the log laid over it (the reader when eventlog's refuses).
func TestIntoWAL(t *testing.T) {
	ctx := context.Background()
	path, want := crashedStore(t)

	st, err := salvage.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.WAL == nil || st.WAL.Writes == 0 || st.WAL.Damage != nil || len(st.Warnings) != 0 {
		t.Fatalf("Open read the log as %+v, warnings %v", st.WAL, st.Warnings)
	}
	out := filepath.Join(t.TempDir(), "out.db")
	rep, err := salvage.Into(ctx, st, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Damaged() {
		t.Fatalf("report: %s", rep.Summary())
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	wantCopy(t, out, want, nil)

	f, err := salvage.OpenFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Without the log, the File reads the tree: walBoth's first 60
	// events, with its head of then, and no walLog.
	ids, err := f.SessionIDs(ctx)
	if err != nil || len(ids) != 2 {
		t.Fatalf("the File lists %v (%v); want the tree's two sessions", ids, err)
	}
	w, err := salvage.ReadWAL(path)
	if err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(t.TempDir(), "out.db")
	rep, err = salvage.Into(ctx, w.Over(f), out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Damaged() {
		t.Fatalf("report over the File: %s", rep.Summary())
	}
	checkCopy(t, out, rep, w.Over(f))
	wantCopy(t, out, want, nil)
}

// TestIntoDamagedWAL: a flipped byte in a record of the log that is not
// its last makes eventlog refuse the store; salvage keeps the tree and
// the log's writes before the damage, all of which verify, and says
// where the log is damaged (segment and offset).
func TestIntoDamagedWAL(t *testing.T) {
	ctx := context.Background()
	path, want := crashedStore(t)
	segs, err := wal.Segments(boltlog.WALDir(path))
	if err != nil {
		t.Fatal(err)
	}
	// The second record of the second segment: its payload's first byte
	// (segment header 32 bytes, then frames of a 4-byte length, link,
	// lsn, payload, crc).
	seg := segs[1]
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	off := 32 + 20 + int(binary.LittleEndian.Uint32(b[32:])) + 16
	b[off] ^= 0x40
	if err := os.WriteFile(seg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil); !errors.Is(err, eventlog.ErrCorrupt) {
		t.Fatalf("boltlog.Open of the damaged log: %v; want ErrCorrupt", err)
	}

	st, err := salvage.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.WAL.Damage == nil || !errors.Is(st.WAL.Damage, salvage.ErrDamaged) ||
		!strings.Contains(st.WAL.Damage.Error(), filepath.Base(seg)+"@") {
		t.Fatalf("the log's damage: %v; want it named by segment and offset", st.WAL.Damage)
	}
	out := filepath.Join(t.TempDir(), "out.db")
	rep, err := salvage.Into(ctx, st, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkCopy(t, out, rep, st)
	var copied, total int64
	n := map[string]int{}
	for _, s := range rep.Sessions {
		copied += s.Copied
		n[s.ID] = int(s.Copied)
	}
	for _, evs := range want {
		total += int64(len(evs))
	}
	if n[walTree] != len(want[walTree]) || n[walBoth] < 60 || copied >= total {
		t.Fatalf("copied %v of %d events: want the tree whole, walBoth's tree part, and less than everything", n, total)
	}
	if _, ok := n[walLog]; !ok {
		delete(want, walLog) // its creation was past the damage
	}
	wantCopy(t, out, want, n)
}
