package boltlog_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/eventlog/eventlogtest"
	"github.com/sessionlog/sessionlog/rebuild"
)

// makeStore writes a store with the given sessions (each with turns
// complete turns) and closes it.
func makeStore(t *testing.T, sessions map[string]int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sessions.db")
	l, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for id, turns := range sessions {
		if err := l.Create(ctx, header(id)); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < turns; i++ {
			if err := l.Append(ctx, id, turnEvents(t, int64(3*i), int64(i+1))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// boltUpdate changes the store file directly, as damage or an older or
// newer program would.
func boltUpdate(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenReadOnlyMissing(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		setup func(path string)
	}{
		{name: "missing file", setup: func(string) {}},
		{name: "missing directory", setup: func(string) {}},
		{name: "empty file", setup: func(p string) {
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "directory", setup: func(p string) {
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("db%d", i))
			if tt.name == "missing directory" {
				path = filepath.Join(dir, "no-such-dir", "sessions.db")
			}
			tt.setup(path)
			before, statErr := os.Stat(path)
			l, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
			if err == nil {
				l.Close()
				t.Fatalf("Open(read-only) succeeded")
			}
			if !errors.Is(err, eventlog.ErrNotFound) {
				t.Fatalf("Open(read-only) = %v, want ErrNotFound", err)
			}
			if !strings.Contains(err.Error(), "no store at "+path) {
				t.Errorf("Open error %q does not say \"no store at %s\"", err, path)
			}
			after, err := os.Stat(path)
			if statErr != nil {
				if err == nil {
					t.Errorf("read-only Open created %s", path)
				}
				return
			}
			if after.Size() != before.Size() || after.ModTime() != before.ModTime() {
				t.Errorf("read-only Open changed %s", path)
			}
		})
	}
}

func TestOpenLocked(t *testing.T) {
	path := makeStore(t, map[string]int{"s": 1})
	l, err := boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// bbolt locks with flock(2), per open file description: a second
	// Open in this process waits for the lock like another process
	// would, then fails.
	tests := []struct {
		name string
		opts eventlog.Options
	}{
		{name: "read-write", opts: eventlog.Options{Unvalidated: true}},
		{name: "read-only", opts: eventlog.Options{ReadOnly: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l2, err := boltlog.Open(path, &tt.opts, &boltlog.Options{LockTimeout: 20 * time.Millisecond})
			if err == nil {
				l2.Close()
				t.Fatalf("second Open succeeded while the store is held")
			}
			if !errors.Is(err, eventlog.ErrLocked) {
				t.Fatalf("second Open = %v, want ErrLocked", err)
			}
			if len(errors.GetAllHints(err)) == 0 {
				t.Errorf("ErrLocked error has no hint")
			}
		})
	}
	// The holder is unaffected, and once it closes the store opens.
	if _, err := l.Head(context.Background(), "s"); err != nil {
		t.Fatalf("Head = %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l3, err := boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, &boltlog.Options{LockTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open after Close = %v", err)
	}
	l3.Close()
}

func TestOpenReadOnlySharesLock(t *testing.T) {
	path := makeStore(t, map[string]int{"s": 1})
	a, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, &boltlog.Options{LockTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("second read-only Open = %v", err)
	}
	defer b.Close()
	if err := b.Create(context.Background(), header("x")); !errors.Is(err, eventlog.ErrReadOnly) {
		t.Errorf("Create on a read-only store = %v, want ErrReadOnly", err)
	}
}

// formatRecord is the meta/format record of a store of version v, written
// by hand (a msgpack map {f: v}, plus extra pairs).
func formatRecord(v int64, extra ...string) []byte {
	p := codec.AppendMapHeader(nil, 1+len(extra)/2)
	p = codec.AppendInt(codec.AppendString(p, "f"), v)
	for i := 0; i+1 < len(extra); i += 2 {
		p = codec.AppendString(codec.AppendString(p, extra[i]), extra[i+1])
	}
	return codec.EncodeRecord(nil, p)
}

func TestOpenFormat(t *testing.T) {
	tests := []struct {
		name   string
		damage func(tx *bolt.Tx) error
		want   error
	}{
		{name: "newer", damage: func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("meta")).Put([]byte("format"), formatRecord(4))
		}, want: eventlog.ErrUnsupported},
		{name: "newer with new fields", damage: func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("meta")).Put([]byte("format"), formatRecord(7, "x", "y"))
		}, want: eventlog.ErrUnsupported},
		{name: "zero", damage: func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("meta")).Put([]byte("format"), formatRecord(0))
		}, want: eventlog.ErrCorrupt},
		{name: "crc", damage: func(tx *bolt.Tx) error {
			rec := formatRecord(1)
			rec[len(rec)-1] ^= 1
			return tx.Bucket([]byte("meta")).Put([]byte("format"), rec)
		}, want: eventlog.ErrCorrupt},
		{name: "missing", damage: func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("meta")).Delete([]byte("format"))
		}, want: eventlog.ErrCorrupt},
		{name: "no sessions bucket", damage: func(tx *bolt.Tx) error {
			return tx.DeleteBucket([]byte("sessions"))
		}, want: eventlog.ErrCorrupt},
		{name: "not a session store", damage: func(tx *bolt.Tx) error {
			if err := tx.DeleteBucket([]byte("meta")); err != nil {
				return err
			}
			_, err := tx.CreateBucket([]byte("other"))
			return err
		}, want: eventlog.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := makeStore(t, map[string]int{"s": 1})
			boltUpdate(t, path, tt.damage)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, ro := range []bool{true, false} {
				l, err := boltlog.Open(path, &eventlog.Options{ReadOnly: ro, Unvalidated: true}, nil)
				if err == nil {
					l.Close()
					t.Fatalf("Open(read-only %v) succeeded", ro)
				}
				if !errors.Is(err, tt.want) {
					t.Fatalf("Open(read-only %v) = %v, want %v", ro, err, tt.want)
				}
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(after) != string(before) {
				t.Errorf("a refused Open changed the file")
			}
		})
	}
}

func TestOpenNotAStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session.jsonl")
	line := `{"type":"session","version":0,"id":"x","createdAt":1}` + "\n"
	if err := os.WriteFile(path, []byte(strings.Repeat(line, 200)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, ro := range []bool{true, false} {
		l, err := boltlog.Open(path, &eventlog.Options{ReadOnly: ro, Unvalidated: true}, nil)
		if err == nil {
			l.Close()
			t.Fatalf("Open(read-only %v) of a JSONL file succeeded", ro)
		}
		if !errors.Is(err, eventlog.ErrCorrupt) {
			t.Errorf("Open(read-only %v) of a JSONL file = %v, want ErrCorrupt", ro, err)
		}
	}
	// The lock was released: a second attempt is refused the same way,
	// without waiting for a lock.
	if _, err := boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, &boltlog.Options{LockTimeout: time.Millisecond}); errors.Is(err, eventlog.ErrLocked) {
		t.Errorf("a refused Open left the file locked")
	}
}

func TestOpenEmptyBoltReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatalf("Open(read-only) of an empty bbolt file = %v", err)
	}
	defer l.Close()
	heads, err := l.Sessions(context.Background())
	if err != nil || len(heads) != 0 {
		t.Errorf("Sessions = %v, %v; want none", heads, err)
	}
	if _, err := l.Head(context.Background(), "x"); !errors.Is(err, eventlog.ErrNotFound) {
		t.Errorf("Head = %v, want ErrNotFound", err)
	}
}

