package eventlog

import (
	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// Error classes (SPEC §11). Every error the package returns that belongs to
// a class is marked with its sentinel; test with errors.Is. Errors name the
// session and seq where they apply.
var (
	// ErrConflict is returned by an Append whose first seq is not the
	// session's next seq, and by Create, Import or Fork onto an id that
	// exists (or is being imported) already. Nothing was written.
	ErrConflict = errors.New("eventlog: conflict")
	// ErrNotFound is returned for a session that does not exist (or is not
	// published yet), and by a read-only Open of a path with no store.
	ErrNotFound = errors.New("eventlog: not found")
	// ErrLocked is returned by Open when another process (or another Log
	// in this process) holds the store past Options.LockTimeout; and by
	// any call of a PostgreSQL store whose statement waited for a lock
	// past lock_timeout or ran past statement_timeout (Options.Postgres).
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

// corruptf returns an error marked ErrCorrupt, created one frame up.
func corruptf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrCorrupt)
}

// invalidf returns an error marked ErrInvalid, created one frame up.
func invalidf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrInvalid)
}

// conflictf returns an error marked ErrConflict, created one frame up.
func conflictf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrConflict)
}

// notFoundf returns an error marked ErrNotFound, created one frame up.
func notFoundf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrNotFound)
}

// unsupportedf returns an error marked ErrUnsupported, created one frame up.
func unsupportedf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrUnsupported)
}

// asInvalid reclassifies err, a refusal of bytes or events handed in by a
// caller, as ErrInvalid. A corruption mark (the codec's, for bytes that do
// not decode) is hidden behind a barrier that keeps the message, since the
// bytes are the caller's, not damage on disk; other causes stay visible to
// errors.Is.
func asInvalid(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrCorrupt):
		return codec.KeepPlace(err, errclass.Mark(errors.Handled(err), ErrInvalid))
	case errors.IsAny(err, ErrInvalid, ErrUnsupported):
		return err
	}
	return errclass.Mark(err, ErrInvalid)
}

// asCorrupt reclassifies err, a failure to decode stored bytes, as
// ErrCorrupt: a stored record that breaks a rule is damage. An invalid
// mark is hidden behind a barrier that keeps the message.
func asCorrupt(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrInvalid):
		return codec.KeepPlace(err, errclass.Mark(errors.Handled(err), ErrCorrupt))
	case errors.IsAny(err, ErrCorrupt, ErrUnsupported):
		return err
	}
	return errclass.Mark(err, ErrCorrupt)
}

// noSession is the ErrNotFound error for a session id.
func noSession(id string) error {
	return codec.NamesSession(errclass.Mark(errors.NewWithDepthf(1, "eventlog: no session %q", errors.Safe(id)), ErrNotFound))
}
