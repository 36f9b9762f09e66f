package sessioncache

import (
	"container/list"
	"sync"
)

// Cache is a bounded LRU of per-session states, keyed by session id. It is
// safe for concurrent use; callers take and put back a session's entry
// only while holding that session's lock (Locks), so an entry is never
// used by two writers at once.
type Cache[V any] struct {
	mu  sync.Mutex
	max int
	ll  *list.List // front = most recently used; values are *entry[V]
	m   map[string]*list.Element
	obs *counters // nil: metrics off (Observe)
}

type entry[V any] struct {
	id string
	v  V
}

// New returns a cache of at most max entries (at least one).
func New[V any](max int) *Cache[V] {
	if max < 1 {
		max = 1
	}
	return &Cache[V]{max: max, ll: list.New(), m: make(map[string]*list.Element)}
}

// Get returns the state of id and whether there is one.
func (c *Cache[V]) Get(id string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[id]; e != nil {
		c.ll.MoveToFront(e)
		return e.Value.(*entry[V]).v, true
	}
	var zero V
	return zero, false
}

// Put stores v as the state of id, evicting the least recently used
// entries beyond the bound.
func (c *Cache[V]) Put(id string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[id]; e != nil {
		e.Value.(*entry[V]).v = v
		c.ll.MoveToFront(e)
		return
	}
	c.m[id] = c.ll.PushFront(&entry[V]{id: id, v: v})
	for c.ll.Len() > c.max {
		e := c.ll.Back()
		c.ll.Remove(e)
		delete(c.m, e.Value.(*entry[V]).id)
	}
}

// Remove drops the state of id, so that it is rebuilt from the store next
// time. This is how a refused or failed append leaves no trace in memory.
func (c *Cache[V]) Remove(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[id]; e != nil {
		c.ll.Remove(e)
		delete(c.m, id)
	}
}

// Len is the number of cached states.
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}
