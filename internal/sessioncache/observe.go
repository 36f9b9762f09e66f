package sessioncache

import (
	"context"

	"go.opentelemetry.io/otel/metric"

	"github.com/sessionlog/sessionlog/internal/observe"
)

// Instrument names of the cache's metrics, the same for every store
// (eventlog re-exports them as its MetricValidator names).
const (
	MetricHits           = "sessionlog.store.validator.hits"
	MetricMisses         = "sessionlog.store.validator.misses"
	MetricReplays        = "sessionlog.store.validator.replays"
	MetricReplayedEvents = "sessionlog.store.validator.replayed_events"
)

// counters are a cache's instruments; nil when metrics are off.
type counters struct {
	hits, misses, replays, replayed metric.Int64Counter
}

// Observe makes the cache count its lookups and the replays that rebuilt
// a missed state, with the instruments of k (the store's meter). With
// metrics off it does nothing. Call it before the cache is used.
func (c *Cache[V]) Observe(k *observe.Kit) {
	if k == nil || !k.On() {
		return
	}
	m := &counters{
		hits:     k.Counter(MetricHits, "validation states found in the cache"),
		misses:   k.Counter(MetricMisses, "validation states not in the cache"),
		replays:  k.Counter(MetricReplays, "validation states rebuilt by replay"),
		replayed: k.Counter(MetricReplayedEvents, "stored events replayed through validators"),
	}
	if k.On() {
		c.obs = m
	}
}

// Lookup is Get, counted as a hit or a miss.
func (c *Cache[V]) Lookup(ctx context.Context, id string) (V, bool) {
	v, ok := c.Get(id)
	if m := c.obs; m != nil {
		if ok {
			m.hits.Add(ctx, 1)
		} else {
			m.misses.Add(ctx, 1)
		}
	}
	return v, ok
}

// Replayed counts a state rebuilt after a miss by replaying events stored
// events through a fresh validator.
func (c *Cache[V]) Replayed(ctx context.Context, events int64) {
	if m := c.obs; m != nil {
		m.replays.Add(ctx, 1)
		m.replayed.Add(ctx, events)
	}
}
