package eventlog

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/metric"

	"github.com/sessionlog/sessionlog/codec"
)

// Store is what every log backend provides: boltlog.Log on one bbolt
// file, pglog.Store on PostgreSQL. Package eventlogtest holds the
// conformance suite that every implementation must pass.
type Store interface {
	// Create stores a new, empty session with its header line. An id that
	// exists already is ErrConflict.
	Create(ctx context.Context, h codec.SessionHeader) error
	// Append stores events atomically (all or none) at the end of the
	// session. events[0].Seq must equal the session's next seq (else
	// ErrConflict) and the seqs must be contiguous (else ErrInvalid). Every
	// event is validated first; a refused append changes nothing.
	Append(ctx context.Context, session string, events []codec.Event) error
	// Head returns the session's head record; ErrNotFound if there is none.
	Head(ctx context.Context, session string) (Head, error)
	// Sessions returns the heads of all published sessions, ordered by id.
	Sessions(ctx context.Context) ([]Head, error)
	// Scan returns an iterator over the session's events from seq on, in
	// seq order, holding a bounded number of events in memory.
	Scan(ctx context.Context, session string, from int64) (Iterator, error)
	// Fork creates child (whose ParentSession and SeedLength must name
	// source and at+1) holding source's events 0..at verbatim. at must be
	// the seq of a turn/end (docs/rules.md#fork).
	Fork(ctx context.Context, source string, at int64, child codec.SessionHeader) error
	// Import stores a whole session from src atomically (docs/rules.md#import): staged
	// in several transactions, published by the final head write. It
	// returns the number of events stored. An existing id is ErrConflict.
	Import(ctx context.Context, h codec.SessionHeader, src Source) (int64, error)
	// Close releases the store. Calls after it fail.
	Close() error
}

// Source yields events in order, then io.EOF. *codec.Scanner is one.
type Source interface {
	Next() (codec.Event, error)
}

// Iterator yields a session's events in seq order, then io.EOF. Errors
// name the session and seq. Close releases it and may be called twice.
type Iterator interface {
	Next() (codec.Event, error)
	Close() error
}

// Head is a session's head record: what the store knows about a session
// without reading its events.
type Head struct {
	Header codec.SessionHeader
	// Next is the seq the next appended event must have (= event count).
	Next int64
	// Turns counts turn/start events.
	Turns int64
	// LastTime is the time of the last event (createdAt when empty).
	LastTime float64
	// Chain is the running chain hash of docs/rules.md#chain-hash over the header record
	// and every event payload.
	Chain [32]byte
	// StoredBytes is the sum of the sizes of the events' records as the
	// write-ahead log holds them (codec.EncodeEventRecord), the same on
	// every backend; the bbolt tree holds them in packs, smaller.
	StoredBytes int64
}

// Validator checks the events of one session before they are stored and
// folds them into its state. Validate is called once per event, in seq
// order, starting from seq 0 (on a cache miss the store replays the
// session's stored events through a fresh Validator first).
//
// It is an alias of an unnamed interface type so that a package below the
// store (rebuild, whose fold is the default validation) can declare a
// constructor assignable to Options.NewValidator without importing
// eventlog: storage knows nothing of the rules it is handed.
type Validator = interface {
	Validate(ev *codec.Event) error
}

// Options are what every store's Open takes (boltlog.Open, pglog.Open,
// sessionlog.Open); each driver adds its own (boltlog.Options,
// pglog.Options). The zero value (or nil) means the defaults, except that
// a writable store needs NewValidator or Unvalidated (ErrNoValidation
// otherwise); sessionlog.Open supplies the default.
type Options struct {
	// ReadOnly opens the store for reading; a store that does not exist
	// is ErrNotFound and nothing is created.
	ReadOnly bool
	// NoSync skips the store's syncs (bbolt's fdatasyncs, PostgreSQL's
	// synchronous_commit). For tests and benchmarks only: a crash may
	// lose acknowledged appends.
	NoSync bool
	// NewValidator returns the validation state for a session (docs/rules.md#validation).
	// A store opened for writing needs it, or Unvalidated: the rules are
	// injected from above, and package sessionlog's Open wires the
	// default, rebuild.NewValidator, so that a log the store accepts is a
	// log that rebuilds. It must never return nil.
	NewValidator func(h codec.SessionHeader) Validator
	// Unvalidated opens a writable store that checks nothing beyond the
	// envelope rules codec.DecodeEvent always applies. Explicit, so that a
	// store without validation is never the accident of a nil NewValidator.
	Unvalidated bool
	// ValidatorCache bounds how many sessions' validation states are kept
	// in memory (LRU); 0 means DefaultValidatorCache.
	ValidatorCache int
	// ImportBatch is the number of events per import transaction; 0 means
	// DefaultImportBatch.
	ImportBatch int
	// Logger receives the store's log lines: opening, recovery, failed
	// transactions (ids, seqs and sizes, never event content). nil is
	// silent.
	Logger *slog.Logger
	// Metrics makes the store's instruments (the Metric names, and each
	// driver's own); nil records nothing and times nothing.
	Metrics metric.MeterProvider
}

// Defaults of Options.
const (
	DefaultValidatorCache = 256
	DefaultImportBatch    = 4096
)

// MaxSessionID bounds the length of a new session's id in bytes (a bbolt
// key's own limit is 32 KiB). Every store applies it to Create, Import
// and Fork, with the rest of the id rule: UTF-8 without control
// characters.
const MaxSessionID = 1024
