package transcript

import (
	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

var (
	// ErrFormat marks a file that is none of the formats asked for: a
	// third format under --format auto, or a file whose lines do not read
	// as the format named. It is also marked codec.ErrInvalid.
	ErrFormat = errors.New("transcript: unknown format")

	// ErrStale marks an answer Lane.MapAnswer does not map: its request is
	// not the lane's open one. It is also marked codec.ErrInvalid.
	ErrStale = errclass.Mark(errors.New("transcript: no request of the lane waits for this answer"), codec.ErrInvalid)
)

// invalidf returns an error marked codec.ErrInvalid, created one frame up.
func invalidf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), codec.ErrInvalid)
}

// formatf returns an error marked ErrFormat and codec.ErrInvalid.
func formatf(format string, args ...interface{}) error {
	return errclass.Mark(errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrFormat), codec.ErrInvalid)
}
