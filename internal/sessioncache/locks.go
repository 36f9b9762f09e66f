package sessioncache

import (
	"context"
	"sync"
)

// Locks serialises the writers of each session within one process: an
// appender holds its session's lock from validation to the commit's
// answer, so a second appender sees the first one's effect. A lock is a
// one-slot channel, so waiting honours ctx. The zero value is ready.
type Locks struct {
	mu sync.Mutex
	m  map[string]*lock
}

type lock struct {
	ch   chan struct{}
	refs int
}

// Lock takes the lock of id and returns its release. It fails with
// ctx.Err() (unwrapped) when ctx ends first.
func (s *Locks) Lock(ctx context.Context, id string) (func(), error) {
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[string]*lock)
	}
	sl := s.m[id]
	if sl == nil {
		sl = &lock{ch: make(chan struct{}, 1)}
		s.m[id] = sl
	}
	sl.refs++
	s.mu.Unlock()
	select {
	case sl.ch <- struct{}{}:
		return func() { <-sl.ch; s.release(id, sl) }, nil
	case <-ctx.Done():
		s.release(id, sl)
		return nil, ctx.Err()
	}
}

func (s *Locks) release(id string, sl *lock) {
	s.mu.Lock()
	sl.refs--
	if sl.refs == 0 {
		delete(s.m, id)
	}
	s.mu.Unlock()
}

// Claims is the set of session ids that an Import or Fork of this process
// is staging, so that a second one for the same id is refused at once.
// The zero value is ready.
type Claims struct {
	mu sync.Mutex
	m  map[string]struct{}
}

// Add claims id and reports whether it was free.
func (c *Claims) Add(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[id]; ok {
		return false
	}
	if c.m == nil {
		c.m = make(map[string]struct{})
	}
	c.m[id] = struct{}{}
	return true
}

// Has reports whether id is claimed.
func (c *Claims) Has(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.m[id]
	return ok
}

// Remove releases the claim of id.
func (c *Claims) Remove(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}
