package main

import (
	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

var (
	// ErrUsage marks a command line that cannot be run: an unknown flag, a
	// bad value, an argument. The exit code is 2.
	ErrUsage = errors.New("logbench: usage error")
	// ErrMeasure marks a measurement that could not be taken because what
	// it measures misbehaved: a generated session that does not verify, a
	// baseline write that fails. The exit code is 1.
	ErrMeasure = errors.New("logbench: measurement failed")
)

// usagef returns an error marked ErrUsage, created at its caller.
func usagef(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrUsage)
}

// measuref returns an error marked ErrMeasure, created at its caller.
func measuref(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrMeasure)
}
