package loop

import (
	"context"
	"log/slog"
	"time"

	"github.com/sessionlog/sessionlog/internal/observe"
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
	// MetricRedacted counts the spans Options.Redactor replaced, by
	// what held them (attribute "in": prompt, injection, steering,
	// context or tool result).
	MetricRedacted = "sessionlog.loop.redacted"
)

// observer is the loop's logger and instruments. With no MeterProvider
// the instruments are not made and nothing is timed.
type observer struct {
	*observe.Kit // Start
	log          *slog.Logger
	on           bool
	append       metric.Float64Histogram
	invariant    metric.Float64Histogram
	firstChunk   metric.Float64Histogram
	provErrs     metric.Int64Counter
	attempts     metric.Int64Counter
	outcomes     metric.Int64Counter
	redactions   metric.Int64Counter
}

func newObserver(log *slog.Logger, mp metric.MeterProvider) *observer {
	k := observe.New(log, mp, "github.com/sessionlog/sessionlog/loop")
	o := &observer{Kit: k, log: k.Log}
	o.append = k.Seconds(MetricAppendDuration, "time to append one atomic batch of the loop")
	o.invariant = k.Seconds(MetricInvariantDuration, "time to check one request against the log's rebuild")
	o.firstChunk = k.Seconds(MetricFirstChunk, "time from the provider call to its first chunk")
	o.provErrs = k.Counter(MetricProviderErrors, "steps ended by a provider error, by code")
	o.attempts = k.Counter(MetricCompactionAttempts, "compaction attempts of the gate")
	o.outcomes = k.Counter(MetricCompactionOutcomes, "compaction outcomes, by outcome")
	o.redactions = k.Counter(MetricRedacted, "spans the redactor replaced, by what held them")
	o.on = k.On()
	return o
}

func (o *observer) appended(ctx context.Context, t time.Time) {
	if o.on {
		o.append.Record(context.WithoutCancel(ctx), observe.Since(t))
	}
}

func (o *observer) checked(ctx context.Context, t time.Time) {
	if o.on {
		o.invariant.Record(ctx, observe.Since(t))
	}
}

func (o *observer) firstChunkAfter(ctx context.Context, t time.Time) {
	if o.on {
		o.firstChunk.Record(ctx, observe.Since(t))
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

func (o *observer) redacted(ctx context.Context, in string, n int) {
	if o.on {
		o.redactions.Add(context.WithoutCancel(ctx), int64(n), metric.WithAttributes(attribute.String("in", in)))
	}
}
