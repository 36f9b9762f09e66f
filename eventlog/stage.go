package eventlog

import (
	"context"
	"io"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/internal/boltfmt"
)

// Import and Fork write a session in several transactions (SPEC §8.2):
// the first creates the session's bucket with its header and no head, each
// writes up to Options.ImportBatch events, and the last writes the head,
// which publishes the session. Until then readers do not see it; on any
// error the staged bucket is deleted, and a crash leaves it for the next
// read-write Open to remove.

// stager accumulates one staged session.
type stager struct {
	l         *Log
	id        string
	hdr       codec.SessionHeader
	headerRec []byte
	head      Head
	ch        *chainer
	v         Validator
	created   bool     // the bucket exists (first transaction done)
	recs      [][]byte // records not yet written, from seq head.Next-len(recs)
	size      int      // bytes in recs
}

func (l *Log) newStager(hdr codec.SessionHeader) *stager {
	headerRec := codec.EncodeRecord(nil, hdr.Raw)
	s := &stager{l: l, id: hdr.ID, hdr: hdr, headerRec: headerRec, v: l.newValidator(hdr)}
	s.head = Head{Header: hdr, LastTime: hdr.CreatedAt, Chain: ChainStart(headerRec)}
	s.ch = newChainer(s.head.Chain)
	return s
}

// add folds one checked event, whose stored record is rec, into the
// session, and flushes a full batch.
func (s *stager) add(ev *codec.Event, rec []byte) error {
	if err := validate(s.v, s.id, ev); err != nil {
		return err
	}
	s.ch.add(ev.Raw)
	if ev.Type == codec.TypeTurnStart {
		s.head.Turns++
	}
	s.head.Next++
	s.head.LastTime = ev.Time
	s.head.StoredBytes += int64(len(rec))
	s.recs = append(s.recs, rec)
	s.size += len(rec)
	if len(s.recs) >= s.l.opts.ImportBatch || s.size >= maxBatchBytes {
		return s.flush(false)
	}
	return nil
}

