package boltlog

import (
	"context"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/internal/engine"
	"github.com/sessionlog/sessionlog/internal/boltfmt"
)

// Import and Fork stage a session in bbolt transactions of their own,
// outside the write-ahead log (the engine drives them): the first creates
// the session's bucket with its header, the staging mark and no head,
// each writes up to Options.ImportBatch events, and the last deletes the
// mark and writes the head, which publishes the session. Until then
// readers do not see it; on any error the staged bucket is deleted, and a
// crash leaves it for the next read-write Open to remove.

// staged is one session being staged.
type staged struct {
	l         *Log
	id        string
	headerRec []byte
	created   bool // the bucket exists (first transaction done)
}

// stage checks that the store holds no session hdr.ID, unapplied or in
// the tree; the engine has claimed the id in this process.
func (l *Log) stage(hdr codec.SessionHeader, headerRec []byte) (*staged, error) {
	id := hdr.ID
	if l.tails.has(id) {
		return nil, engine.Conflictf("eventlog: session %q exists already", errors.Safe(id))
	}
	err := l.view(func(tx *bolt.Tx) error {
		if sessionBucket(tx, id) != nil {
			return engine.Conflictf("eventlog: session %q exists already", errors.Safe(id))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &staged{l: l, id: id, headerRec: headerRec}, nil
}

// Write writes recs in one transaction; publish writes the head too.
func (s *staged) Write(_ context.Context, first int64, recs [][]byte, publish *eventlog.Head) ([]byte, error) {
	var headRec []byte
	if publish != nil {
		var err error
		if headRec, err = boltfmt.EncodeEngineRecord(boltfmt.FromHead(publish)); err != nil {
			return nil, err
		}
	}
	err := s.l.update(func(tx *bolt.Tx) error {
		var b *bolt.Bucket
		if !s.created {
			if sessionBucket(tx, s.id) != nil {
				return engine.Conflictf("eventlog: session %q exists already", errors.Safe(s.id))
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
			return engine.Conflictf("eventlog: staged session %q changed under its import", errors.Safe(s.id))
		}
		eb, err := eventsBucket(b, s.id)
		if err != nil {
			return err
		}
		if err := boltfmt.PutEvents(eb, s.id, first, recs); err != nil {
			return err
		}
		if publish != nil {
			if err := b.Delete(boltfmt.KeyStaging); err != nil {
				return errors.Wrapf(err, "eventlog: publish session %q", errors.Safe(s.id))
			}
			return errors.Wrapf(b.Put(boltfmt.KeyHead, headRec), "eventlog: publish session %q", errors.Safe(s.id))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.created = true
	return headRec, nil
}

// Drop deletes the staged bucket, if any.
func (s *staged) Drop() error {
	if !s.created {
		return nil
	}
	err := s.l.update(func(tx *bolt.Tx) error {
		b := sessionBucket(tx, s.id)
		if b == nil || b.Get(boltfmt.KeyHead) != nil || b.Get(boltfmt.KeyStaging) == nil {
			return nil // gone, or (impossibly) published: not ours to delete
		}
		return tx.Bucket(boltfmt.BucketSessions).DeleteBucket([]byte(s.id))
	})
	if err != nil {
		return errors.WithHint(errors.Wrapf(err, "eventlog: remove staged session %q", errors.Safe(s.id)),
			"the next read-write open of the store removes it")
	}
	return nil
}
