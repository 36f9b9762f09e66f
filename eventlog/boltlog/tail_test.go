package boltlog

import (
	"fmt"
	"testing"
)

// TestTailViewSurvivesTrim: a reader's view of a session's tail keeps its
// records when the applier trims them while the reader still holds it.
// The crash proof found this: trim cleared the shared array, and a verify
// racing an apply round read the trimmed records as empty (codec: record
// of 0 bytes) and a chain hash that did not match the head.
func TestTailViewSurvivesTrim(t *testing.T) {
	ts := newTails()
	rec := func(seq int) []byte { return []byte(fmt.Sprintf("record %d", seq)) }
	for lsn := uint64(1); lsn <= 3; lsn++ {
		first := int64(lsn-1) * 2
		ts.add(walEntry{LSN: lsn, Ops: []walOp{{ID: "s", First: first,
			Recs: [][]byte{rec(int(first)), rec(int(first) + 1)}, HeadRec: []byte("head")}}})
	}
	v := ts.view("s")
	if len(v.recs) != 6 || v.first != 0 {
		t.Fatalf("view holds %d records from seq %d; want 6 from 0", len(v.recs), v.first)
	}
	ts.trim(2) // the tree holds lsn 1 and 2; the tail keeps seq 4 and 5
	if w := ts.view("s"); w.first != 4 || len(w.recs) != 2 {
		t.Fatalf("after the trim the tail holds %d records from seq %d; want 2 from 4", len(w.recs), w.first)
	}
	for i, r := range v.recs {
		if string(r) != string(rec(i)) {
			t.Errorf("the view taken before the trim reads seq %d as %q; want %q", i, r, rec(i))
		}
	}
}
