package main

import (
	"context"
	"os"
	"time"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"
)

// spaceResult is the bytes on disk per event of one store.
type spaceResult struct {
	data   string
	events int64
	// Per event: the JSONL line with its newline; the stored record
	// (payload and frame); the bbolt pages the store needs (its
	// high-water mark: pages in use or free); the file (which bbolt grows
	// ahead in preallocated steps).
	jsonl, record, inUse, file float64
}

// measureSpace reports the generated sessions' stores, closing them, and
// the durable modes' stores as they were after their last round.
func measureSpace(ctx context.Context, sessions []*benchSession, durable []durableResult) ([]spaceResult, error) {
	var out []spaceResult
	for _, s := range sessions {
		head, err := s.st.Head(ctx, s.header.ID)
		if err != nil {
			return nil, err
		}
		s.close()
		hwm, err := highWater(s.path)
		if err != nil {
			return nil, err
		}
		fi, err := os.Stat(s.path)
		if err != nil {
			return nil, errors.Wrap(err, "store size")
		}
		n := float64(s.events)
		out = append(out, spaceResult{
			data:   "generated session, " + group(s.events) + " events",
			events: s.events,
			jsonl:  float64(s.jsonl) / n,
			record: float64(head.StoredBytes) / n,
			inUse:  float64(hwm) / n,
			file:   float64(fi.Size()) / n,
		})
	}
	for _, d := range durable {
		n := float64(d.events)
		out = append(out, spaceResult{
			data:   "1 KB assistant/message, " + d.mode.name,
			events: d.events,
			jsonl:  float64(d.lineBytes) / float64(d.lines),
			record: float64(d.records) / n,
			inUse:  float64(d.highWater) / n,
			file:   float64(d.fileSize) / n,
		})
	}
	return out, nil
}

// highWater opens the closed store at path read-only with bbolt and
// returns the size its last transaction needs: pages in use or free,
// without the preallocated tail of the file.
func highWater(path string) (int64, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return 0, errors.Wrapf(err, "bbolt open %s", errors.Safe(path))
	}
	var n int64
	err = db.View(func(tx *bolt.Tx) error { n = tx.Size(); return nil })
	return n, errors.CombineErrors(err, db.Close())
}
