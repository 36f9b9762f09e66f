package boltlog

import (
	"fmt"
	"reflect"
	"testing"
)

// TestTailsTrim: the tail keeps exactly the writes past the applied lsn,
// per session, and drops a session once all its writes are applied.
func TestTailsTrim(t *testing.T) {
	tl := newTails()
	rec := func(s string, seq int) []byte { return []byte(fmt.Sprintf("%s-%d", s, seq)) }
	add := func(lsn uint64, ops ...walOp) {
		var size int64
		for i := range ops {
			size += ops[i].Size()
		}
		tl.add(walEntry{LSN: lsn, Ops: ops, Size: size})
	}
	add(1, walOp{ID: "a", HeaderRec: []byte("ha"), HeadRec: []byte("a0")})
	add(2, walOp{ID: "a", First: 0, Recs: [][]byte{rec("a", 0), rec("a", 1)}, HeadRec: []byte("a2")},
		walOp{ID: "b", First: 5, Recs: [][]byte{rec("b", 5)}, HeadRec: []byte("b6")})
	add(3, walOp{ID: "a", First: 2, Recs: [][]byte{rec("a", 2)}, HeadRec: []byte("a3")})

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