// TestOpenRemovesUnpublished: a session bucket still marked as staged,
// without a head (an import that crashed), is invisible to readers and
// removed by the next read-write Open.
func TestOpenRemovesUnpublished(t *testing.T) {
	path := makeStore(t, map[string]int{"kept": 2, "staged": 3})
	boltUpdate(t, path, func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("sessions")).Bucket([]byte("staged"))
		if err := b.Put([]byte("staging"), []byte{1}); err != nil {
			return err
		}
		return b.Delete([]byte("head"))
	})
	ctx := context.Background()
	ro, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := ro.SessionIDs(ctx)
	if err != nil || strings.Join(ids, ",") != "kept" {
		t.Errorf("SessionIDs = %v, %v; want [kept]", ids, err)
	}
	if _, err := ro.Scan(ctx, "staged", 0); !errors.Is(err, eventlog.ErrNotFound) {
		t.Errorf("Scan(unpublished) = %v, want ErrNotFound", err)
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		ss := tx.Bucket([]byte("sessions"))
		if ss.Bucket([]byte("staged")) != nil {
			t.Errorf("the unpublished session is still in the file")
		}
		if ss.Bucket([]byte("kept")) == nil {
			t.Errorf("the published session was removed")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestClosed(t *testing.T) {
	ctx := context.Background()
	l, _ := openLog(t, nil)
	if err := l.Create(ctx, header("s")); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(ctx, "s", turnEvents(t, 0, 1)); err != nil {
		t.Fatal(err)
	}
	it, err := l.Scan(ctx, "s", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	calls := []struct {
		name string
		fn   func() error
	}{
		{"Create", func() error { return l.Create(ctx, header("t")) }},
		{"Append", func() error { return l.Append(ctx, "s", []codec.Event{noteEvent(t, 3, "x")}) }},
		{"Head", func() error { _, err := l.Head(ctx, "s"); return err }},
		{"Sessions", func() error { _, err := l.Sessions(ctx); return err }},
		{"SessionIDs", func() error { _, err := l.SessionIDs(ctx); return err }},
		{"HeaderRecord", func() error { _, err := l.HeaderRecord(ctx, "s"); return err }},
		{"Scan", func() error { _, err := l.Scan(ctx, "s", 0); return err }},
		{"Records", func() error { return l.Records(ctx, "s", 0, func(int64, []byte) error { return nil }) }},
		{"Fork", func() error { return l.Fork(ctx, "s", 2, codec.NewSessionHeader("c", 1, "", "s", 3)) }},
		{"Import", func() error { _, err := l.Import(ctx, header("i"), emptySource{}); return err }},
		{"open iterator", func() error { _, err := it.Next(); return err }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			if err := c.fn(); !errors.Is(err, eventlog.ErrClosed) {
				t.Fatalf("%s after Close = %v, want ErrClosed", c.name, err)
			}
		})
	}
	if err := it.Close(); err != nil {
		t.Errorf("Iterator.Close = %v", err)
	}
}

type emptySource struct{}

func (emptySource) Next() (codec.Event, error) { return codec.Event{}, io.EOF }

// TestReopenAppend: a session written by one Log takes appends from the
// next one (a restart): whatever validates appends starts from the stored
// events, not from nothing.
func TestReopenAppend(t *testing.T) {
	ctx := context.Background()
	for _, opts := range []eventlog.Options{{NewValidator: rebuild.NewValidator}, {NewValidator: eventlogtest.NewValidator}} {
		path := filepath.Join(t.TempDir(), "sessions.db")
		opts.NoSync = true
		l, err := boltlog.Open(path, &opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Create(ctx, header("s")); err != nil {
			t.Fatal(err)
		}
		if err := l.Append(ctx, "s", turnEvents(t, 0, 1)); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l, err = boltlog.Open(path, &opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		replace := parse(t, `{"type":"user/message","seq":3,"time":1,"data":{"content":[],"source":{"kind":"user"}},"surfaceOp":{"op":"replace","start":1,"end":1},"sourceEventSeqs":[1]}`)
		if err := l.Append(ctx, "s", []codec.Event{replace}); err != nil {
			t.Errorf("Append after reopening (validator %v) = %v", opts.NewValidator != nil, err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpenKeepsHeadlessSession: a session bucket that lost its head record
// without being staged is damage, not an unfinished import: it is listed,
// reported as corrupt, and never deleted by a read-write Open.
func TestOpenKeepsHeadlessSession(t *testing.T) {
	path := makeStore(t, map[string]int{"kept": 2, "hurt": 3})
	boltUpdate(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("sessions")).Bucket([]byte("hurt")).Delete([]byte("head"))
	})
	ctx := context.Background()
	for i := 0; i < 2; i++ { // read-write, then again
		l, err := boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := l.SessionIDs(ctx)
		if err != nil || strings.Join(ids, ",") != "hurt,kept" {
			t.Errorf("SessionIDs = %v, %v; want [hurt kept]", ids, err)
		}
		if _, err := l.Head(ctx, "hurt"); !errors.Is(err, eventlog.ErrCorrupt) {
			t.Errorf("Head(hurt) = %v, want ErrCorrupt", err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
