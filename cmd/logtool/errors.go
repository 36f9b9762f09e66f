package main

import (
	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

var (
	// ErrUsage marks a command line that logtool cannot run: an unknown
	// command or flag, a missing or surplus argument, a bad flag value.
	// run exits with status 2 for it.
	ErrUsage = errors.New("logtool: usage error")
	// ErrNoStore marks a command that needs an existing store run against
	// a path where there is none; readers never create one.
	ErrNoStore = errors.New("logtool: no store")
	// ErrTornTail marks an import file refused under --strict because it
	// ends in a torn tail (docs/format.md#torn-tails).
	ErrTornTail = errors.New("logtool: torn tail refused")
	// ErrFindings marks a verify run that found problems (exit status 1;
	// the findings themselves are on stdout).
	ErrFindings = errors.New("logtool: findings")
	// ErrTurnFailed marks a run whose turns were run and logged but at
	// least one ended with an error (a provider's refusal, a transport
	// failure): exit status 1, so that a script sees it.
	ErrTurnFailed = errors.New("logtool: a turn ended with an error")
	// ErrInterrupted marks a command stopped by an interrupt (Ctrl-C);
	// run exits with status 130, as a shell does for SIGINT.
	ErrInterrupted = errors.New("logtool: interrupted")
)

// usagef returns an error marked ErrUsage, created one frame up.
func usagef(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrUsage)
}

// noStoref returns an error marked ErrNoStore, created one frame up.
func noStoref(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrNoStore)
}

// tornTailf returns an error marked ErrTornTail, created one frame up.
func tornTailf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrTornTail)
}
