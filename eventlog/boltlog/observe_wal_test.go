package boltlog_test

import (
	"context"
	"testing"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/metrictest"
)

// TestMetricsApply: an apply round records its time and the bytes it
// copied into the tree.
func TestMetricsApply(t *testing.T) {
	noApply(t)
	mp := metrictest.New()
	l, _ := openLog(t, &eventlog.Options{Metrics: mp})
	ctx := context.Background()
	if err := l.Create(ctx, header("a")); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(ctx, "a", turnEvents(t, 0, 1)); err != nil {
		t.Fatal(err)
	}
	if n := mp.Count(boltlog.MetricApplyDuration); n != 0 {
		t.Fatalf("%d apply rounds before any ran", n)
	}
	pending := boltlog.Unapplied(l)
	if err := l.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if n := mp.Count(boltlog.MetricApplyDuration); n != 1 {
		t.Fatalf("%d apply rounds recorded after one", n)
	}
	if got := mp.Sum(boltlog.MetricApplyBytes); got != float64(pending) || got <= 0 {
		t.Fatalf("the round copied %v bytes, want the %d the tail held", got, pending)
	}
}
