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