// flush writes the pending records in one transaction; publish writes the
// head too.
func (s *stager) flush(publish bool) error {
	first := s.head.Next - int64(len(s.recs))
	var headRec []byte
	if publish {
		s.head.Chain = s.ch.c
		var err error
		if headRec, err = boltfmt.EncodeEngineRecord(fromHead(&s.head)); err != nil {
			return err
		}
	}
	err := s.l.update(func(tx *bolt.Tx) error {
		var b *bolt.Bucket
		if !s.created {
			if sessionBucket(tx, s.id) != nil {
				return conflictf("eventlog: session %q exists already", errors.Safe(s.id))
			}
			var err error
			if b, err = tx.Bucket(boltfmt.BucketSessions).CreateBucket([]byte(s.id)); err != nil {
				return errors.Wrapf(err, "eventlog: stage session %q", errors.Safe(s.id))
			}
			if _, err := b.CreateBucket(boltfmt.BucketEvents); err != nil {
				return errors.Wrapf(err, "eventlog: stage session %q", errors.Safe(s.id))
			}
			if err := b.Put(boltfmt.KeyHeader, s.headerRec); err != nil {
				return errors.Wrapf(err, "eventlog: stage session %q", errors.Safe(s.id))
			}
			if err := b.Put(boltfmt.KeyStaging, []byte{1}); err != nil {
				return errors.Wrapf(err, "eventlog: stage session %q", errors.Safe(s.id))
			}
		} else if b = sessionBucket(tx, s.id); b == nil || b.Get(boltfmt.KeyHead) != nil || b.Get(boltfmt.KeyStaging) == nil {
			return conflictf("eventlog: staged session %q changed under its import", errors.Safe(s.id))
		}
		eb, err := eventsBucket(b, s.id)
		if err != nil {
			return err
		}
		if err := boltfmt.PutEvents(eb, s.id, first, s.recs); err != nil {
			return err
		}
		if publish {
			if err := b.Delete(boltfmt.KeyStaging); err != nil {
				return errors.Wrapf(err, "eventlog: publish session %q", errors.Safe(s.id))
			}
			return errors.Wrapf(b.Put(boltfmt.KeyHead, headRec), "eventlog: publish session %q", errors.Safe(s.id))
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.created = true
	for i := range s.recs {
		s.recs[i] = nil
	}
	s.recs, s.size = s.recs[:0], 0
	if publish {
		s.l.cache.Put(s.id, &sessionState{head: s.head, headRec: headRec, v: s.v})
	}
	return nil
}

// abort deletes the staged bucket, if any; err is the reason.
func (s *stager) abort(err error) error {
	if !s.created {
		return err
	}
	derr := s.l.update(func(tx *bolt.Tx) error {
		b := sessionBucket(tx, s.id)
		if b == nil || b.Get(boltfmt.KeyHead) != nil || b.Get(boltfmt.KeyStaging) == nil {
			return nil // gone, or (impossibly) published: not ours to delete
		}
		return tx.Bucket(boltfmt.BucketSessions).DeleteBucket([]byte(s.id))
	})
	if derr != nil {
		derr = errors.WithHint(errors.Wrapf(derr, "eventlog: remove staged session %q", errors.Safe(s.id)),
			"the next read-write open of the store removes it")
	}
	return errors.CombineErrors(err, derr)
}

// claim reserves id for staging: it must be neither staged by this process
// nor stored. The caller releases it with l.staging.Remove.
func (l *Log) claim(ctx context.Context, id string) error {
	if !l.staging.Add(id) {
		return conflictf("eventlog: session %q is being imported or forked", errors.Safe(id))
	}
	// A Create of the id that got past its staging check holds the id's
	// lock until its write is in the tail: wait for it, then look.
	unlock, err := l.locks.Lock(ctx, id)
	if err == nil {
		unlock()
		if l.tails.has(id) {
			err = conflictf("eventlog: session %q exists already", errors.Safe(id))
		}
	}
	if err == nil {
		err = l.view(func(tx *bolt.Tx) error {
			if sessionBucket(tx, id) != nil {
				return conflictf("eventlog: session %q exists already", errors.Safe(id))
			}
			return nil
		})
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		l.staging.Remove(id)
	}
	return err
}

// Import stores the session read from src atomically (SPEC §8.2): the
// events are checked as they stream (seq contiguous from 0, codec
// decoding, a fresh Validator) and staged in transactions of
// Options.ImportBatch events; the last one publishes the session. It
// returns the number of events stored. An existing id is ErrConflict
// before anything is written; on any error nothing is left and the error
// names the seq. src's events are not retained.
func (l *Log) Import(ctx context.Context, h codec.SessionHeader, src Source) (int64, error) {
	if err := l.beginWrite(); err != nil {
		return 0, err
	}
	defer l.ops.Done()
	hdr, err := checkHeader(h)
	if err != nil {
		return 0, errors.Wrap(err, "eventlog: import")
	}
	if err := l.claim(ctx, hdr.ID); err != nil {
		return 0, errors.Wrap(err, "eventlog: import")
	}
	defer l.staging.Remove(hdr.ID)
	s := l.newStager(hdr)
	if err := s.importFrom(ctx, src); err != nil {
		return 0, s.abort(codec.At(err, hdr.ID, s.head.Next))
	}
	return s.head.Next, nil
}

func (s *stager) importFrom(ctx context.Context, src Source) error {
	for {
		if s.head.Next%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		ev, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		d, err := checkEvent(s.id, &ev, s.head.Next)
		if err != nil {
			return err
		}
		if err := s.add(&d, codec.EncodeEventRecord(nil, d.Raw)); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.flush(true)
}

// Fork creates child holding source's events 0..at verbatim (SPEC §8.5):
// the same record bytes, the chain hash recomputed from child's own header.
// at must be the seq of a turn/end of source, and child's header must name
// source as parentSession and at+1 as seedLength (else ErrInvalid); an
// existing child id is ErrConflict; an unknown source is ErrNotFound. The
// copied records are checked as they are read (a damaged one is
// ErrCorrupt naming source and seq) and fed to a fresh Validator of the
// child. Large forks are staged like Import.
func (l *Log) Fork(ctx context.Context, source string, at int64, child codec.SessionHeader) error {
	if err := l.beginWrite(); err != nil {
		return err
	}
	defer l.ops.Done()
	hdr, err := checkHeader(child)
	if err != nil {
		return errors.Wrapf(err, "eventlog: fork of session %q", errors.Safe(source))
	}
	switch {
	case hdr.ParentSession != source:
		return invalidf("eventlog: fork of session %q: the child's parentSession is %q",
			errors.Safe(source), errors.Safe(hdr.ParentSession))
	case hdr.SeedLength != at+1:
		return invalidf("eventlog: fork of session %q at seq %d: the child's seedLength is %d (want %d)",
			errors.Safe(source), errors.Safe(at), errors.Safe(hdr.SeedLength), errors.Safe(at+1))
	case hdr.ID == source:
		return conflictf("eventlog: fork of session %q onto itself", errors.Safe(source))
	}
	srcHead, err := l.Head(ctx, source)
	if err != nil {
		return errors.Wrapf(err, "eventlog: fork")
	}
	if at < 0 || at >= srcHead.Next {
		return invalidf("eventlog: fork of session %q at seq %d: the session has seqs 0..%d",
			errors.Safe(source), errors.Safe(at), errors.Safe(srcHead.Next-1))
	}
	if err := l.claim(ctx, hdr.ID); err != nil {
		return errors.Wrapf(err, "eventlog: fork of session %q", errors.Safe(source))
	}
	defer l.staging.Remove(hdr.ID)
	s := l.newStager(hdr)
	if err := s.forkFrom(ctx, source, at); err != nil {
		return s.abort(errors.Wrap(codec.At(err, source, at), "fork"))
	}
	return nil
}

func (s *stager) forkFrom(ctx context.Context, source string, at int64) error {
	// The fork point first, so that a bad one writes nothing.
	recs, err := s.l.readChunk(source, at, at+1)
	if err != nil {
		return err
	}
	ev, err := decodeStoredEvent(source, at, recs[0])
	if err != nil {
		return err
	}
	if ev.Type != codec.TypeTurnEnd {
		return codec.NamesSession(codec.NamesSeq(invalidf("eventlog: seq %d of session %q is %s, not turn/end",
			errors.Safe(at), errors.Safe(source), ev.Type)))
	}
	for next := int64(0); next <= at; {
		if err := ctx.Err(); err != nil {
			return err
		}
		payloads, err := s.l.readChunk(source, next, at+1)
		if err != nil {
			return err
		}
		for i, p := range payloads {
			ev, err := decodeStoredEvent(source, next+int64(i), p)
			if err != nil {
				return err
			}
			// The record the log would hold, as an append writes it.
			if err := s.add(&ev, codec.EncodeEventRecord(nil, p)); err != nil {
				return err
			}
		}
		next += int64(len(payloads))
	}
	return s.flush(true)
}
