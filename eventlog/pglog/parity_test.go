package pglog_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/eventlog/eventlogtest"
)

// TestHeadParity imports every corpus log the stores accept into a bbolt
// Log and into PostgreSQL, and compares the heads: the same next seq,
// turns, last time, stored bytes and chain hash, the same header record.
func TestHeadParity(t *testing.T) {
	files, _ := filepath.Glob("../../../shared/testdata/dsh/cases/*/session.jsonl")
	if len(files) == 0 {
		t.Skip("DSH corpus not present (../shared is absent)")
	}
	ctx := context.Background()
	pg := open(t, eventlog.Options{NewValidator: eventlogtest.NewValidator})
	bb, err := boltlog.Open(filepath.Join(t.TempDir(), "s.db"), &eventlog.Options{NoSync: true, NewValidator: eventlogtest.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Close()
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var heads [2]eventlog.Head
		var recs [2][]byte
		ok := true
		for i, s := range []interface {
			eventlog.Store
			HeaderRecord(context.Context, string) ([]byte, error)
		}{bb, pg} {
			sc := codec.NewScanner(bytes.NewReader(data), codec.Limits{})
			h, err := sc.Header()
			if err != nil {
				ok = false
				break
			}
			// Cases share ids: store each under its case name.
			h = codec.NewSessionHeader(filepath.Base(filepath.Dir(f)), h.CreatedAt, h.Cwd, h.ParentSession, h.SeedLength)
			if _, err := s.Import(ctx, h, sc); err != nil {
				ok = false
				break
			}
			if heads[i], err = s.Head(ctx, h.ID); err != nil {
				t.Fatal(err)
			}
			if recs[i], err = s.HeaderRecord(ctx, h.ID); err != nil {
				t.Fatal(err)
			}
		}
		if !ok {
			continue
		}
		n++
		a, b := heads[0], heads[1]
		if a.Next != b.Next || a.Turns != b.Turns || a.LastTime != b.LastTime || a.StoredBytes != b.StoredBytes ||
			a.Chain != b.Chain || !bytes.Equal(recs[0], recs[1]) || !bytes.Equal(a.Header.Raw, b.Header.Raw) {
			t.Errorf("%s: heads differ:\nbbolt %+v\npg    %+v", f, a, b)
		}
	}
	if n < 100 {
		t.Fatalf("only %d corpus logs imported into both", n)
	}
	t.Logf("%d corpus logs: identical heads on both stores", n)
}
