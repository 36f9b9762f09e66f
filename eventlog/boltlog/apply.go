package boltlog

import (
	"time"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/eventlog/internal/engine"
	"github.com/sessionlog/sessionlog/eventlog/wal"
	"github.com/sessionlog/sessionlog/internal/boltfmt"
)

// Applying the write-ahead log to the tree.
//
// The applier is one goroutine per read-write Log. It copies the
// acknowledged writes from the unapplied tail (tail.go) into the bbolt
// tree in one transaction per round, which also records the last lsn it
// holds under meta/wal, then trims the tail and deletes the log segments
// the tree now holds. A round starts every applyInterval, or at once when
// the tail holds applyBytes; a writer waits while it holds maxUnapplied
// (see the package doc for what these cost). Close applies everything
// and removes the log, so that a closed store is one file again.
//
// A failed round (a full disk, a tree that contradicts the log) is
// sticky: the writes stay durable in the log and visible in the tail, the
// Log refuses further writes with the round's error, and the next Open
// replays the log and tries again.

// WALDir is the directory of the store's write-ahead log segments: the
// store's path with "-wal" appended. It exists while the store is open
// for writing, and after a crash until the next read-write Open.
func WALDir(path string) string { return boltfmt.WALDir(path) }

// applier runs apply rounds until stop is closed, then applies what is
// left.
func (l *Log) applier() {
	defer close(l.applierDone)
	t := time.NewTicker(l.opts.WAL.ApplyInterval)
	defer t.Stop()
	for {
		select {
		case <-l.applyKick:
		case <-t.C:
		case <-l.applyStop:
			if !l.hookNoFinalApply {
				_ = l.applyRound()
			}
			return
		}
		_ = l.applyRound()
	}
}

// kickApplier asks for an apply round without waiting for it.
func (l *Log) kickApplier() {
	select {
	case l.applyKick <- struct{}{}:
	default:
	}
}

// applyRound applies every unapplied entry in one transaction. Its error
// is also kept in l.applyErr, which makes the Log refuse writes.
func (l *Log) applyRound() error {
	l.roundMu.Lock()
	defer l.roundMu.Unlock()
	if err := l.applyFailed(); err != nil {
		return err
	}
	entries := l.tails.pending()
	if len(entries) == 0 {
		return nil
	}
	last := entries[len(entries)-1].LSN
	var bytes int64
	for i := range entries {
		bytes += entries[i].Size
	}
	l.obs.Log.Debug("eventlog: apply round begins", "path", l.path, "records", len(entries), "lsn", last)
	start := time.Now()
	err := l.update(func(tx *bolt.Tx) error {
		for i := range entries {
			for j := range entries[i].Ops {
				if err := applyOp(tx, entries[i].LSN, &entries[i].Ops[j]); err != nil {
					return err
				}
			}
		}
		return putApplied(tx, last)
	})
	if err == nil {
		l.obs.applied(start, bytes)
		l.obs.Log.Debug("eventlog: apply round committed", "path", l.path, "lsn", last)
		l.tails.trim(last)
		l.applied.Store(last)
		if l.wal != nil {
			err = errors.Wrap(l.wal.Release(last), "eventlog: delete applied write-ahead log segments")
			if err != nil {
				// The segments stay; the next round or Open deletes them.
				l.obs.Log.Warn("eventlog: could not delete applied write-ahead log segments", "path", l.path, "err", err)
			}
		}
		return nil
	}
	err = errors.Wrapf(err, "eventlog: apply write-ahead log records up to %d to %s", errors.Safe(last), errors.Safe(l.path))
	l.obs.Log.Error("eventlog: applying the write-ahead log failed; writes are refused until the store is reopened",
		"path", l.path, "lsn", last, "err", err)
	l.applyMu.Lock()
	l.applyErr = err
	l.applyMu.Unlock()
	l.tails.wake()
	return err
}

// applyFailed returns the sticky error of a failed apply round.
func (l *Log) applyFailed() error {
	l.applyMu.Lock()
	defer l.applyMu.Unlock()
	return l.applyErr
}

// applyOp writes one op into the tree, checking that it continues what
// the tree holds.
func applyOp(tx *bolt.Tx, lsn uint64, op *walOp) error {
	ss := tx.Bucket(boltfmt.BucketSessions)
	if op.HeaderRec != nil {
		if ss.Get([]byte(op.ID)) != nil || ss.Bucket([]byte(op.ID)) != nil {
			return engine.Corruptf("eventlog: write-ahead log record %d creates session %q, which the store holds already",
				errors.Safe(lsn), errors.Safe(op.ID))
		}
		b, err := ss.CreateBucket([]byte(op.ID))
		if err != nil {
			return errors.Wrapf(err, "eventlog: create session %q", errors.Safe(op.ID))
		}
		if _, err := b.CreateBucket(boltfmt.BucketEvents); err != nil {
			return errors.Wrapf(err, "eventlog: create session %q", errors.Safe(op.ID))
		}
		if err := b.Put(boltfmt.KeyHeader, op.HeaderRec); err != nil {
			return errors.Wrapf(err, "eventlog: create session %q", errors.Safe(op.ID))
		}
		return errors.Wrapf(b.Put(boltfmt.KeyHead, op.HeadRec), "eventlog: create session %q", errors.Safe(op.ID))
	}
	b := ss.Bucket([]byte(op.ID))
	if b == nil {
		return engine.Corruptf("eventlog: write-ahead log record %d appends to session %q, which the store does not hold",
			errors.Safe(lsn), errors.Safe(op.ID))
	}
	hr, err := boltfmt.DecodeHead(b.Get(boltfmt.KeyHead))
	if err != nil {
		return errors.Wrapf(err, "eventlog: session %q: head record", errors.Safe(op.ID))
	}
	if hr.Next != op.First {
		return engine.Corruptf("eventlog: write-ahead log record %d appends seq %d to session %q, whose next seq is %d",
			errors.Safe(lsn), errors.Safe(op.First), errors.Safe(op.ID), errors.Safe(hr.Next))
	}
	eb, err := eventsBucket(b, op.ID)
	if err != nil {
		return err
	}
	if err := boltfmt.PutEvents(eb, op.ID, op.First, op.Recs); err != nil {
		return err
	}
	return errors.Wrapf(b.Put(boltfmt.KeyHead, op.HeadRec), "eventlog: session %q head", errors.Safe(op.ID))
}

