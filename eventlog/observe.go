package eventlog

import (
	"context"
	"log/slog"
	"time"

	"github.com/sessionlog/sessionlog/internal/observe"
	"github.com/sessionlog/sessionlog/internal/sessioncache"
	"go.opentelemetry.io/otel/metric"
)

// Instrument names of the store's metrics (Options.Metrics). Durations
// are in seconds.
const (
	// MetricCommitDuration: one Create or Append, from the call to its
	// durable answer (validation, queueing and the group commit).
	MetricCommitDuration = "sessionlog.store.commit.duration"
	// MetricCommitEvents: the events written by one group commit (one
	// write-ahead log record: the sum over the writes it batched).
	MetricCommitEvents = "sessionlog.store.commit.events"
	// MetricSyncDuration: the time one group commit spent writing its
	// write-ahead log record and fdatasyncing it, and the time one bbolt
	// transaction (an apply round, an import's or fork's stage) spent
	// writing its pages and meta page, each followed by fdatasync (with
	// NoSync, the writes alone).
	MetricSyncDuration = "sessionlog.store.sync.duration"
	// MetricApplyDuration: one apply round, copying acknowledged writes
	// from the write-ahead log into the bbolt tree in one transaction
	// (its fdatasyncs included).
	MetricApplyDuration = "sessionlog.store.apply.duration"
	// MetricApplyBytes: the record bytes one apply round copied: how far
	// the tree lagged behind the log.
	MetricApplyBytes = "sessionlog.store.apply.bytes"
	// MetricValidatorHits and MetricValidatorMisses count the lookups of
	// a session's validation state in the cache; MetricValidatorReplays
	// counts the misses that rebuilt it by replaying the stored events,
	// and MetricValidatorReplayedEvents the events they replayed. The
	// cache both stores share records them (internal/sessioncache).
	MetricValidatorHits           = sessioncache.MetricHits
	MetricValidatorMisses         = sessioncache.MetricMisses
	MetricValidatorReplays        = sessioncache.MetricReplays
	MetricValidatorReplayedEvents = sessioncache.MetricReplayedEvents
)

// observer is the store's logger and instruments. With no MeterProvider
// nothing is made, timed or counted.
type observer struct {
	log    *slog.Logger
	kit    *observe.Kit // also the validator cache's (sessioncache.Cache.Observe)
	on     bool
	commit metric.Float64Histogram
	events metric.Int64Histogram
	sync   metric.Float64Histogram
	apply  metric.Float64Histogram
	lag    metric.Int64Histogram
}

func newObserver(log *slog.Logger, mp metric.MeterProvider) *observer {
	k := observe.New(log, mp, "github.com/sessionlog/sessionlog/eventlog")
	o := &observer{log: k.Log, kit: k}
	o.commit = k.Seconds(MetricCommitDuration, "time of one Create or Append until durable")
	o.events = k.Histogram(MetricCommitEvents, "{event}", "events written by one group commit")
	o.sync = k.Seconds(MetricSyncDuration, "time one log record or transaction spent writing and fdatasyncing")
	o.apply = k.Seconds(MetricApplyDuration, "time of one apply round of the write-ahead log into the tree")
	o.lag = k.Histogram(MetricApplyBytes, "By", "record bytes one apply round copied into the tree")
	o.on = k.On()
	return o
}

// applied records one apply round.
func (o *observer) applied(t time.Time, bytes int64) {
	if o.on {
		o.apply.Record(context.Background(), observe.Since(t))
		o.lag.Record(context.Background(), bytes)
	}
}

func (o *observer) committed(ctx context.Context, t time.Time) {
	if o.on {
		o.commit.Record(context.WithoutCancel(ctx), observe.Since(t))
	}
}

// transaction records a group-commit transaction: its events and disk time.
func (o *observer) transaction(events int, sync time.Duration) {
	if o.on {
		o.events.Record(context.Background(), int64(events))
		o.synced(sync)
	}
}

// synced records a write transaction's disk time.
func (o *observer) synced(sync time.Duration) {
	if o.on {
		o.sync.Record(context.Background(), sync.Seconds())
	}
}
