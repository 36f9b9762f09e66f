package boltlog

import (
	"context"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog/internal/engine"
)

// SetTestHooks installs the committer's test hooks; call it right after
// Open, before the Log is used.
func SetTestHooks(l *Log, batch func(n int), write func(session string) error) {
	engine.SetBatchHook(l.core, batch)
	l.hookWrite = write
}

// QueueLen is the number of writes waiting for the committer.
func QueueLen(l *Log) int { return engine.QueueLen(l.core) }

// CachedStates is the number of session states in the validator cache.
func CachedStates(l *Log) int { return engine.CachedStates(l.core) }

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

// SetApplySchedule sets the applier's round interval and the tail size
// that starts a round at once, for the Opens that follow; it returns a
// function that restores the defaults.
func SetApplySchedule(interval time.Duration, bytes int64) (restore func()) {
	oi, ob := applyInterval, applyBytes
	applyInterval, applyBytes = interval, bytes
	return func() { applyInterval, applyBytes = oi, ob }
}

// Apply runs an apply round now.
func Apply(l *Log) error { return l.Checkpoint() }

// Crash closes l as a killed process would leave it: every acknowledged
// write is in the write-ahead log, and nothing more is applied.
func Crash(l *Log) error {
	l.hookNoFinalApply = true
	return l.Close()
}

// Applied is the last write-ahead log lsn the tree holds.
func Applied(l *Log) uint64 { return l.applied.Load() }

// Unapplied is the number of record bytes in the unapplied tail.
func Unapplied(l *Log) int64 { return l.tails.size() }

// SetMaxUnapplied sets the tail size at which writers wait for the
// applier; it returns a function that restores the default.
func SetMaxUnapplied(n int64) (restore func()) {
	old := maxUnapplied
	maxUnapplied = n
	return func() { maxUnapplied = old }
}

// CreateLegacy creates a session as Create does, but without the id rule
// of checkHeader: a session that a store written before the rule may hold.
func CreateLegacy(l *Log, h codec.SessionHeader) error {
	return engine.CreateUnchecked(l.core, context.Background(), h)
}
