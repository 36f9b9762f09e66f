package eventlog

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
)

// TestAppendHoldsRecordsOnly: the unapplied tail counts the bytes of the
// records it holds; an append of compressible events must hold only those
// bytes, not the room their uncompressed size would take, or the tail's
// bound (MaxUnapplied) bounds a fraction of its memory.
func TestAppendHoldsRecordsOnly(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "s.db"), &Options{Unvalidated: true, NoSync: true,
		WAL: WALOptions{ApplyInterval: 1 << 40}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	if err := l.Create(ctx, codec.NewSessionHeader("s", 1, "", "", 0)); err != nil {
		t.Fatal(err)
	}
	var evs []codec.Event
	for i := 0; i < 64; i++ {
		var o codec.Object
		o.Str("text", strings.Repeat("compressible ", 2000))
		ev, err := codec.NewEvent("x/opaque", int64(i), 1, o.Bytes(), codec.SurfaceOp{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := l.Append(ctx, "s", evs); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	v := l.tails.view("s")
	counted := 0
	for _, r := range v.recs {
		counted += len(r)
	}
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if len(v.recs) != 64 || grew > int64(counted)+256<<10 {
		t.Errorf("%d records of %d bytes: the heap kept %d bytes more", len(v.recs), counted, grew)
	}
	runtime.KeepAlive(evs)
}
