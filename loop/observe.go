package loop

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Instrument names of the loop's metrics (Options.Metrics). Durations are
// in seconds.
const (
	// MetricAppendDuration: one atomic batch append, from call to answer.
	MetricAppendDuration = "sessionlog.loop.append.duration"
	// MetricInvariantDuration: the invariant check of one request.
	MetricInvariantDuration = "sessionlog.loop.invariant.duration"
	// MetricFirstChunk: from the provider call to its first chunk.
	MetricFirstChunk = "sessionlog.loop.first_chunk.duration"
	// MetricProviderErrors counts steps ended by the provider, by the
	// code turn/end records (attribute "code").
	MetricProviderErrors = "sessionlog.loop.provider.errors"
	// MetricCompactionAttempts counts compaction attempts of the gate.
	MetricCompactionAttempts = "sessionlog.loop.compaction.attempts"
	// MetricCompactionOutcomes counts their outcomes (attribute
	// "outcome": compacted, failed, gave_up or error).
	MetricCompactionOutcomes = "sessionlog.loop.compaction.outcomes"
)

// observer is the loop's logger and instruments. With no MeterProvider
// the instruments are not made and nothing is timed.
type observer struct {
	log        *slog.Logger
	on         bool
	append     metric.Float64Histogram
	invariant  metric.Float64Histogram
	firstChunk metric.Float64Histogram
	provErrs   metric.Int64Counter
	attempts   metric.Int64Counter
	outcomes   metric.Int64Counter
}

func newObserver(log *slog.Logger, mp metric.MeterProvider) *observer {
	o := &observer{log: log}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	if mp == nil {
		return o
	}
	m := mp.Meter("github.com/sessionlog/sessionlog/loop")
	// Instrument errors are the SDK's to report; a nil instrument is
	// never returned by the API (it falls back to a no-op).
	o.append, _ = m.Float64Histogram(MetricAppendDuration, metric.WithUnit("s"),
		metric.WithDescription("time to append one atomic batch of the loop"))
	o.invariant, _ = m.Float64Histogram(MetricInvariantDuration, metric.WithUnit("s"),
		metric.WithDescription("time to check one request against the log's rebuild"))
	o.firstChunk, _ = m.Float64Histogram(MetricFirstChunk, metric.WithUnit("s"),
		metric.WithDescription("time from the provider call to its first chunk"))
	o.provErrs, _ = m.Int64Counter(MetricProviderErrors,
		metric.WithDescription("steps ended by a provider error, by code"))
	o.attempts, _ = m.Int64Counter(MetricCompactionAttempts,
		metric.WithDescription("compaction attempts of the gate"))
	o.outcomes, _ = m.Int64Counter(MetricCompactionOutcomes,
		metric.WithDescription("compaction outcomes, by outcome"))
	o.on = o.append != nil && o.invariant != nil && o.firstChunk != nil &&
		o.provErrs != nil && o.attempts != nil && o.outcomes != nil
	return o
}

// start returns the time to measure from, or the zero time when off.
func (o *observer) start() time.Time {
	if !o.on {
		return time.Time{}
	}
	return time.Now()
}

func since(t time.Time) float64 { return time.Since(t).Seconds() }

func (o *observer) appended(ctx context.Context, t time.Time) {
	if o.on {
		o.append.Record(context.WithoutCancel(ctx), since(t))
	}
}

func (o *observer) checked(ctx context.Context, t time.Time) {
	if o.on {
		o.invariant.Record(ctx, since(t))
	}
}

func (o *observer) firstChunkAfter(ctx context.Context, t time.Time) {
	if o.on {
		o.firstChunk.Record(ctx, since(t))
	}
}

func (o *observer) providerError(ctx context.Context, code string) {
	if o.on {
		o.provErrs.Add(ctx, 1, metric.WithAttributes(attribute.String("code", code)))
	}
}

func (o *observer) compaction(ctx context.Context, compacted, failed int, outcome string) {
	if !o.on {
		return
	}
	if n := int64(compacted + failed); n > 0 {
		o.attempts.Add(ctx, n)
	}
	if compacted > 0 {
		o.outcomes.Add(ctx, int64(compacted), metric.WithAttributes(attribute.String("outcome", "compacted")))
	}
	if failed > 0 {
		o.outcomes.Add(ctx, int64(failed), metric.WithAttributes(attribute.String("outcome", "failed")))
	}
	if outcome != "" {
		o.outcomes.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", outcome)))
	}
}
