package boltfmt

import (
	"bytes"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"
)

// EventWalk is a walk over the values of a session's events bucket, in
// key order, in chunks: one Walk per read transaction. It is the one walk
// of the records as stored, for the store's Records and for salvage's,
// which reads a damaged store: it never moves onto a page CheckPages
// found damaged, and checks every value against the transaction's pages
// before reading it.
type EventWalk struct {
	// Session names the session, for errors and the damage register.
	Session string
	// Next is the seq to read from: the first wanted, then where the last
	// Walk stopped.
	Next int64
	// Damage is what CheckPages found; nil when nothing is damaged.
	Damage *PageDamage
	// CheckSeek makes a walk from seq 0 check that a seek for seq 0 finds
	// the first key: readers seek, and a damaged branch page can send a
	// seek astray while the leaves are whole. (Salvage walks past that.)
	CheckSeek bool
	// MaxRecords and MaxBytes bound one Walk (but it passes at least one
	// value's records).
	MaxRecords, MaxBytes int
}

// errStop ends a ValueRecords walk early.
var errStop = errors.New("boltfmt: stop")

// Walk passes to fn the record of every event that the values of eb hold
// from seq w.Next on, as ValueRecords gives them (a pack's events framed
// one by one, a value written before format 3 as it is), valid only
// during the call; m is the bounds of eb's transaction. It stops when fn
// returns false, when MaxRecords records or MaxBytes bytes have been
// passed (more is true: call Walk again, in a new transaction), or at the
// end of the bucket. A key that is not a seq, a bucket where a value
// belongs and a value outside the store's pages stop it with err
// (ErrCorrupt); damage from the register stops it before the damaged
// page, after passing what precedes it, as damaged.
func (w *EventWalk) Walk(eb *bolt.Bucket, m Bounds, fn func(seq int64, rec []byte) bool) (more bool, damaged, err error) {
	if damaged = w.Damage.Err(w.Session, w.Next); damaged != nil {
		return false, damaged, nil
	}
	c := eb.Cursor()
	k, v := c.Seek(SeqKey(w.Next))
	if w.Next == 0 {
		// Keys that sort before seq 0 are damage too: start at the first.
		sk := k
		k, v = c.First()
		if w.CheckSeek && k != nil && !bytes.Equal(sk, k) && len(k) == SeqKeyLen {
			return false, nil, corruptf("eventlog: session %q: seeking seq 0 finds another key: the events index is damaged",
				errors.Safe(w.Session))
		}
	}
	n, size := 0, 0
	for ; k != nil; k, v = c.Next() {
		if n >= w.MaxRecords || size >= w.MaxBytes {
			return true, nil, nil
		}
		last, err := ParseSeqKey(k)
		if err != nil {
			return false, nil, errors.Wrapf(err, "eventlog: session %q: a key among the records from seq %d",
				errors.Safe(w.Session), errors.Safe(w.Next))
		}
		if v == nil {
			return false, nil, corruptf("eventlog: session %q seq %d: key holds a bucket, not a record",
				errors.Safe(w.Session), errors.Safe(last))
		}
		if !m.Holds(v) {
			// A damaged value size: refuse before copying it.
			return false, nil, corruptf("eventlog: session %q seq %d: a record of %d bytes that lies outside the store's pages (a damaged page)",
				errors.Safe(w.Session), errors.Safe(last), errors.Safe(len(v)))
		}
		stopped := false
		_ = ValueRecords(last, v, w.Next, func(seq int64, rec []byte) error {
			if !fn(seq, rec) {
				stopped = true
				return errStop
			}
			n++
			size += len(rec)
			w.Next = seq + 1
			return nil
		})
		if stopped {
			return false, nil, nil
		}
		w.Next = max(w.Next, last+1)
		// Never onto a damaged page: what precedes it is passed first.
		if damaged = w.Damage.Err(w.Session, w.Next); damaged != nil {
			return false, damaged, nil
		}
	}
	return false, nil, nil
}