// putApplied records lsn as the last applied write-ahead log record.
func putApplied(tx *bolt.Tx, lsn uint64) error {
	rec, err := boltfmt.EncodeEngineRecord(&boltfmt.WALRecord{Applied: int64(lsn)})
	if err != nil {
		return err
	}
	return errors.Wrap(tx.Bucket(boltfmt.BucketMeta).Put(boltfmt.KeyWAL, rec), "eventlog: write meta/wal")
}

// readApplied returns the last applied lsn recorded in the tree (0 when
// none is).
func (l *Log) readApplied() (uint64, error) {
	var applied uint64
	err := l.view(func(tx *bolt.Tx) error {
		meta := tx.Bucket(boltfmt.BucketMeta)
		if meta == nil {
			return nil // an empty store opened read-only
		}
		rec := meta.Get(boltfmt.KeyWAL)
		if rec == nil {
			return nil
		}
		w, err := boltfmt.DecodeWAL(rec)
		if err != nil {
			return errors.Wrap(err, "eventlog: meta/wal")
		}
		applied = uint64(w.Applied)
		return nil
	})
	return applied, err
}

// openWAL reads the write-ahead log into the unapplied tail: for a
// read-write Log it opens the log for appending and applies what the tree
// lacks; a read-only Log only reads it.
func (l *Log) openWAL() error {
	applied, err := l.readApplied()
	if err != nil {
		return err
	}
	l.applied.Store(applied)
	dir := boltfmt.WALDir(l.path)
	var rep wal.Report
	replay := func(lsn uint64, payload []byte) error {
		e, err := boltfmt.DecodeEntry(lsn, append([]byte(nil), payload...))
		if err != nil {
			return err
		}
		l.tails.add(e)
		l.walReplayed++
		return nil
	}
	if l.readOnly {
		rep, err = wal.Read(dir, applied, replay)
	} else {
		onCut := func(name string) {
			l.obs.Log.Debug("eventlog: write-ahead log segment started", "path", l.path, "segment", name)
		}
		l.wal, rep, err = wal.Open(dir, applied, wal.Options{SegmentSize: l.opts.WAL.SegmentSize, NoSync: l.eopts.NoSync, OnCut: onCut}, replay)
	}
	if err != nil {
		return boltfmt.WALError(err, dir)
	}
	l.walReport = rep
	if rep.TornBytes > 0 {
		l.obs.Log.Warn("eventlog: dropped the torn tail of the write-ahead log (a write the crash interrupted, never acknowledged)",
			"path", l.path, "at", rep.TornAt, "bytes", rep.TornBytes)
	}
	if n := len(l.tails.pending()); n > 0 {
		l.obs.Log.Info("eventlog: write-ahead log records to apply", "path", l.path, "records", n, "bytes", l.tails.size())
	}
	if l.readOnly {
		return nil
	}
	return l.applyRound()
}

// closeWAL stops the applier after a last round and, when everything is
// applied, removes the log.
func (l *Log) closeWAL() error {
	if l.applyStop == nil {
		return nil
	}
	close(l.applyStop)
	<-l.applierDone
	err := l.applyFailed()
	cerr := errors.Wrap(l.wal.Close(), "eventlog: close the write-ahead log")
	if err == nil && cerr == nil && l.tails.size() == 0 && len(l.tails.pending()) == 0 {
		err = errors.Wrap(wal.Remove(boltfmt.WALDir(l.path)), "eventlog: remove the applied write-ahead log")
	}
	return errors.CombineErrors(err, cerr)
}

// WALReport says what the last Open found in the write-ahead log: the
// records present and any torn tail it dropped.
func (l *Log) WALReport() wal.Report { return l.walReport }

// WALReplayed is the number of write-ahead log records the last Open
// found past what the tree holds: a read-write Open applied them, a
// read-only one holds them in memory.
func (l *Log) WALReplayed() int { return l.walReplayed }

// Checkpoint copies every acknowledged write into the tree now, in one
// transaction, and deletes the log segments it holds: for a host that
// wants the tree current (before copying the file, say) and for
// benchmarks that charge the applier's work to the writes. Writes go on
// meanwhile; those that arrive during the round wait for the next one.
func (l *Log) Checkpoint() error {
	done, err := l.beginWrite()
	if err != nil {
		return err
	}
	defer done()
	return l.applyRound()
}
