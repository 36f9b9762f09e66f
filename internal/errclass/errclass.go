package errclass

import (
	stderrors "errors"
	"fmt"

	"github.com/cockroachdb/errors"
)

// Mark returns err with the class class: errors.Is(Mark(err, class),
// class) is true from either errors package, as is errors.Is(…, c) for
// every class c that class itself is marked with. The message is err's,
// unchanged. A nil err stays nil.
func Mark(err, class error) error {
	if err == nil {
		return nil
	}
	return &classed{cause: err, class: class}
}

// classed is an error of a class: a wrapper that adds nothing to the text.
type classed struct {
	cause, class error
}

func (e *classed) Error() string { return e.cause.Error() }

// Unwrap returns the error that was marked.
func (e *classed) Unwrap() error { return e.cause }

// Is reports whether target is the class, or a class the class is marked
// with.
func (e *classed) Is(target error) bool {
	return e.class == target || stderrors.Is(e.class, target)
}

// SafeFormatError prints nothing: the link has no text of its own, and
// the cause's text keeps its redaction marks.
func (e *classed) SafeFormatError(errors.Printer) error { return e.cause }

// Format formats the error chain as cockroachdb/errors does (%+v shows
// the causes' stacks).
func (e *classed) Format(s fmt.State, verb rune) { errors.FormatError(e, s, verb) }
