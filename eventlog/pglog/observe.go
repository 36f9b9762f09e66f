package pglog

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/sessionlog/sessionlog/eventlog/internal/engine"
	"github.com/sessionlog/sessionlog/internal/observe"
)

// Instrument names of the metrics only the PostgreSQL store has
// (Options.Metrics). It also records eventlog.MetricCommitDuration and
// eventlog.MetricCommitEvents, with the same meanings as the bbolt store,
// and its validator cache the eventlog.MetricValidator counters.
// eventlog.MetricSyncDuration, bbolt's disk time, has no counterpart
// here: the server's WAL flush is inside the round trip. Durations are in
// seconds.
const (
	// MetricRoundTrip: one write transaction of the group commit, from
	// sending its pipeline of statements to the server's answer to its
	// commit (with synchronous_commit on, after the WAL flush). A retried
	// transaction records each attempt.
	MetricRoundTrip = "sessionlog.store.pg.roundtrip.duration"
	// MetricRetries counts the transactions (writes, reads, import
	// copies) run again after a retryable failure, by the attribute
	// sqlstate: 40001 (serialization), 40P01 (deadlock), 40003
	// (ambiguous commit), or "unsent" for a request that never reached
	// the server.
	MetricRetries = "sessionlog.store.pg.retries"
)

// observer is the store's logger and instruments: the engine's, and the
// PostgreSQL store's own. With no MeterProvider nothing is made, timed or
// counted.
type observer struct {
	*engine.Metrics
	kit       *observe.Kit
	roundTrip metric.Float64Histogram
	retries   metric.Int64Counter
}

func newObserver(log *slog.Logger, mp metric.MeterProvider) *observer {
	k := observe.New(log, mp, "github.com/sessionlog/sessionlog/eventlog/pglog")
	o := &observer{Metrics: engine.NewMetrics(k), kit: k}
	o.roundTrip = k.Seconds(MetricRoundTrip, "time of one write transaction's pipeline and commit on the server")
	o.retries = k.Counter(MetricRetries, "transactions run again after a retryable failure")
	return o
}

// start returns the time to measure from, or the zero time when off.
func (o *observer) start() time.Time { return o.kit.Start() }

// roundTripped records one attempt of a write transaction since t.
func (o *observer) roundTripped(t time.Time) {
	if o.On {
		o.roundTrip.Record(context.Background(), observe.Since(t))
	}
}

// retried counts a transaction run again after err.
func (o *observer) retried(ctx context.Context, err error) {
	if !o.On {
		return
	}
	code := sqlState(err)
	if code == "" {
		code = "unsent"
	}
	o.retries.Add(context.WithoutCancel(ctx), 1, metric.WithAttributes(attribute.String("sqlstate", code)))
}
