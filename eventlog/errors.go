package eventlog

import (
	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
)

// Error classes (docs/rules.md#error-classes). Every error a Store returns that belongs to a
// class is marked with its sentinel; test with errors.Is, from the
// standard library or cockroachdb/errors alike (internal/errclass). Errors
// name the session and seq where they apply.
var (
	// ErrConflict is returned by an Append whose first seq is not the
	// session's next seq, and by Create, Import or Fork onto an id that
	// exists (or is being imported) already. Nothing was written.
	ErrConflict = errors.New("eventlog: conflict")
	// ErrNotFound is returned for a session that does not exist (or is not
	// published yet), and by a read-only Open of a path with no store.
	ErrNotFound = errors.New("eventlog: not found")
	// ErrLocked is returned by a bbolt store's Open when another process
	// (or another Log in this process) holds the file past
	// boltlog.Options.LockTimeout; and by any call of a PostgreSQL store
	// whose statement waited for a lock past lock_timeout or ran past
	// statement_timeout (pglog.Options).
	ErrLocked = errors.New("eventlog: store is locked")
	// ErrClosed is returned by every method of a Log after Close, and by
	// Next on a closed Iterator.
	ErrClosed = errors.New("eventlog: closed")
	// ErrReadOnly is returned by the write methods of a Log opened with
	// Options.ReadOnly.
	ErrReadOnly = errors.New("eventlog: store is open read-only")
	// ErrNoValidation is returned by Open for a writable store given
	// neither Options.NewValidator nor Options.Unvalidated.
	ErrNoValidation = errors.New("eventlog: a writable store needs a validator")
)

// Aliases of the codec classes, so that callers of this package need not
// import codec to classify its errors. They are the same values:
// errors.Is(err, eventlog.ErrCorrupt) ⟺ errors.Is(err, codec.ErrCorrupt).
var (
	// ErrCorrupt marks stored bytes that fail validation: a record's frame,
	// CRC, decode or key check, an engine record that does not decode, a
	// missing record, a damaged or truncated store file.
	ErrCorrupt = codec.ErrCorrupt
	// ErrInvalid marks a request that breaks a rule: an event or header
	// that does not decode, a gap in an append, a refusal by the
	// session's Validator, a fork point that is not a turn/end.
	ErrInvalid = codec.ErrInvalid
	// ErrUnsupported marks a store whose format version is newer than this
	// code, and a session header whose version is not 0.
	ErrUnsupported = codec.ErrUnsupported
)
