package boltlog

import (
	"fmt"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/internal/engine"
	"github.com/sessionlog/sessionlog/internal/boltfmt"
)

// heads reads the heads of at most n published sessions whose ids sort
// after after (bytewise), in id order, in one short transaction (the
// engine's SessionPage).
func (l *Log) heads(after string, n int) ([]eventlog.Head, error) {
	var recs []pageRec
	// The tail first, then the tree (tail.go): sessions whose creation is
	// unapplied join the tree's, and unapplied heads replace the tree's.
	tailRecs := l.tails.heads(after)
	err := l.view(func(tx *bolt.Tx) error {
		ss := tx.Bucket(boltfmt.BucketSessions)
		if ss == nil {
			return nil
		}
		m := boltfmt.BoundsOf(tx)
		c := ss.Cursor()
		k, v := c.Seek([]byte(after))
		if k != nil && after != "" && string(k) == after {
			k, v = c.Next()
		}
		for ; k != nil && len(recs) < n; k, v = c.Next() {
			if v != nil {
				return engine.Corruptf("eventlog: sessions/%q is a value, not a session bucket", errors.Safe(string(k)))
			}
			if err := l.damage.Err(string(k), -1); err != nil {
				return errors.Wrapf(err, "eventlog: session %q", errors.Safe(string(k)))
			}
			b := ss.Bucket(k)
			h := b.Get(boltfmt.KeyHead)
			if h == nil {
				continue
			}
			hd := b.Get(boltfmt.KeyHeader)
			if err := m.Check(h, fmt.Sprintf("session %q: head record", k)); err != nil {
				return err
			}
			if err := m.Check(hd, fmt.Sprintf("session %q: header record", k)); err != nil {
				return err
			}
			recs = append(recs, pageRec{id: string(k), head: clone(h), headerRec: clone(hd)})
		}
		return nil
	})
	if err != nil {
		return nil, errors.Wrap(err, "eventlog: list sessions")
	}
	recs = mergeTail(recs, tailRecs, n)
	heads := make([]eventlog.Head, 0, len(recs))
	for _, r := range recs {
		if r.headerRec == nil {
			return nil, engine.Corruptf("eventlog: session %q has no header record", errors.Safe(r.id))
		}
		h, err := decodeStored(r.id, r.head, r.headerRec)
		if err != nil {
			return nil, err
		}
		heads = append(heads, h)
	}
	return heads, nil
}

// pageRec is one session of a SessionPage: its head and header records.
type pageRec struct {
	id              string
	head, headerRec []byte
}

// mergeTail merges the tree's page recs with the tail's (both sorted by
// id) and keeps the first n. A session in both gets the newer head: the
// tail was read first, so the tree's copy may be newer still.
func mergeTail(recs, tail []pageRec, n int) []pageRec {
	out := make([]pageRec, 0, min(n, len(recs)+len(tail)))
	for len(out) < n && (len(recs) > 0 || len(tail) > 0) {
		var r pageRec
		switch {
		case len(tail) == 0 || (len(recs) > 0 && recs[0].id < tail[0].id):
			r, recs = recs[0], recs[1:]
		case len(recs) == 0 || tail[0].id < recs[0].id:
			r, tail = tail[0], tail[1:]
			if r.headerRec == nil {
				continue // its creation was applied before the tree was read, and the tree lacks it: damage the tree's reader reports
			}
		default:
			r = recs[0]
			if newerHead(tail[0].head, r.head) {
				r.head = tail[0].head
			}
			recs, tail = recs[1:], tail[1:]
		}
		out = append(out, r)
	}
	return out
}

// newerHead reports whether head record a holds more events than b (a
// session's heads only grow); undecodable ones are left to the reader.
func newerHead(a, b []byte) bool {
	ha, err := boltfmt.DecodeHead(a)
	if err != nil {
		return false
	}
	hb, err := boltfmt.DecodeHead(b)
	return err == nil && ha.Next > hb.Next
}
