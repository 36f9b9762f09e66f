package codec

import (
	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

var (
	// ErrCorrupt marks stored bytes that fail validation: a record whose
	// frame, CRC or msgpack payload is damaged, or an import file whose
	// lines are damaged at or before its last turn/end (docs/format.md#torn-tails, docs/rules.md#error-classes).
	ErrCorrupt = errors.New("codec: corrupt")
	// ErrInvalid marks a value that is well-formed but breaks a rule of the
	// event model: header line, envelope keys, surface markers, types,
	// duplicate keys, explicit null, limits (docs/format.md#interchange, docs/rules.md#error-classes).
	ErrInvalid = errors.New("codec: invalid")
	// ErrUnsupported marks a session header whose version is not 0, or a
	// record whose format version is newer than this code knows.
	ErrUnsupported = errors.New("codec: unsupported")
	// ErrKeys marks content sealed under a key the caller does not hold
	// (docs/rules.md#error-classes class keys, docs/forgetting.md#encryption-at-rest): a sealed record that does not open
	// with the data key given, a data key wrapped under a key-encryption
	// key the provider does not hold, a key that cannot be read. Errors of
	// this class are recognised by the standard library's errors.Is as
	// well as by cockroachdb/errors' (MarkKeys); package keys re-exports
	// it as keys.ErrKeys.
	ErrKeys = errors.New("codec: keys")
)

// corruptf returns an error marked ErrCorrupt, created one frame up.
func corruptf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrCorrupt)
}

// invalidf returns an error marked ErrInvalid, created one frame up.
func invalidf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrInvalid)
}

// unsupportedf returns an error marked ErrUnsupported, created one frame up.
func unsupportedf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrUnsupported)
}

// MarkKeys returns err in class keys: errors.Is(err, ErrKeys) holds for
// the result with the standard library's errors.Is as with
// cockroachdb/errors' (internal/errclass, as every class). The message is
// err's. A nil err stays nil.
func MarkKeys(err error) error { return errclass.Mark(err, ErrKeys) }

// keysf returns an error in class keys, created one frame up.
func keysf(format string, args ...interface{}) error {
	return MarkKeys(errors.NewWithDepthf(1, format, args...))
}
