package boltlog

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
)

// TestAppendHoldsRecordsOnly: the unapplied tail counts the bytes of the
// records it holds; an append of compressible events must hold only those
// bytes, not the room their uncompressed size would take, or the tail's
// bound (MaxUnapplied) bounds a fraction of its memory.
func TestAppendHoldsRecordsOnly(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "s.db"), &eventlog.Options{Unvalidated: true, NoSync: true},
		&Options{WAL: WALOptions{ApplyInterval: 1 << 40}})
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
	// Records of codec.BetterMin and more are compressed at S2's better
	// level: its dictionary tables are built once per process (~0.3 MiB,
	// built here first), and its per-call tables (~0.6 MiB) are pooled
	// scratch, freed by two collections (one moves a sync.Pool's items
	// to its victim cache), before and after, so that neither side counts
	// them. None of it is a record.
	codec.EncodeEventRecord(nil, evs[0].Raw)
	gc := func() { runtime.GC(); runtime.GC() }
	var before, after runtime.MemStats
	gc()
	runtime.ReadMemStats(&before)
	if err := l.Append(ctx, "s", evs); err != nil {
		t.Fatal(err)
	}
	gc()
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

// TestAppendLargeEventRoom (issue 19 item 7): the record of a long
// answer's payload is built in a buffer of its compressed size. Sized
// for the payload, the records' buffer put one more copy of the answer
// in memory, beside the payload, its views and the compressor's scratch,
// at the moment the process holds the most of it.
func TestAppendLargeEventRoom(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "s.db"), &eventlog.Options{Unvalidated: true, NoSync: true},
		&Options{WAL: WALOptions{ApplyInterval: 1 << 40}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	if err := l.Create(ctx, codec.NewSessionHeader("s", 1, "", "", 0)); err != nil {
		t.Fatal(err)
	}
	var o codec.Object
	o.Str("text", strings.Repeat("compressible ", 1<<20))
	ev, err := codec.NewEvent("x/opaque", 0, 1, o.Bytes(), codec.SurfaceOp{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := l.Append(ctx, "s", []codec.Event{ev}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	// The compressor's scratch takes a little more than the payload;
	// the records, the log's entry and its frame a fraction of it.
	allocated := after.TotalAlloc - before.TotalAlloc
	if limit := uint64(len(ev.Raw)) * 3 / 2; allocated > limit {
		t.Errorf("an append of a %d byte event allocated %d bytes (want at most %d)", len(ev.Raw), allocated, limit)
	}
}

// TestLargeEntryBufferNotKept (issue 19 item 7): the committer's encoding
// buffer is not kept at the size of a long answer's entry once that is
// written; it held a compressed copy of the answer for the store's life.
func TestLargeEntryBufferNotKept(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "s.db"), &eventlog.Options{Unvalidated: true, NoSync: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	if err := l.Create(ctx, codec.NewSessionHeader("s", 1, "", "", 0)); err != nil {
		t.Fatal(err)
	}
	text := make([]byte, 4<<20) // letters that do not compress much
	x := uint64(1)
	for i := range text {
		x = x*6364136223846793005 + 1442695040888963407
		text[i] = 'a' + byte(x>>58)%26
	}
	var o codec.Object
	o.Str("text", string(text))
	ev, err := codec.NewEvent("x/opaque", 0, 1, o.Bytes(), codec.SurfaceOp{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(ctx, "s", []codec.Event{ev}); err != nil {
		t.Fatal(err)
	}
	// Append's result came from the committer after it wrote the entry.
	if kept := cap(l.walBuf); kept > maxWALBuf {
		t.Errorf("the committer keeps a %d byte buffer after a %d byte event", kept, len(ev.Raw))
	}
}
