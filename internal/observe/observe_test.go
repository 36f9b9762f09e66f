package observe_test

import (
	"context"
	"testing"

	"github.com/sessionlog/sessionlog/internal/metrictest"
	"github.com/sessionlog/sessionlog/internal/observe"
	"go.opentelemetry.io/otel/metric"
)

func TestKit(t *testing.T) {
	tests := []struct {
		name string
		mp   *metrictest.Provider
	}{
		{name: "no meter provider"},
		{name: "meter provider", mp: metrictest.New()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mp metric.MeterProvider
			if tt.mp != nil {
				mp = tt.mp
			}
			k := observe.New(nil, mp, "test")
			if k.Log == nil {
				t.Fatal("Log is nil")
			}
			k.Log.Info("discarded or the caller's") // must not panic
			secs := k.Seconds("s", "seconds")
			hist := k.Histogram("h", "{event}", "events")
			count := k.Counter("c", "count")
			start := k.Start()
			if want := tt.mp != nil; k.On() != want {
				t.Fatalf("On() = %v, want %v", k.On(), want)
			}
			if tt.mp == nil {
				if secs != nil || hist != nil || count != nil || !start.IsZero() {
					t.Fatalf("off, yet made instruments (%v %v %v) or read the clock (%v)", secs, hist, count, start)
				}
				return
			}
			if start.IsZero() {
				t.Fatal("on, yet Start did not read the clock")
			}
			ctx := context.Background()
			secs.Record(ctx, observe.Since(start))
			hist.Record(ctx, 3)
			count.Add(ctx, 2)
			if tt.mp.Count("s") != 1 || tt.mp.Sum("h") != 3 || tt.mp.Sum("c") != 2 {
				t.Errorf("recorded s=%d h=%v c=%v, want 1, 3, 2", tt.mp.Count("s"), tt.mp.Sum("h"), tt.mp.Sum("c"))
			}
		})
	}
}
