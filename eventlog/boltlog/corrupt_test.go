package boltlog_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/eventlog/eventlogtest"
	"github.com/sessionlog/sessionlog/internal/boltfmt/bolttest"
	"github.com/sessionlog/sessionlog/rebuild"
)

// Corruption tests write a real store, damage the file on disk (or a
// record, through bbolt, as a buggy writer would) and check that reads
// fail with the right class and name the session and seq, and that the
// undamaged session next to it still reads.

const damagedEvents = 40

// marker is the unique string carried by event seq of session id.
func marker(id string, seq int64) string { return fmt.Sprintf("MARKER-%s-%04d-q7Zx", id, seq) }

// damageStore writes sessions "s" and "other", each with damagedEvents
// note events of about 1 KB carrying their marker, and closes the store.
func damageStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sessions.db")
	l, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Incompressible padding: the records stay about 1 KB (codec compresses
	// only repeats, and leaves literals, the marker among them, as they are).
	pad := noise(900)
	// Apply every append in a transaction of its own, as a long-running
	// store does over time: the freelist then lies past the records.
	for _, id := range []string{"other", "s"} {
		if err := l.Create(ctx, header(id)); err != nil {
			t.Fatal(err)
		}
		for seq := int64(0); seq < damagedEvents; seq++ {
			ev := parse(t, fmt.Sprintf(`{"type":"x/note","seq":%d,"time":%d,"data":{"pad":%q,"marker":%q}}`,
				seq, 1767225600000+seq, pad, marker(id, seq)))
			if err := l.Append(ctx, id, []codec.Event{ev}); err != nil {
				t.Fatal(err)
			}
			if err := boltlog.Apply(l); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	bolttest.UnpackStore(t, path) // one record per key: damage to one is to one event
	return path
}

// noise returns n pseudo-random lowercase letters, the same every run.
func noise(n int) string {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = 'a' + byte(x%26)
	}
	return string(b)
}

// editFile applies fn to every offset of needle in the file at path.
func editFile(t *testing.T, path, needle string, fn func(b []byte, off int)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for off := 0; ; {
		i := bytes.Index(b[off:], []byte(needle))
		if i < 0 {
			break
		}
		fn(b, off+i)
		off += i + len(needle)
		n++
	}
	if n == 0 {
		t.Fatalf("%q not found in the store file", needle)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// scanErr scans the whole session and returns the first error, or nil.
func scanErr(l *boltlog.Log, id string) error {
	it, err := l.Scan(context.Background(), id, 0)
	if err != nil {
		return err
	}
	defer it.Close()
	for {
		if _, err := it.Next(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// wantNames checks that err names the session, and the seq when seq >= 0.
func wantNames(t *testing.T, err error, id string, seq int64) {
	t.Helper()
	msg := err.Error()
	if !strings.Contains(msg, fmt.Sprintf("session %q", id)) {
		t.Errorf("error %q does not name session %q", msg, id)
	}
	if seq >= 0 && !strings.Contains(msg, fmt.Sprintf("seq %d", seq)) {
		t.Errorf("error %q does not name seq %d", msg, seq)
	}
}

func TestCorruptFile(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
		seq    int64 // the seq the error must name; -1: any
		class  error
	}{
		{name: "flip a payload byte", seq: 17, class: eventlog.ErrCorrupt, damage: func(t *testing.T, path string) {
			editFile(t, path, marker("s", 17), func(b []byte, off int) { b[off+3] ^= 0x20 })
		}},
		{name: "flip a crc byte", seq: 23, class: eventlog.ErrCorrupt, damage: func(t *testing.T, path string) {
			m := marker("s", 23)
			editFile(t, path, m, func(b []byte, off int) { b[off+len(m)] ^= 0x01 })
		}},
		{name: "zero a page", seq: -1, class: eventlog.ErrCorrupt, damage: func(t *testing.T, path string) {
			editFile(t, path, marker("s", 30), func(b []byte, off int) {
				page := off / os.Getpagesize() * os.Getpagesize()
				clear(b[page : page+os.Getpagesize()])
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := damageStore(t)
			tt.damage(t, path)
			for _, ro := range []bool{true, false} {
				l, err := boltlog.Open(path, &eventlog.Options{ReadOnly: ro, NoSync: true, Unvalidated: true}, nil)
				if err != nil {
					t.Fatalf("Open(read-only %v) = %v", ro, err)
				}
				err = scanErr(l, "s")
				t.Logf("read-only %v: %v", ro, err)
				if !errors.Is(err, tt.class) {
					t.Errorf("scan of the damaged session (read-only %v) = %v, want %v", ro, err, tt.class)
				} else {
					wantNames(t, err, "s", tt.seq)
				}
				if err := scanErr(l, "other"); err != nil {
					t.Errorf("scan of the undamaged session = %v", err)
				}
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
			}
			// A store that replays sessions for validation refuses to
			// append to the damaged one, naming the damage.
			l, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: eventlogtest.NewValidator}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			err = l.Append(context.Background(), "s", []codec.Event{noteEvent(t, damagedEvents, "late")})
			if !errors.Is(err, eventlog.ErrCorrupt) {
				t.Errorf("Append to the damaged session = %v, want ErrCorrupt", err)
			} else {
				wantNames(t, err, "s", tt.seq)
			}
			if err := l.Append(context.Background(), "other", []codec.Event{noteEvent(t, damagedEvents, "late")}); err != nil {
				t.Errorf("Append to the undamaged session = %v", err)
			}
		})
	}
}

// TestCorruptTruncated: a store file cut short. A read-write Open refuses
// it; a read-only Open reads what is left, and reading a page that is
// gone is ErrCorrupt (a fault on the memory map, recovered), never a
// crash.
func TestCorruptTruncated(t *testing.T) {
	path := damageStore(t)
	var need int64
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.View(func(tx *bolt.Tx) error { need = tx.Size(); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Cut inside the page that holds seq 30 of "s".
	var cut int64
	editFile(t, path, marker("s", 30), func(b []byte, off int) {
		if int64(off) < need && int64(off) > cut {
			cut = int64(off)
		}
	})
	if err := os.Truncate(path, cut); err != nil {
		t.Fatal(err)
	}
	l, err := boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
	if err == nil {
		l.Close()
		t.Fatalf("read-write Open of a truncated store succeeded")
	}
	if !errors.Is(err, eventlog.ErrCorrupt) || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("read-write Open of a truncated store = %v, want ErrCorrupt (truncated)", err)
	}
	l, err = boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatalf("read-only Open of a truncated store = %v", err)
	}
	defer l.Close()
	damaged := 0
	for _, id := range []string{"s", "other"} {
		err := scanErr(l, id)
		if err == nil {
			continue
		}
		damaged++
		t.Logf("%s: %v", id, err)
		if !errors.Is(err, eventlog.ErrCorrupt) {
			t.Errorf("scan of %q = %v, want ErrCorrupt", id, err)
		}
		wantNames(t, err, id, -1)
	}
	if damaged == 0 {
		t.Errorf("every session of the truncated store still scans")
	}
}

// TestCorruptRecords damages records through bbolt, as a buggy writer or
// a bit flip that kept bbolt's structure would.
func TestCorruptRecords(t *testing.T) {
	events := func(tx *bolt.Tx, id string) *bolt.Bucket {
		return tx.Bucket([]byte("sessions")).Bucket([]byte(id)).Bucket([]byte("events"))
	}
	key := func(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }
	tests := []struct {
		name    string
		damage  func(tx *bolt.Tx) error
		seq     int64
		class   error
		records bool // the damage is seen by the raw walk (verify), not by Scan
	}{
		{name: "missing record", seq: 12, class: eventlog.ErrCorrupt, damage: func(tx *bolt.Tx) error {
			return events(tx, "s").Delete(key(12))
		}},
		{name: "record under another key", seq: 12, class: eventlog.ErrCorrupt, damage: func(tx *bolt.Tx) error {
			b := events(tx, "s")
			return b.Put(key(12), append([]byte(nil), b.Get(key(13))...))
		}},
		{name: "key of 9 bytes", seq: 13, class: eventlog.ErrCorrupt, damage: func(tx *bolt.Tx) error {
			return events(tx, "s").Put(append(key(12), 0), []byte("x"))
		}},
		{name: "key of 7 bytes", seq: -1, class: eventlog.ErrCorrupt, records: true, damage: func(tx *bolt.Tx) error {
			return events(tx, "s").Put(key(12)[:7], []byte("x"))
		}},
		{name: "record of a newer version", seq: 5, class: eventlog.ErrUnsupported, damage: func(tx *bolt.Tx) error {
			b := events(tx, "s")
			rec := append([]byte(nil), b.Get(key(5))...)
			rec[0] = 4
			binary.BigEndian.PutUint32(rec[len(rec)-4:], crc32.Checksum(rec[:len(rec)-4], crc32.MakeTable(crc32.Castagnoli)))
			return b.Put(key(5), rec)
		}},
		{name: "payload not an event", seq: 8, class: eventlog.ErrCorrupt, damage: func(tx *bolt.Tx) error {
			return events(tx, "s").Put(key(8), codec.EncodeRecord(nil, codec.AppendString(nil, "hi")))
		}},
		{name: "head record", seq: -1, class: eventlog.ErrCorrupt, damage: func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte("sessions")).Bucket([]byte("s"))
			rec := append([]byte(nil), b.Get([]byte("head"))...)
			rec[3] ^= 0x40
			return b.Put([]byte("head"), rec)
		}},
		{name: "header record", seq: -1, class: eventlog.ErrCorrupt, damage: func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte("sessions")).Bucket([]byte("s"))
			rec := append([]byte(nil), b.Get([]byte("header"))...)
			rec[len(rec)/2] ^= 0x40
			return b.Put([]byte("header"), rec)
		}},
		{name: "header of another session", seq: -1, class: eventlog.ErrCorrupt, damage: func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte("sessions")).Bucket([]byte("s"))
			return b.Put([]byte("header"), codec.EncodeRecord(nil, header("other").Raw))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := damageStore(t)
			boltUpdate(t, path, tt.damage)
			l, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			err = scanErr(l, "s")
			if _, herr := l.Head(context.Background(), "s"); herr != nil && err == nil {
				err = herr
			}
			if tt.records {
				if err != nil {
					t.Fatalf("Scan of a session with a stray key = %v", err)
				}
				err = l.Records(context.Background(), "s", 0, func(int64, []byte) error { return nil })
			}
			t.Logf("error: %v", err)
			if !errors.Is(err, tt.class) {
				t.Fatalf("reading the damaged session = %v, want %v", err, tt.class)
			}
			wantNames(t, err, "s", tt.seq)
			if err := scanErr(l, "other"); err != nil {
				t.Errorf("scan of the undamaged session = %v", err)
			}
			// verify and salvage still list the session.
			ids, err := l.SessionIDs(context.Background())
			if err != nil || strings.Join(ids, ",") != "other,s" {
				t.Errorf("SessionIDs = %v, %v", ids, err)
			}
		})
	}
}

