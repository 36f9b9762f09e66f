package boltlog_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/eventlog/wal"
	"github.com/sessionlog/sessionlog/internal/boltfmt"
	"github.com/sessionlog/sessionlog/rebuild"
)

// noApply keeps the applier from running a round on its own for the
// rest of the test (writes stay in the write-ahead log and the tail).
func noApply(t *testing.T) {
	t.Cleanup(boltlog.SetApplySchedule(time.Hour, 1<<50))
}

// writeSessions creates n sessions of turns turns each through l.
func writeSessions(t *testing.T, l *boltlog.Log, prefix string, n, turns int) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%s%02d", prefix, i)
		if err := l.Create(ctx, header(id)); err != nil {
			t.Fatal(err)
		}
		for k := 0; k < turns; k++ {
			if err := l.Append(ctx, id, turnEvents(t, int64(3*k), int64(k))); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// wantSessions checks that l holds exactly the sessions of writeSessions
// calls, whole: heads, listings, scans and records (verifySession).
func wantSessions(t *testing.T, l *boltlog.Log, want map[string]int64) {
	t.Helper()
	ctx := context.Background()
	heads, err := l.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(heads) != len(want) {
		t.Fatalf("Sessions lists %d sessions, want %d", len(heads), len(want))
	}
	ids, err := l.SessionIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(want) {
		t.Fatalf("SessionIDs lists %d sessions, want %d", len(ids), len(want))
	}
	for i, h := range heads {
		id := h.Header.ID
		if ids[i] != id {
			t.Fatalf("SessionIDs[%d] = %q, Sessions[%d] = %q", i, ids[i], i, id)
		}
		if h.Next != want[id] {
			t.Fatalf("Sessions: %s has %d events, want %d", id, h.Next, want[id])
		}
		if err := verifySession(l, id); err != nil {
			t.Fatal(err)
		}
		it, err := l.Scan(ctx, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := int64(0)
		for {
			ev, err := it.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("scan %s: %v", id, err)
				}
				break
			}
			if ev.Seq != n {
				t.Fatalf("scan %s: seq %d, want %d", id, ev.Seq, n)
			}
			n++
		}
		it.Close()
		if n != want[id] {
			t.Fatalf("scan %s: %d events, want %d", id, n, want[id])
		}
	}
	// Pages of one session at a time see the same listing.
	after := ""
	for i := range heads {
		page, err := l.SessionPage(ctx, after, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != 1 || page[0].Header.ID != heads[i].Header.ID || page[0].Next != heads[i].Next {
			t.Fatalf("SessionPage after %q = %d heads, want %s", after, len(page), heads[i].Header.ID)
		}
		after = page[0].Header.ID
	}
}

// TestWALReadsSeeUnapplied: every reader sees an acknowledged write at
// once, before the applier copied it into the tree, and after.
func TestWALReadsSeeUnapplied(t *testing.T) {
	noApply(t)
	l, path := openLog(t, nil)
	writeSessions(t, l, "tree", 3, 2)
	if err := boltlog.Apply(l); err != nil {
		t.Fatal(err)
	}
	applied := boltlog.Applied(l)
	if applied == 0 {
		t.Fatal("the apply round recorded no lsn")
	}
	// Unapplied: new sessions, and appends to applied ones.
	writeSessions(t, l, "tail", 3, 2)
	for i := 0; i < 3; i++ {
		if err := l.Append(context.Background(), fmt.Sprintf("tree%02d", i), turnEvents(t, 6, 2)); err != nil {
			t.Fatal(err)
		}
	}
	if boltlog.Unapplied(l) == 0 || boltlog.Applied(l) != applied {
		t.Fatalf("the writes were applied (tail %d bytes, applied %d): the test tests nothing", boltlog.Unapplied(l), boltlog.Applied(l))
	}
	want := map[string]int64{"tree00": 9, "tree01": 9, "tree02": 9, "tail00": 6, "tail01": 6, "tail02": 6}
	wantSessions(t, l, want)
	if err := boltlog.Apply(l); err != nil {
		t.Fatal(err)
	}
	if boltlog.Unapplied(l) != 0 {
		t.Fatalf("after an apply round the tail holds %d bytes", boltlog.Unapplied(l))
	}
	wantSessions(t, l, want)
	if _, err := os.Stat(boltlog.WALDir(path)); err != nil {
		t.Fatalf("the write-ahead log of an open store: %v", err)
	}
}

// TestWALReplay: a store whose process died with writes in the log only
// opens with every acknowledged write, read-only (reading the log,
// writing nothing) and read-write (applying it); a clean Close leaves one
// file.
func TestWALReplay(t *testing.T) {
	noApply(t)
	path := filepath.Join(t.TempDir(), "sessions.db")
	l, err := boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	writeSessions(t, l, "a", 2, 1)
	if err := boltlog.Apply(l); err != nil {
		t.Fatal(err)
	}
	writeSessions(t, l, "b", 2, 3)
	if err := l.Append(context.Background(), "a00", turnEvents(t, 3, 1)); err != nil {
		t.Fatal(err)
	}
	if err := boltlog.Crash(l); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"a00": 6, "a01": 3, "b00": 9, "b01": 9}

	segs, err := wal.Segments(boltlog.WALDir(path))
	if err != nil || len(segs) == 0 {
		t.Fatalf("after the crash the log has %d segments (%v)", len(segs), err)
	}
	before := dirSnapshot(t, boltlog.WALDir(path))
	ro, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep := ro.WALReport(); rep.Records == 0 {
		t.Fatalf("read-only Open read no log record: %+v", rep)
	}
	// Two creations, six appends to them and one to a00, each its own
	// record: all past what the tree holds.
	if n := ro.WALReplayed(); n != 9 {
		t.Fatalf("read-only Open found %d records to replay, want 9", n)
	}
	wantSessions(t, ro, want)
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	if after := dirSnapshot(t, boltlog.WALDir(path)); after != before {
		t.Fatalf("a read-only Open changed the log:\n%s\nwas\n%s", after, before)
	}

	l, err = boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if boltlog.Unapplied(l) != 0 {
		t.Fatalf("a read-write Open left %d bytes unapplied", boltlog.Unapplied(l))
	}
	if n := l.WALReplayed(); n != 9 {
		t.Fatalf("read-write Open replayed %d records, want 9", n)
	}
	wantSessions(t, l, want)
	// The validation state of a replayed session is whole: the next
	// turn appends.
	if err := l.Append(context.Background(), "b00", turnEvents(t, 9, 3)); err != nil {
		t.Fatal(err)
	}
	want["b00"] = 12
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(boltlog.WALDir(path)); !os.IsNotExist(err) {
		t.Fatalf("after Close the log directory is still there (%v)", err)
	}
	audit(t, path)
	ro, err = boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if n := ro.WALReplayed(); n != 0 {
		t.Fatalf("Open of a closed store replayed %d records", n)
	}
	wantSessions(t, ro, want)
}

