package boltlog

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/sessionlog/sessionlog/eventlog/internal/engine"
	"github.com/sessionlog/sessionlog/internal/observe"
)

// Instrument names of the metrics only the bbolt store has
// (eventlog.Options.Metrics). It also records eventlog's
// MetricCommitDuration, MetricCommitEvents and MetricValidator counters.
// Durations are in seconds.
const (
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
)

// observer is the store's logger and instruments: the engine's, and the
// bbolt store's own. With no MeterProvider nothing is made, timed or
// counted.
type observer struct {
	*engine.Metrics
	sync  metric.Float64Histogram
	apply metric.Float64Histogram
	lag   metric.Int64Histogram
}

func newObserver(log *slog.Logger, mp metric.MeterProvider) *observer {
	k := observe.New(log, mp, "github.com/sessionlog/sessionlog/eventlog")
	o := &observer{Metrics: engine.NewMetrics(k)}
	o.sync = k.Seconds(MetricSyncDuration, "time one log record or transaction spent writing and fdatasyncing")
	o.apply = k.Seconds(MetricApplyDuration, "time of one apply round of the write-ahead log into the tree")
	o.lag = k.Histogram(MetricApplyBytes, "By", "record bytes one apply round copied into the tree")
	return o
}

// applied records one apply round.
func (o *observer) applied(t time.Time, bytes int64) {
	if o.On {
		o.apply.Record(context.Background(), observe.Since(t))
		o.lag.Record(context.Background(), bytes)
	}
}

// synced records a write's disk time.
func (o *observer) synced(sync time.Duration) {
	if o.On {
		o.sync.Record(context.Background(), sync.Seconds())
	}
}
