package eventlog

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
)

// Instrument names of the store's metrics (Options.Metrics). Durations
// are in seconds.
const (
	// MetricCommitDuration: one Create or Append, from the call to its
	// durable answer (validation, queueing and the group commit).
	MetricCommitDuration = "sessionlog.store.commit.duration"
	// MetricCommitEvents: the events written by one write transaction
	// of the group commit (the sum over the writes it batched).
	MetricCommitEvents = "sessionlog.store.commit.events"
	// MetricSyncDuration: the time one write transaction spent writing
	// its pages and meta page to the file, each followed by fdatasync
	// (bbolt's write time; with NoSync, the writes alone).
	MetricSyncDuration = "sessionlog.store.sync.duration"
	// MetricValidatorHits and MetricValidatorMisses count the lookups of
	// a session's validation state in the cache; MetricValidatorReplays
	// counts the misses that rebuilt it by replaying the stored events,
	// and MetricValidatorReplayedEvents the events they replayed.
	MetricValidatorHits           = "sessionlog.store.validator.hits"
	MetricValidatorMisses         = "sessionlog.store.validator.misses"
	MetricValidatorReplays        = "sessionlog.store.validator.replays"
	MetricValidatorReplayedEvents = "sessionlog.store.validator.replayed_events"
)

// observer is the store's logger and instruments. With no MeterProvider
// nothing is made, timed or counted.
type observer struct {
	log      *slog.Logger
	on       bool
	commit   metric.Float64Histogram
	events   metric.Int64Histogram
	sync     metric.Float64Histogram
	hits     metric.Int64Counter
	misses   metric.Int64Counter
	replays  metric.Int64Counter
	replayed metric.Int64Counter
}

func newObserver(log *slog.Logger, mp metric.MeterProvider) *observer {
	o := &observer{log: log}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	if mp == nil {
		return o
	}
	m := mp.Meter("github.com/sessionlog/sessionlog/eventlog")
	// The API never returns a nil instrument (on error it returns a
	// no-op one and the error, which is the SDK's to report).
	o.commit, _ = m.Float64Histogram(MetricCommitDuration, metric.WithUnit("s"),
		metric.WithDescription("time of one Create or Append until durable"))
	o.events, _ = m.Int64Histogram(MetricCommitEvents, metric.WithUnit("{event}"),
		metric.WithDescription("events written by one group-commit transaction"))
	o.sync, _ = m.Float64Histogram(MetricSyncDuration, metric.WithUnit("s"),
		metric.WithDescription("time one transaction spent writing and fdatasyncing the file"))
	o.hits, _ = m.Int64Counter(MetricValidatorHits, metric.WithDescription("validation states found in the cache"))
	o.misses, _ = m.Int64Counter(MetricValidatorMisses, metric.WithDescription("validation states not in the cache"))
	o.replays, _ = m.Int64Counter(MetricValidatorReplays, metric.WithDescription("validation states rebuilt by replay"))
	o.replayed, _ = m.Int64Counter(MetricValidatorReplayedEvents, metric.WithDescription("stored events replayed through validators"))
	o.on = o.commit != nil && o.events != nil && o.sync != nil && o.hits != nil &&
		o.misses != nil && o.replays != nil && o.replayed != nil
	return o
}

// start returns the time to measure from, or the zero time when off.
func (o *observer) start() time.Time {
	if !o.on {
		return time.Time{}
	}
	return time.Now()
}

func (o *observer) committed(ctx context.Context, t time.Time) {
	if o.on {
		o.commit.Record(context.WithoutCancel(ctx), time.Since(t).Seconds())
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

func (o *observer) cacheLookup(ctx context.Context, hit bool) {
	if !o.on {
		return
	}
	if hit {
		o.hits.Add(ctx, 1)
	} else {
		o.misses.Add(ctx, 1)
	}
}

func (o *observer) replayedState(ctx context.Context, events int64) {
	if o.on {
		o.replays.Add(ctx, 1)
		o.replayed.Add(ctx, events)
	}
}
