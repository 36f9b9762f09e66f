package header

import (
	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

var (
	// ErrInvalid marks a header, delta or header event that breaks a rule
	// of docs/rules.md#header: a missing or mistyped key the engine reads, an explicit
	// null, or a delta with no earlier snapshot. It is codec.ErrInvalid,
	// so callers test one class for every invalid value.
	ErrInvalid = codec.ErrInvalid
	// ErrCorrupt marks bytes that are not one well-formed stored value
	// (truncated or malformed msgpack). It is codec.ErrCorrupt.
	ErrCorrupt = codec.ErrCorrupt
)

// invalidf returns an error marked ErrInvalid, created one frame up.
func invalidf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrInvalid)
}

// corruptf returns an error marked ErrCorrupt, created one frame up.
func corruptf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrCorrupt)
}

// corrupt marks a reader failure as corruption unless it is classified
// already.
func corrupt(err error) error {
	if err == nil || errors.Is(err, ErrInvalid) || errors.Is(err, ErrCorrupt) {
		return err
	}
	return errclass.Mark(err, ErrCorrupt)
}
