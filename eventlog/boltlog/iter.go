package boltlog

import (
	"bytes"
	"context"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/internal/engine"
	"github.com/sessionlog/sessionlog/internal/boltfmt"
)

// Reads go in chunks: each chunk is one read transaction that copies at
// most chunkRecords records (or chunkBytes bytes, but at least one record)
// out of the mmap, so a scan holds a bounded number of events in memory
// and never keeps a transaction open between calls.
const (
	chunkRecords = 256
	chunkBytes   = 4 << 20
)

// events reads the payloads of the events from seq from (up to end, one
// chunk) out of the store, checking the frames of what holds them and
// that their seqs are exactly from, from+1, …. They never alias the
// store's memory map.
func (l *Log) events(session string, from, end int64) ([][]byte, error) {
	// The tail first, then the tree for the seqs below it (tail.go).
	if t := l.tails.view(session); t.ok {
		if from >= t.first {
			hi := min(end, t.next(), from+chunkRecords)
			if from >= hi {
				return nil, engine.Corruptf("eventlog: session %q: records of seqs %d..%d are missing",
					errors.Safe(session), errors.Safe(from), errors.Safe(end-1))
			}
			out := make([][]byte, 0, hi-from)
			for seq := from; seq < hi; seq++ {
				p, err := codec.Unframe(t.recs[seq-t.first], codec.MaxRecord)
				if err != nil {
					return nil, errors.Wrapf(err, "eventlog: session %q seq %d", errors.Safe(session), errors.Safe(seq))
				}
				out = append(out, p)
			}
			return out, nil
		}
		end = min(end, t.first)
	}
	var out [][]byte
	want := from // the seq being read, also after a panic in bbolt
	err := l.view(func(tx *bolt.Tx) error {
		b, _, _, err := published(tx, session)
		if err != nil {
			return err
		}
		eb, err := eventsBucket(b, session)
		if err != nil {
			return err
		}
		m := boltfmt.BoundsOf(tx)
		out = make([][]byte, 0, min(chunkRecords, end-from))
		size := 0
		c := eb.Cursor()
		// A value is keyed by its last seq (boltfmt.PutEvents), so seeking from
		// lands on the value that holds it. The cursor moves on only to
		// read the next wanted seq, never onto a damaged page
		// (CheckPages).
		for first := true; want < end && len(out) < chunkRecords && size < chunkBytes; first = false {
			if err := l.damage.Err(session, want); err != nil {
				if len(out) > 0 {
					break // return what precedes the damage; the next read fails
				}
				return err
			}
			var k, v []byte
			if first {
				k, v = c.Seek(boltfmt.SeqKey(from))
			} else {
				k, v = c.Next()
			}
			if k == nil {
				return engine.Corruptf("eventlog: session %q: records of seqs %d..%d are missing",
					errors.Safe(session), errors.Safe(want), errors.Safe(end-1))
			}
			last, err := boltfmt.ParseSeqKey(k)
			if err != nil {
				return errors.Wrapf(err, "eventlog: session %q seq %d: bad key", errors.Safe(session), errors.Safe(want))
			}
			if v == nil {
				return engine.Corruptf("eventlog: session %q seq %d: key holds a bucket, not a record",
					errors.Safe(session), errors.Safe(last))
			}
			if !m.Holds(v) {
				// A damaged value size: refuse before copying it.
				return engine.Corruptf("eventlog: session %q seq %d: a record of %d bytes that lies outside the store's pages (a damaged page)",
					errors.Safe(session), errors.Safe(last), errors.Safe(len(v)))
			}
			if !codec.IsPack(v) {
				v = bytes.Clone(v) // a record's payload aliases it
			}
			firstSeq, payloads, err := boltfmt.Unpack(last, v)
			switch {
			case err == nil && (firstSeq > want || last < want || !first && firstSeq != want):
				err = engine.Corruptf("eventlog: session %q seq %d: record is missing (the next key holds seqs %d..%d)",
					errors.Safe(session), errors.Safe(want), errors.Safe(firstSeq), errors.Safe(last))
			case err != nil:
				err = errors.Wrapf(err, "eventlog: session %q seq %d", errors.Safe(session), errors.Safe(want))
			}
			if err != nil {
				if len(out) > 0 {
					break // return what precedes the damage; the next read fails
				}
				return err
			}
			for i := want - firstSeq; i < int64(len(payloads)) && want < end; i++ {
				out = append(out, payloads[i])
				size += len(payloads[i])
				want++
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, eventlog.ErrNotFound) {
			return nil, err
		}
		return nil, errors.Wrapf(err, "eventlog: read session %q at seq %d", errors.Safe(session), errors.Safe(want))
	}
	return out, nil
}

// Records calls fn with the record of every event stored in the
// session's events bucket from seq from on (from 0: every key), in seq
// order, not decoded: each event of a pack framed as a version 1 record
// (ValueRecords), a value written before format 3 as it is stored, and an
// event not yet applied as the tree will hold it; a value's key is
// decoded (an 8-byte big-endian seq; any other key is eventlog.ErrCorrupt and
// stops the walk). It does not stop at the head's next seq nor check that
// seqs are contiguous: that is verify's job. rec is valid only during the
// call. An error from fn stops the walk and is returned as is. The walk
// reads in chunks, one read transaction each.
func (l *Log) Records(ctx context.Context, session string, from int64, fn func(seq int64, rec []byte) error) error {
	if from < 0 {
		return engine.Invalidf("eventlog: records of session %q from seq %d", errors.Safe(session), errors.Safe(from))
	}
	// The tree below the tail's first seq, then the tail (tail.go): a
	// snapshot taken first holds every record the tree may lack.
	t := l.tails.view(session)
	if t.ok && t.headerRec != nil {
		// Only the tail, no read of the tree: check for Close here.
		done, err := l.begin()
		if err != nil {
			return err
		}
		defer done()
		return l.tailRecords(ctx, session, &t, from, fn)
	}
	var buf []byte
	offs := make([]int, 0, chunkRecords)
	seqs := make([]int64, 0, chunkRecords)
	w := boltfmt.EventWalk{Session: session, Next: from, Damage: l.damage, CheckSeek: true,
		MaxRecords: chunkRecords, MaxBytes: chunkBytes}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		buf, offs, seqs = buf[:0], offs[:0], seqs[:0]
		var more bool
		var damaged error
		err := l.beginView(func(tx *bolt.Tx) error {
			b, _, _, err := published(tx, session)
			if err != nil {
				return err
			}
			eb, err := eventsBucket(b, session)
			if err != nil {
				return err
			}
			more, damaged, err = w.Walk(eb, boltfmt.BoundsOf(tx), func(seq int64, rec []byte) bool {
				if t.ok && seq >= t.first {
					return false // the tail holds it, and what follows
				}
				buf = append(buf, rec...)
				offs = append(offs, len(buf))
				seqs = append(seqs, seq)
				return true
			})
			return err
		})
		if err != nil {
			return errors.Wrapf(err, "eventlog: records of session %q", errors.Safe(session))
		}
		start := 0
		for i, end := range offs {
			if err := fn(seqs[i], buf[start:end:end]); err != nil {
				return err
			}
			start = end
		}
		if damaged != nil {
			return errors.Wrapf(damaged, "eventlog: records of session %q", errors.Safe(session))
		}
		if !more {
			if t.ok {
				return l.tailRecords(ctx, session, &t, max(w.Next, from), fn)
			}
			return nil
		}
	}
}

// tailRecords passes the tail's records from seq from on to fn.
func (l *Log) tailRecords(ctx context.Context, session string, t *tailView, from int64, fn func(seq int64, rec []byte) error) error {
	for seq := max(from, t.first); seq < t.next(); seq++ {
		if (seq-t.first)%chunkRecords == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		// As the tree will hold it: one version 1 frame (ValueRecords),
		// whether or not it is applied yet.
		rec := t.recs[seq-t.first]
		if !bytes.Equal(rec[:1], []byte{codec.RecordVersion}) {
			p, err := codec.Unframe(rec, codec.MaxRecord)
			if err != nil {
				return errors.Wrapf(err, "eventlog: records of session %q seq %d", errors.Safe(session), errors.Safe(seq))
			}
			rec = codec.EncodeRecord(nil, p)
		}
		if err := fn(seq, rec); err != nil {
			return err
		}
	}
	return nil
}

// beginView is view for a method entry point: it fails with ErrClosed
// after Close.
func (l *Log) beginView(fn func(tx *bolt.Tx) error) error {
	done, err := l.begin()
	if err != nil {
		return err
	}
	defer done()
	return l.view(fn)
}
