package bolttest

import (
	"bytes"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/internal/boltfmt"
)

// UnpackStore rewrites every session's events in the closed bbolt store
// at path, which eventlog writes in packs, one record each under its seq
// (codec.EncodeRecord): the layout of stores written before format 3,
// which eventlog's readers and salvage still take. Tests that damage one
// event's record, or a marker in it, damage that event alone then. Every
// head is then rewritten as it is, so that the pages above the events
// (the root, the sessions' buckets) move into the pages the packs freed,
// before the records, as in a store written over time.
func UnpackStore(t testing.TB, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		ss := tx.Bucket(boltfmt.BucketSessions)
		return ss.ForEachBucket(func(id []byte) error {
			eb := ss.Bucket(id).Bucket(boltfmt.BucketEvents)
			var keys, recs [][]byte
			if err := eb.ForEach(func(k, v []byte) error {
				keys = append(keys, bytes.Clone(k))
				last, err := boltfmt.ParseSeqKey(k)
				if err != nil {
					return err
				}
				return boltfmt.ValueRecords(last, v, 0, func(_ int64, rec []byte) error {
					recs = append(recs, bytes.Clone(rec))
					return nil
				})
			}); err != nil {
				return err
			}
			for _, k := range keys {
				if err := eb.Delete(k); err != nil {
					return err
				}
			}
			for seq, rec := range recs {
				if err := eb.Put(boltfmt.SeqKey(int64(seq)), rec); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err == nil {
		err = db.Update(func(tx *bolt.Tx) error {
			ss := tx.Bucket(boltfmt.BucketSessions)
			return ss.ForEachBucket(func(id []byte) error {
				b := ss.Bucket(id)
				return b.Put(boltfmt.KeyHead, bytes.Clone(b.Get(boltfmt.KeyHead)))
			})
		})
	}
	if err != nil {
		t.Fatalf("unpack %s: %v", path, err)
	}
}
