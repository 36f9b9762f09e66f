package boltlog

import (
	"sort"
	"strings"
	"sync"

	"github.com/sessionlog/sessionlog/internal/boltfmt"
)

// The unapplied tail.
//
// A write is acknowledged once its write-ahead log record is synced; the
// applier copies it into the bbolt tree later (apply.go). Until then the
// tail holds it in memory, so that every reader sees every acknowledged
// write at once: readers look at the tail first and at the tree for what
// the tail does not hold. The order matters. The applier commits the tree
// before it trims the tail, so a reader that finds no tail for a session
// (or finds its tail starting at seq F) and then reads the tree finds
// everything the tail no longer holds (every seq below F) in the tree.
//
// Records, head records and header records in the tail are immutable:
// readers keep slices of them without copying. So is the array of a
// session's record slices as far as a view reaches: trim gives the tail a
// new array rather than clearing the old one under a reader.

// walOp and walEntry are a write of a write-ahead log record and the
// record, as boltfmt encodes them.
type (
	walOp    = boltfmt.Op
	walEntry = boltfmt.Entry
)

// tail is one session's unapplied writes.
type tail struct {
	first     int64    // seq of recs[0]
	recs      [][]byte // unapplied event records, contiguous
	headRec   []byte   // the newest head record
	headerRec []byte   // the header record while the creation is unapplied, else nil
	lsn       uint64   // the newest lsn that wrote the session
}

// tailView is a reader's snapshot of a session's tail.
type tailView struct {
	ok        bool
	first     int64
	recs      [][]byte
	headRec   []byte
	headerRec []byte
}

// next is the seq after the tail's records.
func (v *tailView) next() int64 { return v.first + int64(len(v.recs)) }

// tails is the unapplied tail of every session, and the write-ahead log
// records not yet applied, in lsn order.
type tails struct {
	mu      sync.Mutex
	m       map[string]*tail
	entries []walEntry
	bytes   int64 // record bytes in entries
	// applied is broadcast when an apply trims the tail (writers waiting
	// for room, Close).
	applied *sync.Cond
}

func newTails() *tails {
	t := &tails{m: make(map[string]*tail)}
	t.applied = sync.NewCond(&t.mu)
	return t
}

// add records the entry's writes; lsns must come in order.
func (t *tails) add(e walEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range e.Ops {
		op := &e.Ops[i]
		tl := t.m[op.ID]
		if tl == nil {
			tl = &tail{first: op.First}
			t.m[op.ID] = tl
		}
		if op.HeaderRec != nil {
			tl.headerRec = op.HeaderRec
			tl.first = 0
		}
		if len(tl.recs) == 0 {
			tl.first = op.First
		}
		tl.recs = append(tl.recs, op.Recs...)
		tl.headRec = op.HeadRec
		tl.lsn = e.LSN
	}
	t.entries = append(t.entries, e)
	t.bytes += e.Size
}

// view returns a snapshot of the session's tail.
func (t *tails) view(id string) tailView {
	t.mu.Lock()
	defer t.mu.Unlock()
	tl := t.m[id]
	if tl == nil {
		return tailView{}
	}
	return tailView{ok: true, first: tl.first, recs: tl.recs[:len(tl.recs):len(tl.recs)], headRec: tl.headRec, headerRec: tl.headerRec}
}

// has reports whether the session has unapplied writes.
func (t *tails) has(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[id] != nil
}

// heads returns, in id order, the newest head (and unapplied header)
// records of the sessions after `after` that have unapplied writes.
func (t *tails) heads(after string) []pageRec {
	t.mu.Lock()
	var out []pageRec
	for id, tl := range t.m {
		if id > after {
			out = append(out, pageRec{id: id, head: tl.headRec, headerRec: tl.headerRec})
		}
	}
	t.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// created returns, in id order, the sessions whose creation is
// unapplied.
func (t *tails) created() []string {
	var ids []string
	for _, r := range t.heads("") {
		if r.headerRec != nil {
			ids = append(ids, r.id)
		}
	}
	return ids
}

// size returns the record bytes not yet applied.
func (t *tails) size() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.bytes
}

// pending returns the unapplied entries, oldest first (a copy of the
// list; the entries are immutable).
func (t *tails) pending() []walEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]walEntry(nil), t.entries...)
}

// trim drops the writes of every entry up to lsn, which the tree now
// holds, and wakes the writers waiting for room.
func (t *tails) trim(lsn uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := 0
	for ; k < len(t.entries) && t.entries[k].LSN <= lsn; k++ {
		e := &t.entries[k]
		for i := range e.Ops {
			op := &e.Ops[i]
			tl := t.m[op.ID]
			if tl == nil {
				continue
			}
			if tl.lsn <= lsn {
				delete(t.m, op.ID)
				continue
			}
			if op.HeaderRec != nil {
				tl.headerRec = nil
			}
			// A new array, never clear(tl.recs[:n]): readers' views
			// (view) share the old one and may still be reading it.
			n := min(len(op.Recs), len(tl.recs))
			tl.recs = append([][]byte(nil), tl.recs[n:]...)
			tl.first += int64(n)
		}
		t.bytes -= e.Size
		t.entries[k] = walEntry{}
	}
	t.entries = t.entries[k:]
	t.applied.Broadcast()
}

// waitBelow blocks until the unapplied bytes are below limit or stop
// returns true (checked on every wake-up).
func (t *tails) waitBelow(limit int64, stop func() bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.bytes >= limit && !stop() {
		t.applied.Wait()
	}
}

// wake wakes the waiters of waitBelow (to re-check stop).
func (t *tails) wake() {
	t.mu.Lock()
	t.applied.Broadcast()
	t.mu.Unlock()
}

// mergeIDs merges two sorted id lists without duplicates.
func mergeIDs(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || (len(a) > 0 && strings.Compare(a[0], b[0]) < 0):
			out, a = append(out, a[0]), a[1:]
		case len(a) == 0 || strings.Compare(b[0], a[0]) < 0:
			out, b = append(out, b[0]), b[1:]
		default:
			out, a, b = append(out, a[0]), a[1:], b[1:]
		}
	}
	return out
}
