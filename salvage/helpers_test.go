package salvage_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/boltfmt/bolttest"
	"github.com/sessionlog/sessionlog/internal/loggen"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/salvage"
	"github.com/sessionlog/sessionlog/verify"
)

var (
	_ salvage.Source      = (*boltlog.Log)(nil)
	_ salvage.Destination = (*boltlog.Log)(nil)
)

// The sessions of the test store: two generated logs and a fork child of
// the first.
const (
	sessA = "gen-1"
	sessB = "gen-2"
	child = "child"
)

// sliceSource is an eventlog.Source over events.
type sliceSource struct{ evs []codec.Event }

func (s *sliceSource) Next() (codec.Event, error) {
	if len(s.evs) == 0 {
		return codec.Event{}, io.EOF
	}
	ev := s.evs[0]
	s.evs = s.evs[1:]
	return ev, nil
}

// writeOptions are the options of a store the tests write: the rebuild
// rules, as logtool uses them.
func writeOptions() *eventlog.Options {
	return &eventlog.Options{NoSync: true,
		NewValidator: rebuild.NewValidator}
}

// buildStore writes the test store and returns its path and, per session,
// its event payloads.
func buildStore(t *testing.T) (string, map[string][][]byte) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	l, err := boltlog.Open(path, writeOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][][]byte{}
	for seed, n := range map[int64]int{1: 150, 2: 90} {
		h, evs, err := loggen.Session(seed, loggen.Options{Events: n})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Import(ctx, h, &sliceSource{evs: evs}); err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			want[h.ID] = append(want[h.ID], ev.Raw)
		}
	}
	at := int64(-1)
	for i, p := range want[sessA] {
		ev, err := codec.DecodeEvent(p)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == codec.TypeTurnEnd && i < 100 {
			at = int64(i)
		}
	}
	if err := l.Fork(ctx, sessA, at, codec.NewSessionHeader(child, 2, "", sessA, at+1)); err != nil {
		t.Fatal(err)
	}
	want[child] = want[sessA][:at+1]
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// One record per key, as stores before format 3 hold them: the tests
	// damage one event's record, or its key (salvage reads packs the same
	// way, through boltfmt.ValueRecords).
	bolttest.UnpackStore(t, path)
	return path, want
}

// openRead opens the store at path read-only.
func openRead(t *testing.T, path string) *boltlog.Log {
	t.Helper()
	l, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// payloads reads a session's event payloads.
func payloads(t *testing.T, l *boltlog.Log, id string) [][]byte {
	t.Helper()
	it, err := l.Scan(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out [][]byte
	for {
		ev, err := it.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, append([]byte(nil), ev.Raw...))
	}
}

// checkCopy checks the new store at path against the report and the
// source store: every session the report says was copied is there, with
// exactly the first Copied events the source holds, and verifies clean;
// no other session is there.
func checkCopy(t *testing.T, path string, rep salvage.Report, source salvage.Source) {
	t.Helper()
	ctx := context.Background()
	l := openRead(t, path)
	ids, err := l.SessionIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	copied := map[string]bool{}
	for _, s := range rep.Sessions {
		if s.Lost || s.Skipped() {
			continue
		}
		copied[s.ID] = true
		got := payloads(t, l, s.ID)
		if int64(len(got)) != s.Copied {
			t.Errorf("session %s: the new store holds %d events, the report says %d copied", s.ID, len(got), s.Copied)
		}
		i := 0
		err := source.Records(ctx, s.ID, 0, func(seq int64, rec []byte) error {
			if i == len(got) {
				return errDone
			}
			p, err := codec.DecodeRecord(rec)
			if err != nil || seq != int64(i) || !bytes.Equal(p, got[i]) {
				return errors.Newf("seq %d: the copy differs from the source (%v)", i, err)
			}
			i++
			return nil
		})
		if err != nil && !errors.Is(err, errDone) {
			t.Errorf("session %s: %v", s.ID, err)
		}
		res, err := verify.Session(ctx, l, s.ID, verify.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed() {
			t.Errorf("session %s: the copy does not verify: %v", s.ID, res.Findings)
		}
	}
	if len(ids) != len(copied) {
		t.Errorf("the new store holds sessions %v, the report copied %v", ids, copied)
	}
}

var errDone = errors.New("salvage_test: done")

// fileSum is the SHA-256 of a file.
func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// seqKey is an event key: the seq, 8 bytes big-endian (eventlog's layout).
func seqKey(seq int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(seq)) }

// rewrite changes the store through bbolt, as a buggy writer would: fn
// gets the session's bucket and its events bucket.
func rewrite(t *testing.T, path, id string, fn func(b, events *bolt.Bucket) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("sessions")).Bucket([]byte(id))
		return fn(b, b.Bucket([]byte("events")))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// storedValue returns a copy of a value of a session's bucket (key in
// events when event is set).
func storedValue(t *testing.T, path, id string, key []byte, event bool) []byte {
	t.Helper()
	var v []byte
	rewrite(t, path, id, func(b, events *bolt.Bucket) error {
		if event {
			b = events
		}
		v = append([]byte(nil), b.Get(key)...)
		return nil
	})
	return v
}

// flipInFile flips one byte in the middle of the only copy of value in
// the file, as damage on disk would.
func flipInFile(t *testing.T, path string, value []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, value)
	if i < 0 || bytes.Contains(b[i+1:], value) {
		t.Fatalf("the value is not in the file exactly once")
	}
	b[i+len(value)/2] ^= 0x10
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// reencode returns the record of a payload edited by fn, with a valid CRC.
func reencode(t *testing.T, rec []byte, fn func(payload []byte) []byte) []byte {
	t.Helper()
	payload, err := codec.DecodeRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	return codec.EncodeRecord(nil, fn(append([]byte(nil), payload...)))
}
