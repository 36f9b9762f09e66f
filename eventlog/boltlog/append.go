package boltlog

import (
	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/eventlog/internal/engine"
	"github.com/sessionlog/sessionlog/internal/boltfmt"
)

// checkNew refuses an id that a new session cannot take: one that exists,
// unapplied or in the tree (the engine refuses one an Import or Fork of
// this process is staging).
func (l *Log) checkNew(id string) error {
	exists := l.tails.has(id)
	if !exists {
		if err := l.view(func(tx *bolt.Tx) error {
			exists = sessionBucket(tx, id) != nil
			return nil
		}); err != nil {
			return err
		}
	}
	if exists {
		return engine.Conflictf("eventlog: session %q exists already", errors.Safe(id))
	}
	return nil
}

// headRecord returns the session's newest head record: the unapplied
// tail's, else the tree's (a copy). A session without one is ErrNotFound.
func (l *Log) headRecord(id string) ([]byte, error) {
	if v := l.tails.view(id); v.ok {
		return v.headRec, nil
	}
	var rec []byte
	err := l.view(func(tx *bolt.Tx) error {
		b := sessionBucket(tx, id)
		if b == nil {
			return engine.NotFound(id)
		}
		rec = clone(b.Get(boltfmt.KeyHead))
		return nil
	})
	return rec, err
}
