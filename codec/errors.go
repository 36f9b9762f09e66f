package codec

import (
	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

var (
	// ErrCorrupt marks stored bytes that fail validation: a record whose
	// frame, CRC or msgpack payload is damaged, or an import file whose
	// lines are damaged at or before its last turn/end (SPEC §2.3, §11).
	ErrCorrupt = errors.New("codec: corrupt")
	// ErrInvalid marks a value that is well-formed but breaks a rule of the
	// event model: header line, envelope keys, surface markers, types,
	// duplicate keys, explicit null, limits (SPEC §2, §11).
	ErrInvalid = errors.New("codec: invalid")
	// ErrUnsupported marks a session header whose version is not 0, or a
	// record whose format version is newer than this code knows.
	ErrUnsupported = errors.New("codec: unsupported")
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
