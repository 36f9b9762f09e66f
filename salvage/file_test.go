package salvage_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/salvage"
)

// damageBucketPage flips a byte of the page id in the header of session
// id's root page: bbolt then panics reading the bucket, and boltlog.Open
// (which reads every session's bucket) refuses the whole store.
func damageBucketPage(t *testing.T, path, id string) {
	t.Helper()
	damageRootPage(t, path, id, func(page []byte) { page[2] ^= 0x5a })
}

// damageHeadKey flips a bit of the key "head" in session id's root page:
// eventlog then takes the session for an import that never finished.
func damageHeadKey(t *testing.T, path, id string) {
	t.Helper()
	damageRootPage(t, path, id, func(page []byte) {
		i := bytes.Index(page, []byte("head\x01")) // the key, then its record's version byte
		if i < 0 {
			t.Fatalf("no head key in the root page of %s", id)
		}
		page[i+1] ^= 0x01 // "hdad"
	})
}

// damageRootPage applies fn to the root page of session id's bucket.
func damageRootPage(t *testing.T, path, id string, fn func(page []byte)) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var root int64
	err = db.View(func(tx *bolt.Tx) error {
		root = int64(tx.Bucket([]byte("sessions")).Bucket([]byte(id)).Root())
		return nil
	})
	ps := int64(db.Info().PageSize)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil || root == 0 {
		t.Fatalf("root page of %s: %d, %v", id, root, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fn(b[root*ps : (root+1)*ps])
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestOpenFile reads stores through File, bbolt directly: a clean store
// copies whole, as through eventlog; a store that boltlog.Open refuses
// because one session's page is damaged loses that session only.
func TestOpenFile(t *testing.T) {
	t.Run("clean", func(t *testing.T) {
		path, orig := buildStore(t)
		f, err := salvage.OpenFile(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if f.FormatErr() != nil {
			t.Errorf("FormatErr() = %v", f.FormatErr())
		}
		out := filepath.Join(t.TempDir(), "new.db")
		rep, err := salvage.Into(context.Background(), f, out, &salvage.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		checkReport(t, rep, nil, orig)
		checkCopy(t, out, rep, openRead(t, path))
	})
	t.Run("session page damaged", func(t *testing.T) {
		path, orig := buildStore(t)
		damageBucketPage(t, path, sessB)
		// eventlog opens the store (its page check keeps the damage to
		// the session it is in) and refuses to read that session.
		l := openRead(t, path)
		if _, err := l.Head(context.Background(), sessB); !errors.Is(err, eventlog.ErrCorrupt) {
			t.Fatalf("eventlog Head of the damaged session = %v, want ErrCorrupt", err)
		}
		before := fileSum(t, path)
		f, err := salvage.OpenFile(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		out := filepath.Join(t.TempDir(), "new.db")
		rep, err := salvage.Into(context.Background(), f, out, &salvage.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		if fileSum(t, path) != before {
			t.Fatal("salvage changed the damaged store")
		}
		checkReport(t, rep, []want{{id: sessB, lost: true, cause: salvage.Bucket, at: -1, later: -1}}, orig)
		// The damaged session cannot be read by eventlog: compare with a
		// clean copy of the same sessions instead.
		clean, _ := buildStore(t)
		checkCopy(t, out, rep, openRead(t, clean))
	})
	t.Run("head key damaged", func(t *testing.T) {
		// eventlog lists the session no more (it looks unpublished);
		// salvage, reading the bucket keys, finds the head record under
		// the damaged key, copies the session whole and notes it.
		path, orig := buildStore(t)
		damageHeadKey(t, path, sessB)
		ids, err := openRead(t, path).SessionIDs(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("eventlog lists %v", ids)
		st, err := salvage.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		out := filepath.Join(t.TempDir(), "new.db")
		rep, err := salvage.Into(context.Background(), st, out, &salvage.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		checkReport(t, rep, nil, orig)
		checkCopy(t, out, rep, st)
		if notes := st.Notes(); len(notes) != 1 || !strings.Contains(notes[0], `session "gen-2": its head record was found under the key "hdad"`) {
			t.Errorf("Notes() = %q", notes)
		}
	})
	for _, key := range []string{"events", "header\x01"} {
		t.Run("key damaged "+key[:6], func(t *testing.T) {
			path, orig := buildStore(t)
			damageRootPage(t, path, sessB, func(page []byte) {
				i := bytes.Index(page, []byte(key))
				if i < 0 {
					t.Fatalf("no key %q in the root page", key)
				}
				page[i+2] ^= 0x01
			})
			st, err := salvage.Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			out := filepath.Join(t.TempDir(), "new.db")
			rep, err := salvage.Into(context.Background(), st, out, &salvage.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			checkReport(t, rep, nil, orig)
			checkCopy(t, out, rep, st)
			if notes := st.Notes(); len(notes) != 1 || !strings.Contains(notes[0], `session "gen-2": its `) {
				t.Errorf("Notes() = %q", notes)
			}
		})
	}
	t.Run("refusals", func(t *testing.T) {
		dir := t.TempDir()
		notStore := filepath.Join(dir, "not-a-store")
		if err := os.WriteFile(notStore, []byte(strings.Repeat("not bbolt ", 1000)), 0o600); err != nil {
			t.Fatal(err)
		}
		newer, _ := buildStore(t)
		db, err := bolt.Open(newer, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = db.Update(func(tx *bolt.Tx) error {
			// {f: 4}: a format newer than this code's.
			return tx.Bucket([]byte("meta")).Put([]byte("format"), codec.EncodeRecord(nil, []byte{0x81, 0xa1, 'f', 0x04}))
		})
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name, path string
			class      error
		}{
			{"missing", filepath.Join(dir, "missing.db"), eventlog.ErrNotFound},
			{"not a store", notStore, eventlog.ErrCorrupt},
			{"newer format", newer, eventlog.ErrUnsupported},
		} {
			f, err := salvage.OpenFile(tt.path, nil)
			if !errors.Is(err, tt.class) {
				t.Errorf("OpenFile(%s) = %v, want %v", tt.name, err, tt.class)
			}
			if f != nil {
				f.Close()
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "missing.db")); err == nil {
			t.Error("OpenFile created a missing store")
		}
	})
}

// TestFallback: where the primary source fails, the secondary reads on:
// the session list, header records, and records from where the primary
// stopped delivering them (eventlog drops the chunk a failure is in).
func TestFallback(t *testing.T) {
	path, orig := buildStore(t)
	l := openRead(t, path)
	f, err := salvage.OpenFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	failing := &failingSource{Log: l, failAt: 40}
	out := filepath.Join(t.TempDir(), "new.db")
	rep, err := salvage.Into(context.Background(), salvage.Fallback(failing, f), out, &salvage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, rep, nil, orig)
	checkCopy(t, out, rep, l)
	if failing.records == 0 || failing.lists == 0 || failing.headers == 0 {
		t.Errorf("the primary failed %d lists, %d headers, %d record walks; want each at least once",
			failing.lists, failing.headers, failing.records)
	}

	// Without the fallback, the same failures lose data.
	out2 := filepath.Join(t.TempDir(), "new2.db")
	rep2, err := salvage.Into(context.Background(), &failingSource{Log: l, failAt: 40}, out2, &salvage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rep2.Damaged() {
		t.Errorf("without a fallback, a failing source copies everything: %s", rep2.Summary())
	}
}

// failingSource fails as eventlog does on damage it trips on: the session
// list fails (returning the ids before the damage), the header record of
// gen-2 fails, and a walk of records that reaches seq failAt fails without
// delivering the records of its chunk.
type failingSource struct {
	*boltlog.Log
	failAt                  int64
	lists, headers, records int
}

var errFailing = errors.Mark(errors.New("salvage_test: damaged page"), eventlog.ErrCorrupt)

func (s *failingSource) SessionIDs(ctx context.Context) ([]string, error) {
	ids, err := s.Log.SessionIDs(ctx)
	if err != nil {
		return nil, err
	}
	s.lists++
	return ids[:1], errFailing
}

func (s *failingSource) HeaderRecord(ctx context.Context, id string) ([]byte, error) {
	if id == sessB {
		s.headers++
		return nil, errFailing
	}
	return s.Log.HeaderRecord(ctx, id)
}

func (s *failingSource) Records(ctx context.Context, id string, from int64, fn func(int64, []byte) error) error {
	var chunk [][]byte
	var seqs []int64
	err := s.Log.Records(ctx, id, from, func(seq int64, rec []byte) error {
		if seq >= s.failAt {
			return errFailing
		}
		chunk, seqs = append(chunk, append([]byte(nil), rec...)), append(seqs, seq)
		return nil
	})
	if errors.Is(err, errFailing) {
		s.records++
		return err // the chunk is dropped
	}
	for i := range chunk {
		if err := fn(seqs[i], chunk[i]); err != nil {
			return err
		}
	}
	return err
}

// TestSessionString pins the report line of each kind of outcome.
func TestSessionString(t *testing.T) {
	crc := errors.New("codec: record crc mismatch")
	tests := []struct {
		name string
		s    salvage.Session
		want string
	}{
		{"whole", salvage.Session{ID: "s1", Copied: 12, End: 12, At: -1},
			"s1 ok: copied 12 events"},
		{"damaged", salvage.Session{ID: "s1", Copied: 4, End: 12, Cause: salvage.CRC, At: 4, Err: crc, Later: 7},
			"s1 damaged: copied 4 of 12 events, lost seqs [4,12); crc at seq 4: codec: record crc mismatch; 7 later records still pass their CRC but follow the damage"},
		{"end unknown", salvage.Session{ID: "s1", Copied: 4, End: -1, Cause: salvage.Read, At: 4, Err: crc, HeadErr: crc},
			"s1 damaged: copied 4 events, lost seqs [4,?); unreadable at seq 4: codec: record crc mismatch; head record unreadable, so the event count is a lower bound: codec: record crc mismatch"},
		{"lost", salvage.Session{ID: "s1", Lost: true, End: 9, Cause: salvage.Header, At: -1, Err: crc},
			"s1 lost: nothing copied, lost seqs [0,9); header record: codec: record crc mismatch"},
		{"odd id", salvage.Session{ID: "a b\n\x00", Copied: 1, End: 1, At: -1},
			`"a b\n\x00" ok: copied 1 event`},
		{"chain", salvage.Session{ID: "s1", Copied: 3, End: 3, Cause: salvage.Chain, At: -1, Err: crc},
			"s1 damaged: copied 3 of 3 events; chain hash: codec: record crc mismatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.String(); got != tt.want {
				t.Errorf("String() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestUnpublished: a session an import was still staging when the store
// was last written (a crash) was never published: salvage skips it, and
// that is not damage.
func TestUnpublished(t *testing.T) {
	path, _ := buildStore(t)
	rewrite(t, path, sessB, func(b, _ *bolt.Bucket) error {
		if err := b.Delete([]byte("head")); err != nil {
			return err
		}
		return b.Put([]byte("staging"), []byte{1})
	})
	st, err := salvage.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out := filepath.Join(t.TempDir(), "new.db")
	rep, err := salvage.Into(context.Background(), st, out, &salvage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", reportText(rep))
	var skipped []string
	for _, s := range rep.Sessions {
		if s.Skipped() {
			skipped = append(skipped, s.String())
		} else if !s.Whole() {
			t.Errorf("session %s: %s", s.ID, s.String())
		}
	}
	want := sessB + " skipped: never published (an import or fork that did not finish)"
	if len(skipped) != 1 || skipped[0] != want {
		t.Errorf("skipped %q, want [%q]", skipped, want)
	}
	if rep.Damaged() {
		t.Errorf("Damaged() = true for a store whose only oddity is an unfinished import")
	}
	if !strings.HasSuffix(rep.Summary(), "; 1 never published, skipped") {
		t.Errorf("Summary() = %q", rep.Summary())
	}
	checkCopy(t, out, rep, st)
}
