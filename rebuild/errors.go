package rebuild

import (
	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// ErrInvalid marks a log that breaks a rule of docs/rules.md#validation: a replace whose
// range is not on the surface or whose sources are incomplete, a delta
// before any snapshot, an event out of seq order. It is codec.ErrInvalid,
// so errors.Is works with either name.
var ErrInvalid = codec.ErrInvalid

func invalidf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrInvalid)
}
