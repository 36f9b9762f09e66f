package observe

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
)

// Kit is one package's logger and meter. Its instrument makers return
// nil when metrics are off; a package records only when On.
type Kit struct {
	// Log is the caller's logger, or one that discards.
	Log   *slog.Logger
	meter metric.Meter
	on    bool
}

// New returns the kit of the package whose import path is scope. With no
// MeterProvider, metrics are off.
func New(log *slog.Logger, mp metric.MeterProvider, scope string) *Kit {
	k := &Kit{Log: log}
	if k.Log == nil {
		k.Log = slog.New(slog.DiscardHandler)
	}
	if mp != nil {
		k.meter = mp.Meter(scope)
		k.on = k.meter != nil
	}
	return k
}

// On reports whether metrics are made: a MeterProvider was given and
// every instrument made so far exists. (The API never returns a nil
// instrument: on error it returns a no-op one and the error, which is the
// SDK's to report.)
func (k *Kit) On() bool { return k.on }

// Start returns the time to measure from, or the zero time when off.
func (k *Kit) Start() time.Time {
	if !k.on {
		return time.Time{}
	}
	return time.Now()
}

// Since is the seconds from t to now, the unit of every duration.
func Since(t time.Time) float64 { return time.Since(t).Seconds() }

// Seconds makes a histogram of durations in seconds.
func (k *Kit) Seconds(name, desc string) metric.Float64Histogram {
	if !k.on {
		return nil
	}
	h, _ := k.meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc))
	k.on = h != nil
	return h
}

// Histogram makes a histogram of integers in unit.
func (k *Kit) Histogram(name, unit, desc string) metric.Int64Histogram {
	if !k.on {
		return nil
	}
	h, _ := k.meter.Int64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc))
	k.on = h != nil
	return h
}

// Counter makes a counter.
func (k *Kit) Counter(name, desc string) metric.Int64Counter {
	if !k.on {
		return nil
	}
	c, _ := k.meter.Int64Counter(name, metric.WithDescription(desc))
	k.on = c != nil
	return c
}
