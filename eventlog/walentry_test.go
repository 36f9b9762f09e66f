package eventlog

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/cockroachdb/errors"
)

// sampleOps are the writes of one group commit: a creation and appends.
func sampleOps() []walOp {
	return []walOp{
		{id: "new", headerRec: []byte("header-record"), headRec: []byte("head-0")},
		{id: "old", first: 41, recs: [][]byte{[]byte("r41"), []byte("r42")}, headRec: []byte("head-43")},
		{id: "x", first: 0, recs: [][]byte{bytes.Repeat([]byte{7}, 300)}, headRec: []byte("head-1")},
	}
}

func TestWALEntryRoundTrip(t *testing.T) {
	ops := sampleOps()
	p := encodeWALEntry(nil, ops)
	e, err := decodeWALEntry(9, p)
	if err != nil {
		t.Fatal(err)
	}
	if e.lsn != 9 || len(e.ops) != len(ops) {
		t.Fatalf("decoded lsn %d with %d ops", e.lsn, len(e.ops))
	}
	var size int64
	for i := range ops {
		if !reflect.DeepEqual(e.ops[i], ops[i]) {
			t.Errorf("op %d = %+v, want %+v", i, e.ops[i], ops[i])
		}
		size += ops[i].size()
	}
	if e.size != size {
		t.Errorf("size %d, want %d", e.size, size)
	}
}

// TestWALEntryDamage: every truncation and every single-byte change of
// an entry decodes to an error or to a well-formed entry, never a panic;
// truncations are always errors. (The log's CRC catches damage first;
// this is the second line.)
func TestWALEntryDamage(t *testing.T) {
	p := encodeWALEntry(nil, sampleOps())
	for n := 0; n < len(p); n++ {
		if _, err := decodeWALEntry(1, p[:n]); err == nil {
			t.Errorf("a truncation to %d bytes decoded", n)
		}
	}
	refused := 0
	for i := range p {
		q := bytes.Clone(p)
		q[i] ^= 0x5a
		if _, err := decodeWALEntry(1, q); err != nil {
			refused++
			if !errors.IsAny(err, ErrCorrupt, ErrUnsupported) {
				t.Fatalf("byte %d: %v is neither ErrCorrupt nor ErrUnsupported", i, err)
			}
		}
	}
	if refused == 0 {
		t.Fatal("no changed byte was refused")
	}
}

func FuzzWALEntry(f *testing.F) {
	f.Add(encodeWALEntry(nil, sampleOps()))
	f.Add([]byte{walEntryVersion, 1, opAppend, 1, 'a', 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, p []byte) {
		e, err := decodeWALEntry(1, p)
		if err != nil {
			return
		}
		// What decodes re-encodes to the same bytes.
		if q := encodeWALEntry(nil, e.ops); !bytes.Equal(p, q) {
			t.Fatalf("decoded %x, re-encoded %x", p, q)
		}
	})
}

// TestTailsTrim: the tail keeps exactly the writes past the applied lsn,
// per session, and drops a session once all its writes are applied.
func TestTailsTrim(t *testing.T) {
	tl := newTails()
	rec := func(s string, seq int) []byte { return []byte(fmt.Sprintf("%s-%d", s, seq)) }
	add := func(lsn uint64, ops ...walOp) {
		var size int64
		for i := range ops {
			size += ops[i].size()
		}
		tl.add(walEntry{lsn: lsn, ops: ops, size: size})
	}
	add(1, walOp{id: "a", headerRec: []byte("ha"), headRec: []byte("a0")})
	add(2, walOp{id: "a", first: 0, recs: [][]byte{rec("a", 0), rec("a", 1)}, headRec: []byte("a2")},
		walOp{id: "b", first: 5, recs: [][]byte{rec("b", 5)}, headRec: []byte("b6")})
	add(3, walOp{id: "a", first: 2, recs: [][]byte{rec("a", 2)}, headRec: []byte("a3")})

	v := tl.view("a")
	if !v.ok || v.first != 0 || len(v.recs) != 3 || string(v.headRec) != "a3" || string(v.headerRec) != "ha" {
		t.Fatalf("view(a) = %+v", v)
	}
	if got := tl.created(); !reflect.DeepEqual(got, []string{"a"}) {
		t.Fatalf("created = %q", got)
	}
	tl.trim(1)
	if v := tl.view("a"); v.headerRec != nil || v.first != 0 || len(v.recs) != 3 {
		t.Fatalf("after trim(1), view(a) = %+v", v)
	}
	tl.trim(2)
	if tl.has("b") {
		t.Fatal("b's only write was applied, but it still has a tail")
	}
	v = tl.view("a")
	if v.first != 2 || len(v.recs) != 1 || string(v.recs[0]) != "a-2" {
		t.Fatalf("after trim(2), view(a) = %+v", v)
	}
	if n := len(tl.pending()); n != 1 {
		t.Fatalf("%d entries pending, want 1", n)
	}
	tl.trim(3)
	if tl.has("a") || tl.size() != 0 || len(tl.pending()) != 0 {
		t.Fatalf("after trim(3): tail of a %v, %d bytes, %d entries", tl.has("a"), tl.size(), len(tl.pending()))
	}
}

func TestMergeIDs(t *testing.T) {
	got := mergeIDs([]string{"a", "c", "e"}, []string{"b", "c", "f"})
	if want := []string{"a", "b", "c", "e", "f"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("mergeIDs = %q, want %q", got, want)
	}
}
