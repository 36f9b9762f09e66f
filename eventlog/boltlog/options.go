package boltlog

import (
	"time"

	"github.com/sessionlog/sessionlog/eventlog/wal"
)

// Options are the bbolt store's own options, beside the eventlog.Options
// every store takes. The zero value (or nil) means the defaults.
type Options struct {
	// LockTimeout bounds the wait for a store file held by another
	// process (or another Log of this one); then Open fails with
	// ErrLocked. 0 (or less) means DefaultLockTimeout: there is no
	// unbounded wait.
	LockTimeout time.Duration
	// WAL sizes and paces the write-ahead log; its zero values are the
	// defaults.
	WAL WALOptions
}

// WALOptions sizes and paces the write-ahead log (see the package doc,
// Durability). Zero or negative values mean the defaults.
type WALOptions struct {
	// SegmentSize is the size at which a new segment file is started;
	// DefaultSegmentSize when 0.
	SegmentSize int64
	// ApplyInterval is the longest an acknowledged write waits before the
	// applier copies it into the tree; DefaultApplyInterval when 0.
	ApplyInterval time.Duration
	// ApplyBytes starts an apply round at once when the unapplied writes
	// hold this many record bytes; DefaultApplyBytes when 0.
	ApplyBytes int64
	// MaxUnapplied bounds the unapplied writes (memory, and the log an
	// Open after a crash replays): writers wait for the applier past it;
	// DefaultMaxUnapplied when 0.
	MaxUnapplied int64
}

// Defaults of Options.
const (
	DefaultLockTimeout   = time.Second
	DefaultSegmentSize   = wal.DefaultSegmentSize
	DefaultApplyInterval = 100 * time.Millisecond
	DefaultApplyBytes    = 8 << 20
	DefaultMaxUnapplied  = 64 << 20
)

// The defaults withDefaults applies; variables so that tests can change
// them for the stores a helper opens.
var (
	applyInterval       = DefaultApplyInterval
	applyBytes    int64 = DefaultApplyBytes
	maxUnapplied  int64 = DefaultMaxUnapplied
)

// withDefaults returns o with its zero values replaced by the defaults.
func (o Options) withDefaults() Options {
	if o.LockTimeout <= 0 {
		// bbolt waits forever on a zero or negative timeout; a held store
		// must be reported, never waited on for good.
		o.LockTimeout = DefaultLockTimeout
	}
	if o.WAL.SegmentSize <= 0 {
		o.WAL.SegmentSize = DefaultSegmentSize
	}
	if o.WAL.ApplyInterval <= 0 {
		o.WAL.ApplyInterval = applyInterval
	}
	if o.WAL.ApplyBytes <= 0 {
		o.WAL.ApplyBytes = applyBytes
	}
	if o.WAL.MaxUnapplied <= 0 {
		o.WAL.MaxUnapplied = maxUnapplied
	}
	return o
}
