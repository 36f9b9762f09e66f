package eventlog

import (
	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
)

// sessionState is what an appender needs to know about a session: its head
// (as stored, and the exact stored head record bytes, which the commit
// compares to detect any change under it) and its validation state.
//
// INVARIANTS: a sessionState is read and changed only by the holder of the
// session's lock; head and headRec describe the same committed head; v has
// seen exactly the events 0..head.Next-1.
type sessionState struct {
	head    Head
	headRec []byte
	v       Validator
}

// acceptAll is the Validator of a store opened with Options.Unvalidated:
// it accepts every event (codec.DecodeEvent's envelope checks still apply).
type acceptAll struct{}

func (acceptAll) Validate(*codec.Event) error { return nil }

// refuseAll stands in for a nil returned by Options.NewValidator: every
// append of the session fails, rather than pass unchecked.
type refuseAll struct{}

func (refuseAll) Validate(*codec.Event) error {
	return errors.AssertionFailedf("eventlog: Options.NewValidator returned nil")
}
