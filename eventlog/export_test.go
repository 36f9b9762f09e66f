package eventlog

import (
	"time"

	bolt "go.etcd.io/bbolt"
)

// SetTestHooks installs the committer's test hooks; call it right after
// Open, before the Log is used.
func SetTestHooks(l *Log, batch func(n int), write func(session string) error) {
	l.hookBatch, l.hookWrite = batch, write
}

// QueueLen is the number of requests waiting for the committer.
func QueueLen(l *Log) int { return len(l.queue) }

// CachedStates is the number of session states in the validator cache.
func CachedStates(l *Log) int { return l.cache.Len() }

// HighWater is the size in bytes the store's last transaction needs
// (bbolt's high-water mark: pages in use or free, not the preallocated
// tail of the file).
func HighWater(l *Log) int64 {
	var n int64
	_ = l.db.View(func(tx *bolt.Tx) error { n = tx.Size(); return nil })
	return n
}

// SetNoFreelistSync changes what later Opens pass to bbolt as
// NoFreelistSync, for BenchmarkFreelistSync; it returns the old value.
func SetNoFreelistSync(v bool) bool {
	old := noFreelistSync
	noFreelistSync = v
	return old
}

// SetLinger sets the committer's wait for returning writers (benchmarks).
func SetLinger(d time.Duration) (old time.Duration) { old, linger = linger, d; return old }
