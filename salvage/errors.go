package salvage

import (
	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

var (
	// ErrExists is returned by Into when the path of the new store exists
	// already: salvage only ever creates a new store, it never adds to or
	// overwrites one.
	ErrExists = errors.New("salvage: the new store exists already")
	// ErrDamaged marks the error a read of the source returned, or the
	// panic it raised, when salvage reports it: what was being read is
	// damaged. Errors that eventlog classifies keep their own class too
	// (eventlog.ErrCorrupt, eventlog.ErrNotFound, …).
	ErrDamaged = errors.New("salvage: damaged")
	// ErrUnpublished is returned by File.Head for a session an Import or
	// Fork was still filling when the store was last written (a crash):
	// it was never published, so Copy skips it.
	ErrUnpublished = errors.New("salvage: never published")
)

// existsf returns an error marked ErrExists, created one frame up.
func existsf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrExists)
}

// damagedf returns an error marked ErrDamaged, created one frame up.
func damagedf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrDamaged)
}
