package sessioncache

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/internal/metrictest"
	"github.com/sessionlog/sessionlog/internal/observe"
)

func TestCache(t *testing.T) {
	c := New[*int](2)
	a, b, d := new(int), new(int), new(int)
	get := func(id string) *int { v, _ := c.Get(id); return v }
	c.Put("a", a)
	c.Put("b", b)
	if get("a") != a { // a is now the most recent
		t.Fatalf("Get(a) missed")
	}
	c.Put("d", d) // evicts b
	if get("b") != nil || get("a") != a || get("d") != d || c.Len() != 2 {
		t.Fatalf("LRU eviction wrong: b=%v a=%v d=%v len=%d", get("b"), get("a"), get("d"), c.Len())
	}
	c.Remove("a")
	if get("a") != nil || c.Len() != 1 {
		t.Fatalf("Remove(a) left it")
	}
}

func TestLocks(t *testing.T) {
	var l Locks
	ctx := context.Background()
	unlock, err := l.Lock(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	other, err := l.Lock(ctx, "t") // another session is not blocked
	if err != nil {
		t.Fatal(err)
	}
	other()
	wctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := l.Lock(wctx, "s"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock of a held session = %v, want the deadline", err)
	}
	unlock()
	unlock2, err := l.Lock(ctx, "s")
	if err != nil {
		t.Fatalf("Lock after release = %v", err)
	}
	unlock2()
	if len(l.m) != 0 {
		t.Fatalf("released locks left %d entries", len(l.m))
	}
}

func TestClaims(t *testing.T) {
	var c Claims
	if !c.Add("a") || c.Add("a") || !c.Has("a") || c.Has("b") {
		t.Fatal("a second claim of one id must fail, others not")
	}
	c.Remove("a")
	if c.Has("a") || !c.Add("a") {
		t.Fatal("a released id is free again")
	}
}

// TestObserve: Lookup counts hits and misses and Replayed the replays and
// their events, once Observe gave the cache a meter; without one (or with
// a kit whose metrics are off) nothing is made or counted.
func TestObserve(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		mp   *metrictest.Provider
	}{
		{name: "not observed"},
		{name: "metrics off"},
		{name: "metrics on", mp: metrictest.New()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := New[int](4)
			switch {
			case tt.mp != nil:
				c.Observe(observe.New(nil, tt.mp, "test"))
			case tt.name == "metrics off":
				c.Observe(observe.New(nil, nil, "test"))
			}
			c.Put("a", 1)
			if v, ok := c.Lookup(ctx, "a"); !ok || v != 1 {
				t.Fatalf("Lookup(a) = %v, %v", v, ok)
			}
			if _, ok := c.Lookup(ctx, "b"); ok {
				t.Fatal("Lookup(b) found a state never put")
			}
			c.Replayed(ctx, 5)
			if tt.mp == nil {
				if c.obs != nil {
					t.Fatal("made instruments with metrics off")
				}
				return
			}
			got := [4]float64{tt.mp.Sum(MetricHits), tt.mp.Sum(MetricMisses), tt.mp.Sum(MetricReplays), tt.mp.Sum(MetricReplayedEvents)}
			if got != [4]float64{1, 1, 1, 5} {
				t.Fatalf("hits, misses, replays, replayed events = %v, want [1 1 1 5]", got)
			}
		})
	}
}
