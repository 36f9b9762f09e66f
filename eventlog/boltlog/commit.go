package boltlog

import (
	"bytes"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/eventlog/internal/engine"
	"github.com/sessionlog/sessionlog/internal/boltfmt"
)

// Group commit, the bbolt side.
//
// The engine's committer hands each batch of writes to commit: all of
// them in one write-ahead log record (one write, one fdatasync), then
// into the unapplied tail; the applier copies them into the tree later
// (apply.go). When the previous batch had several writers, the committer
// waits up to linger (500 µs) for as many to come back before committing:
// BenchmarkLinger measured 64 writers at about 38 requests per commit
// without it and 51 with it, for 12% more events per second on this
// machine's disk.
//
// A write's check runs first, against what readers see (the unapplied
// tail, then the tree), and writes nothing; its error fails that write
// only (the others in the batch go on). A failed log write fails every
// write of the batch, and the log refuses every later one (wal.ErrBroken)
// until the store is reopened: after a failed fdatasync nobody can say
// which bytes reached the disk, and the next Open reads what did.

// maxBatchBytes bounds the record bytes of one group commit and of one
// staged transaction.
const maxBatchBytes = 64 << 20

// maxWALBuf is the largest encoding buffer the committer keeps for the
// next entry (as the write-ahead log keeps its frame buffer).
const maxWALBuf = 1 << 20

// linger is the longest the committer waits for the writers of the
// previous batch to come back; a variable for benchmarks.
var linger = 500 * time.Microsecond

// prepareWrite encodes w's head record and write-ahead log op, in the writer's
// goroutine.
func (l *Log) prepareWrite(w *engine.Write) error {
	headRec, err := boltfmt.EncodeEngineRecord(boltfmt.FromHead(&w.New))
	if err != nil {
		return err
	}
	w.NewToken = headRec
	if w.Create {
		w.Size += len(headRec)
		w.Driver = walOp{ID: w.Session, HeaderRec: w.HeaderRec, HeadRec: headRec}
		return nil
	}
	w.Driver = walOp{ID: w.Session, First: w.Old.Next, Recs: w.Recs, HeadRec: headRec}
	return nil
}

// check verifies w against what readers see; it writes nothing. A
// creation needs a new id; an append needs the head it was validated
// against, byte for byte.
func (l *Log) check(w *engine.Write) error {
	if w.Create {
		return l.checkNew(w.Session)
	}
	cur, err := l.headRecord(w.Session)
	if err != nil {
		return err
	}
	if !bytes.Equal(cur, w.OldToken) {
		return engine.Conflictf("eventlog: append to session %q: the session changed under this writer", errors.Safe(w.Session))
	}
	return nil
}

// commit writes batch as one write-ahead log record and returns one
// result per write, and the number of log records written (0 or 1).
func (l *Log) commit(batch []*engine.Write, errs []error) ([]error, int) {
	ops := make([]walOp, 0, len(batch))
	events := 0
	var size int64
	for i, w := range batch {
		errs = append(errs, nil)
		if errs[i] = l.applyFailed(); errs[i] != nil {
			continue
		}
		if errs[i] = l.check(w); errs[i] != nil {
			continue
		}
		if l.hookWrite != nil {
			if errs[i] = l.hookWrite(w.Session); errs[i] != nil {
				continue
			}
		}
		op := w.Driver.(walOp)
		ops = append(ops, op)
		events += len(op.Recs)
		size += op.Size()
	}
	if len(ops) == 0 {
		return errs, 0
	}
	if limit := l.opts.WAL.MaxUnapplied; l.tails.size()+size > limit {
		// The tail is full: let the applier catch up. A failed apply
		// round ends the wait (and the write below is refused).
		l.kickApplier()
		l.tails.waitBelow(max(limit-size, 0), func() bool { return l.applyFailed() != nil })
		l.kickApplier()
	}
	l.walBuf = boltfmt.EncodeEntry(l.walBuf[:0], ops)
	var t time.Time
	if l.obs.On {
		t = time.Now()
	}
	lsn, err := l.wal.Append(l.walBuf)
	if cap(l.walBuf) > maxWALBuf {
		l.walBuf = nil // a long answer's entry is not kept after it is written
	}
	if err == nil {
		err = l.applyFailed()
	}
	if err != nil {
		err = errors.Wrapf(err, "eventlog: write-ahead log of %s", errors.Safe(l.path))
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
		return errs, 1
	}
	l.tails.add(walEntry{LSN: lsn, Ops: ops, Size: size})
	if l.tails.size() >= l.opts.WAL.ApplyBytes {
		l.kickApplier()
	}
	if l.obs.On {
		l.obs.Events(events)
		l.obs.synced(time.Since(t))
	}
	return errs, 1
}