// dirSnapshot lists a directory's files with their sizes and contents'
// lengths, to compare before and after.
func dirSnapshot(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := ""
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		s += fmt.Sprintf("%s %d %x\n", e.Name(), len(b), b[max(0, len(b)-16):])
	}
	return s
}

// TestWALTornTail: bytes of a write the crash interrupted (never
// acknowledged) after the last record are dropped and reported; every
// acknowledged write stays.
func TestWALTornTail(t *testing.T) {
	noApply(t)
	path := filepath.Join(t.TempDir(), "sessions.db")
	l, err := boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	writeSessions(t, l, "s", 2, 2)
	if err := boltlog.Crash(l); err != nil {
		t.Fatal(err)
	}
	segs, err := wal.Segments(boltlog.WALDir(path))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no segments (%v)", err)
	}
	last := segs[len(segs)-1]
	// A torn record: bytes that do not make a record, where the next
	// record would start.
	f, err := os.OpenFile(last, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	torn := make([]byte, 300)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range torn {
		torn[i] = byte(r.Uint32())
	}
	if _, err := f.Write(torn); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep := l.WALReport(); rep.TornBytes == 0 {
		t.Errorf("the torn tail was not reported: %+v", rep)
	}
	wantSessions(t, l, map[string]int64{"s00": 6, "s01": 6})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWALUpgrade: a format 1 store (written before the log existed) opens
// read-only as it is, and read-write upgrades to format 2 with every
// session intact.
func TestWALUpgrade(t *testing.T) {
	path := makeStore(t, map[string]int{"old": 4, "older": 2})
	boltUpdate(t, path, func(tx *bolt.Tx) error {
		meta := tx.Bucket([]byte("meta"))
		if err := meta.Delete([]byte("wal")); err != nil {
			return err
		}
		return meta.Put([]byte("format"), formatRecord(1))
	})
	format := func() int64 {
		t.Helper()
		var m int64
		db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		_ = db.View(func(tx *bolt.Tx) error {
			rec, err := boltfmt.DecodeMeta(tx.Bucket([]byte("meta")).Get([]byte("format")))
			if err != nil {
				t.Fatal(err)
			}
			m = rec.Format
			return nil
		})
		return m
	}
	ro, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	heads, err := ro.Sessions(context.Background())
	if err != nil || len(heads) != 2 {
		t.Fatalf("read-only Open of format 1: %d sessions (%v)", len(heads), err)
	}
	ro.Close()
	if f := format(); f != 1 {
		t.Fatalf("a read-only Open changed the format to %d", f)
	}
	l, err := boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := verifyAll(l); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if f := format(); f != boltlog.FormatVersion {
		t.Fatalf("after a read-write Open the format is %d, want %d", f, boltlog.FormatVersion)
	}
}

// TestWALBackpressure: writers wait for the applier once the tail holds
// maxUnapplied bytes, and no write is lost or refused.
func TestWALBackpressure(t *testing.T) {
	noApply(t)
	t.Cleanup(boltlog.SetMaxUnapplied(8 << 10))
	l, _ := openLog(t, nil)
	var wg sync.WaitGroup
	const writers, turns = 8, 30
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			id := fmt.Sprintf("w%02d", w)
			if err := l.Create(ctx, header(id)); err != nil {
				errs <- err
				return
			}
			for k := 0; k < turns; k++ {
				if err := l.Append(ctx, id, turnEvents(t, int64(3*k), int64(k))); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if boltlog.Applied(l) == 0 {
		t.Fatal("no apply round ran: the writers never waited")
	}
	if n := boltlog.Unapplied(l); n > 8<<10+4<<10 {
		t.Fatalf("the tail holds %d bytes, past the bound", n)
	}
	want := map[string]int64{}
	for w := 0; w < writers; w++ {
		want[fmt.Sprintf("w%02d", w)] = 3 * turns
	}
	wantSessions(t, l, want)
}

// TestWALCreateImportRace: a Create and an Import of the same id, racing,
// never both succeed, whichever reaches the log or the tree first.
func TestWALCreateImportRace(t *testing.T) {
	noApply(t)
	l, _ := openLog(t, nil)
	ctx := context.Background()
	wins := 0
	for i := 0; i < 40; i++ {
		id := fmt.Sprintf("r%02d", i)
		var cerr, ierr error
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); cerr = l.Create(ctx, header(id)) }()
		go func() {
			defer wg.Done()
			_, ierr = l.Import(ctx, header(id), &sliceSource{evs: turnEvents(t, 0, 0)})
		}()
		wg.Wait()
		switch {
		case cerr == nil && ierr == nil:
			t.Fatalf("%s: both the Create and the Import succeeded", id)
		case cerr != nil && ierr != nil:
			t.Fatalf("%s: both failed: %v; %v", id, cerr, ierr)
		}
		for _, err := range []error{cerr, ierr} {
			if err != nil && !errors.Is(err, eventlog.ErrConflict) {
				t.Fatalf("%s: %v, want ErrConflict", id, err)
			}
		}
		if cerr == nil {
			wins++
		}
		if i%8 == 7 {
			if err := boltlog.Apply(l); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("Create won %d of 40 races", wins)
}

// sliceSource is a Source over events.
type sliceSource struct {
	evs []codec.Event
}

func (s *sliceSource) Next() (codec.Event, error) {
	if len(s.evs) == 0 {
		return codec.Event{}, io.EOF
	}
	ev := s.evs[0]
	s.evs = s.evs[1:]
	return ev, nil
}

// TestWALEmptyDir: a crash while Close removed the log (every segment
// gone, the directory left) opens as a store with nothing to replay.
func TestWALEmptyDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	l, err := boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	writeSessions(t, l, "s", 2, 2)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(boltlog.WALDir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, ro := range []bool{true, false} {
		l, err := boltlog.Open(path, &eventlog.Options{ReadOnly: ro, NewValidator: rebuild.NewValidator}, nil)
		if err != nil {
			t.Fatalf("Open(read-only %v) = %v", ro, err)
		}
		wantSessions(t, l, map[string]int64{"s00": 6, "s01": 6})
		if !ro {
			writeSessions(t, l, "t", 1, 1)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWALDebugLines: apply rounds and segment cuts log at Debug, the
// lines the crash proofs classify their kills by.
func TestWALDebugLines(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	l, err := boltlog.Open(filepath.Join(t.TempDir(), "sessions.db"), &eventlog.Options{Logger: log, NewValidator: rebuild.NewValidator}, &boltlog.Options{WAL: boltlog.WALOptions{SegmentSize: 4096}})

	if err != nil {
		t.Fatal(err)
	}
	writeSessions(t, l, "dbg", 4, 8)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"eventlog: apply round begins", "eventlog: apply round committed", "eventlog: write-ahead log segment started"} {
		if n := strings.Count(buf.String(), line); n == 0 {
			t.Errorf("no %q line in the log:\n%s", line, buf.String())
		}
	}
	if n := strings.Count(buf.String(), "eventlog: write-ahead log segment started"); n < 2 {
		t.Errorf("%d segment cuts logged for 4 KiB segments: want several", n)
	}
}

// TestWALRecordsClosed: Records of a session that only the tail holds
// refuses after Close, as every reader does.
func TestWALRecordsClosed(t *testing.T) {
	noApply(t)
	path := filepath.Join(t.TempDir(), "sessions.db")
	l, err := boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	writeSessions(t, l, "s", 1, 1)
	if boltlog.Unapplied(l) == 0 {
		t.Fatal("the session was applied: the test tests nothing")
	}
	n := 0
	if err := l.Records(context.Background(), "s00", 0, func(int64, []byte) error { n++; return nil }); err != nil || n != 3 {
		t.Fatalf("Records before Close: %d records, %v", n, err)
	}
	if err := boltlog.Crash(l); err != nil {
		t.Fatal(err)
	}
	err = l.Records(context.Background(), "s00", 0, func(int64, []byte) error { return nil })
	if !errors.Is(err, eventlog.ErrClosed) {
		t.Fatalf("Records after Close = %v, want ErrClosed", err)
	}
}
