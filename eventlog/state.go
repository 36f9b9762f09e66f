package eventlog

import (
	"container/list"
	"context"
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

// sessionLocks serialises the writers of each session: an appender holds
// its session's lock from validation to the commit's answer, so a second
// appender sees the first one's effect. A lock is a one-slot channel, so
// waiting honours ctx.
type sessionLocks struct {
	mu sync.Mutex
	m  map[string]*sessionLock
}

type sessionLock struct {
	ch   chan struct{}
	refs int
}

// lock takes the lock of id and returns its release.
func (s *sessionLocks) lock(ctx context.Context, id string) (func(), error) {
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[string]*sessionLock)
	}
	sl := s.m[id]
	if sl == nil {
		sl = &sessionLock{ch: make(chan struct{}, 1)}
		s.m[id] = sl
	}
	sl.refs++
	s.mu.Unlock()
	select {
	case sl.ch <- struct{}{}:
		return func() { <-sl.ch; s.release(id, sl) }, nil
	case <-ctx.Done():
		s.release(id, sl)
		return nil, errors.Wrapf(ctx.Err(), "eventlog: waiting for session %q", errors.Safe(id))
	}
}

func (s *sessionLocks) release(id string, sl *sessionLock) {
	s.mu.Lock()
	sl.refs--
	if sl.refs == 0 {
		delete(s.m, id)
	}
	s.mu.Unlock()
}

// stateCache is the bounded LRU of session states (Options.ValidatorCache).
// Entries are taken and put back only by the holder of the session's lock.
type stateCache struct {
	mu  sync.Mutex
	max int
	ll  *list.List // front = most recently used; values are *cacheEntry
	m   map[string]*list.Element
}

type cacheEntry struct {
	id string
	st *sessionState
}

func newStateCache(max int) *stateCache {
	return &stateCache{max: max, ll: list.New(), m: make(map[string]*list.Element)}
}

// get returns the cached state of id, or nil.
func (c *stateCache) get(id string) *sessionState {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[id]; e != nil {
		c.ll.MoveToFront(e)
		return e.Value.(*cacheEntry).st
	}
	return nil
}

// put stores st as the state of id, evicting the least recently used
// entries beyond the bound.
func (c *stateCache) put(id string, st *sessionState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[id]; e != nil {
		e.Value.(*cacheEntry).st = st
		c.ll.MoveToFront(e)
		return
	}
	c.m[id] = c.ll.PushFront(&cacheEntry{id: id, st: st})
	for c.ll.Len() > c.max {
		e := c.ll.Back()
		c.ll.Remove(e)
		delete(c.m, e.Value.(*cacheEntry).id)
	}
}

// remove drops the state of id, so that it is rebuilt from the store next
// time. This is how a refused or failed append leaves no trace in memory.
func (c *stateCache) remove(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[id]; e != nil {
		c.ll.Remove(e)
		delete(c.m, id)
	}
}

// len is the number of cached states.
func (c *stateCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
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