// TestRecords: the raw walk gives every event's record, undecoded, with
// its seq, the same whether the event is applied to the tree (in a pack)
// or not yet (in the tail).
func TestRecords(t *testing.T) {
	ctx := context.Background()
	l, _ := openLog(t, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator})
	if err := l.Create(ctx, header("s")); err != nil {
		t.Fatal(err)
	}
	var want [][]byte
	for seq := int64(0); seq < 600; seq++ { // more than two read chunks
		ev := noteEvent(t, seq, marker("s", seq))
		want = append(want, codec.EncodeRecord(nil, ev.Raw)) // applied or not
		if err := l.Append(ctx, "s", []codec.Event{ev}); err != nil {
			t.Fatal(err)
		}
		if seq == 300 { // the first half in the tree, the rest in the tail
			if err := boltlog.Apply(l); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, from := range []int64{0, 255, 256, 599, 600} {
		var got [][]byte
		err := l.Records(ctx, "s", from, func(seq int64, rec []byte) error {
			if seq != from+int64(len(got)) {
				return errors.Newf("seq %d out of order", seq)
			}
			got = append(got, append([]byte(nil), rec...))
			return nil
		})
		if err != nil {
			t.Fatalf("Records(from %d) = %v", from, err)
		}
		if len(got) != len(want[from:]) {
			t.Fatalf("Records(from %d) = %d records, want %d", from, len(got), len(want[from:]))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[from+int64(i)]) {
				t.Fatalf("Records(from %d): record %d differs", from, i)
			}
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := l.Records(ctx, "s", 0, func(int64, []byte) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("Records with a failing fn = %v after %d calls, want stop after 1", err, n)
	}
	hrec, err := l.HeaderRecord(ctx, "s")
	if err != nil || !bytes.Equal(hrec, codec.EncodeRecord(nil, header("s").Raw)) {
		t.Errorf("HeaderRecord = %x, %v", hrec, err)
	}
	if err := l.Records(ctx, "nope", 0, func(int64, []byte) error { return nil }); !errors.Is(err, eventlog.ErrNotFound) {
		t.Errorf("Records(unknown) = %v, want ErrNotFound", err)
	}
}

// TestCorruptPacks damages packs, the values this code writes, through
// bbolt: a read stops at the damaged pack with ErrCorrupt naming the seq
// of its first event, and the events before it still read.
func TestCorruptPacks(t *testing.T) {
	tests := []struct {
		name   string
		damage func(last uint64, v []byte) (key uint64, val []byte)
	}{
		{name: "flipped byte", damage: func(last uint64, v []byte) (uint64, []byte) {
			v[len(v)/2] ^= 0x08
			return last, v
		}},
		{name: "torn", damage: func(last uint64, v []byte) (uint64, []byte) { return last, v[:len(v)-7] }},
		{name: "under another key", damage: func(last uint64, v []byte) (uint64, []byte) { return last + 1, v }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sessions.db")
			l, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := l.Create(ctx, header("s")); err != nil {
				t.Fatal(err)
			}
			for seq := int64(0); seq < damagedEvents; seq++ {
				ev := parse(t, fmt.Sprintf(`{"type":"x/note","seq":%d,"time":%d,"data":{"pad":%q}}`, seq, 1767225600000+seq, noise(900)))
				if err := l.Append(ctx, "s", []codec.Event{ev}); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			// Damage the second pack.
			var first int64
			boltUpdate(t, path, func(tx *bolt.Tx) error {
				eb := tx.Bucket([]byte("sessions")).Bucket([]byte("s")).Bucket([]byte("events"))
				c := eb.Cursor()
				k0, _ := c.First()
				k, v := c.Next()
				if k == nil || !codec.IsPack(v) {
					t.Fatalf("the store holds no second pack")
				}
				first = int64(binary.BigEndian.Uint64(k0)) + 1
				last := binary.BigEndian.Uint64(k)
				key, val := tt.damage(last, bytes.Clone(v))
				if err := eb.Delete(k); err != nil {
					return err
				}
				return eb.Put(binary.BigEndian.AppendUint64(nil, key), val)
			})
			l, err = boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			it, err := l.Scan(ctx, "s", 0)
			if err != nil {
				t.Fatal(err)
			}
			defer it.Close()
			read := int64(0)
			for ; ; read++ {
				if _, err = it.Next(); err != nil {
					break
				}
			}
			if !errors.Is(err, eventlog.ErrCorrupt) || read != first {
				t.Fatalf("Scan read %d events, then %v; want %d, then ErrCorrupt", read, err, first)
			}
			wantNames(t, err, "s", first)
		})
	}
}
