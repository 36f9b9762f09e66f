package loop

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/sessionlog/sessionlog/compact"
	"github.com/sessionlog/sessionlog/redact"
)

// InvariantMode selects how the loop checks a request before sending it
// (docs/loop.md#steps, step 9).
type InvariantMode uint8

const (
	// InvariantIncremental, the default, rebuilds each request with a
	// second incremental builder fed only by records read back from the
	// store, and compares digests.
	InvariantIncremental InvariantMode = iota
	// InvariantFromScratch rebuilds each request with a from-scratch fold
	// over every record read back from the store (for tests: slow).
	InvariantFromScratch
	// InvariantOff sends without the check.
	InvariantOff
)

// Options configures a loop instance. Provider and Host are required.
type Options struct {
	Provider Provider
	Host     Host
	// Prefix contributors, in registration order.
	Prefix []Contributor
	// PreStep hooks, run in order before the compaction gate.
	PreStep []PreStepHook
	// Compaction is the gate run before every boundary; nil disables it.
	Compaction *compact.Gate
	Invariant  InvariantMode
	// Now returns the time stamped on events, in Unix milliseconds; nil
	// means the wall clock.
	Now func() float64
	// Cwd is recorded in the header line of a session the loop creates.
	Cwd string
	// OnGaveUp, when set, is told when the compaction gate gave up (the
	// request then goes out with the history as it stands).
	OnGaveUp func(turn, step int64, err error)
	// StoreTimeout bounds each store call (an append, the reads of the
	// invariant check and of Open); 0 means DefaultStoreTimeout, a
	// negative value no bound. A batch the loop decided to write is
	// never cut short by the cancellation of Send's context, only by
	// this bound, and then the turn ends with ErrStoreTimeout. (A store
	// that ignores its context keeps the goroutine of that call until it
	// answers; the loop does not wait for it.)
	StoreTimeout time.Duration
	// Logger receives the loop's log lines (never user content); nil is
	// silent.
	Logger *slog.Logger
	// Metrics makes the loop's instruments (the Metric names); nil
	// records nothing.
	Metrics metric.MeterProvider
	// Redactor, when set, is applied to the user's content (Send, Inject,
	// Steer, Composer.Append) and to tool results before they are logged
	// (docs/forgetting.md#redaction): what it matches is replaced by "[REDACTED]" in the
	// events, and so in every request, which the loop builds from the
	// log. The model never sees what the log does not hold. redact.Secrets
	// is the ready one; redact.New takes patterns of one's own.
	Redactor *redact.Redactor
}

func (o *Options) now() float64 {
	if o.Now != nil {
		return o.Now()
	}
	return float64(time.Now().UnixMilli())
}
