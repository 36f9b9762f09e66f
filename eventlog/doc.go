// Package eventlog is the contract of the session log's stores (docs/rules.md#store):
// the Store interface and what it speaks in (Head, Source, Iterator,
// Validator), the Options every store takes, the error classes, and the
// chain hash (ChainStart, ChainNext). Package eventlogtest holds the
// conformance suite every Store passes.
//
// # The house
//
//	eventlog                 the contract (this package)
//	eventlog/internal/engine what every store does alike, once
//	eventlog/boltlog         the bbolt driver: Log, one file and its write-ahead log
//	eventlog/pglog           the PostgreSQL driver: Store, three tables
//	eventlog/wal             the write-ahead log's segment files (boltlog's)
//	internal/boltfmt         the bbolt format, for boltlog and salvage
//
// The engine owns the control flow both stores share: the rules a write
// must pass (header, id, event decoding, the session's Validator), the
// per-session writer locks and the validator cache, the group commit's
// queue and drain loop, Import's and Fork's staging and fork checks, the
// paged iterator of Scan, and the commit metrics. A driver implements the
// engine's narrow Backend (read a head, read a page of events, read a page
// of heads, commit a batch, stage a session, close) and holds only its
// I/O, and the hooks that are its own: bbolt's write-ahead log and applier
// and its one-process conflict check, PostgreSQL's re-read of a cached
// head another process made stale and its retry of ambiguous commits.
//
// Go's visibility gives the shape: the engine is an internal package
// under eventlog, so only eventlog's drivers can import it; it imports
// this package for the contract's types, never the reverse. A driver
// embeds *engine.Engine through an unexported alias, so the engine's
// exported methods, which are exactly the Store's (with SessionPage and
// CommitStats), become the driver's; the plumbing a driver needs beyond
// them (engine.Begin, the Write it commits, the test hooks) are
// package-level functions and types of the engine, which are not promoted
// and which no host can name. This package exports only what a host uses.
//
// Hosts open a store with sessionlog.Open, which takes a bbolt path or a
// postgres:// URL and wires the default validation; boltlog.Open and
// pglog.Open open one driver with its own options (boltlog.Options,
// pglog.Options). A writable store needs Options.NewValidator or an
// explicit Options.Unvalidated, else ErrNoValidation.
//
// Every error of a class is marked so that errors.Is, from the standard
// library or cockroachdb/errors, answers the class (internal/errclass).
package eventlog
