package eventlog

import (
	"sync"

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

// staging is the set of ids that an Import or Fork of this process is
// writing: a second one for the same id is a conflict at once.
type staging struct {
	mu sync.Mutex
	m  map[string]struct{}
}

// add claims id; it fails with ErrConflict if id is being staged already.
func (s *staging) add(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[id]; ok {
		return conflictf("eventlog: session %q is being imported or forked", errors.Safe(id))
	}
	if s.m == nil {
		s.m = make(map[string]struct{})
	}
	s.m[id] = struct{}{}
	return nil
}

func (s *staging) has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[id]
	return ok
}

func (s *staging) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
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
