package boltfmt

import (
	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/internal/errclass"
)

// corruptf returns an error marked ErrCorrupt (codec's, which eventlog's
// is), created one frame up.
func corruptf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), codec.ErrCorrupt)
}

// unsupportedf returns an error marked ErrUnsupported, created one frame up.
func unsupportedf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), codec.ErrUnsupported)
}
