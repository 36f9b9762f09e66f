package loop_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/compact"
	"github.com/sessionlog/sessionlog/internal/metrictest"
	"github.com/sessionlog/sessionlog/loop"
)

// TestMetrics: each of the loop's figures moves when its event happens.
func TestMetrics(t *testing.T) {
	const secret = "SECRET-PROMPT-91c2"
	h := newHarness(t)
	mp := metrictest.New()
	var logBuf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	gate := &compact.Gate{Config: compact.Config{ContextWindow: 300, ThresholdRatio: 0.8, RetainTokens: 30},
		Summarizer: summarizerFunc(func() string { return `[{"type":"text","text":"sum"}]` })}
	l := h.open("s", func(o *loop.Options) {
		o.Metrics, o.Logger, o.Compaction = mp, log, gate
		o.Invariant = loop.InvariantIncremental
	})

	// One completed turn: its appends, one invariant check, a first chunk.
	h.send(l, secret, text("ok"))
	if n := mp.Count(loop.MetricInvariantDuration); n != 1 {
		t.Fatalf("invariant checks recorded: %d, want 1", n)
	}
	if n := mp.Count(loop.MetricFirstChunk); n != 1 {
		t.Fatalf("first chunks recorded: %d, want 1", n)
	}
	if n := mp.Count(loop.MetricAppendDuration); n < 4 {
		t.Fatalf("appends recorded: %d, want one per batch (at least 4)", n)
	}
	if mp.Sum(loop.MetricInvariantDuration) <= 0 || mp.Sum(loop.MetricFirstChunk) <= 0 {
		t.Fatal("durations recorded as zero")
	}

	// Pressure makes the gate compact.
	for i := 0; i < 6; i++ {
		h.send(l, strings.Repeat("talk ", 20), text(strings.Repeat("reply ", 15)))
	}
	if countType(t, h, "s", codec.TypeCompactSummary) == 0 {
		t.Fatal("no compaction happened: the test proves nothing")
	}
	if a, c := mp.Sum(loop.MetricCompactionAttempts), mp.SumWith(loop.MetricCompactionOutcomes, "outcome", "compacted"); a < 1 || c < 1 || c > a {
		t.Fatalf("compaction attempts %v, compacted outcomes %v", a, c)
	}

	// A provider error, by its code.
	l = h.open("s", func(o *loop.Options) {
		o.Metrics, o.Logger = mp, log
		o.Provider = failingProvider{&loop.ProviderError{Code: "RATE_LIMIT", Message: "provider says no"}}
	})
	if out, err := l.Send(context.Background(), loop.Text("x"), loop.User); err != nil || out.Code != "RATE_LIMIT" {
		t.Fatalf("%+v, %v", out, err)
	}
	if n := mp.SumWith(loop.MetricProviderErrors, "code", "RATE_LIMIT"); n != 1 {
		t.Fatalf("provider errors with code RATE_LIMIT: %v, want 1", n)
	}
	if !strings.Contains(logBuf.String(), "RATE_LIMIT") {
		t.Fatalf("the provider error was not logged:\n%s", logBuf.String())
	}
	if strings.Contains(logBuf.String(), secret) {
		t.Fatalf("user content reached the log:\n%s", logBuf.String())
	}
}

type failingSummarizer struct{}

func (failingSummarizer) Summarize(context.Context, [][]byte) (compact.Summary, error) {
	return compact.Summary{}, errors.New("summarizer down")
}

// TestMetricsCompactionGivesUp: a failing summarizer counts as an attempt
// whose outcome is failed, and the gate giving up as gave_up.
func TestMetricsCompactionGivesUp(t *testing.T) {
	h := newHarness(t)
	mp := metrictest.New()
	gaveUp := 0
	gate := &compact.Gate{Config: compact.Config{ContextWindow: 300, ThresholdRatio: 0.8, RetainTokens: 30, NoRetry: true},
		Summarizer: failingSummarizer{}}
	l := h.open("s", func(o *loop.Options) {
		o.Metrics, o.Compaction = mp, gate
		o.OnGaveUp = func(int64, int64, error) { gaveUp++ }
	})
	for i := 0; i < 6; i++ {
		h.send(l, strings.Repeat("talk ", 20), text(strings.Repeat("reply ", 15)))
	}
	if gaveUp == 0 {
		t.Fatal("the gate never gave up: the test proves nothing")
	}
	attempts := mp.Sum(loop.MetricCompactionAttempts)
	failed := mp.SumWith(loop.MetricCompactionOutcomes, "outcome", "failed")
	gave := mp.SumWith(loop.MetricCompactionOutcomes, "outcome", "gave_up")
	if attempts < 1 || failed != attempts || gave != float64(gaveUp) {
		t.Fatalf("attempts %v, failed %v, gave_up %v (the gate gave up %d times)", attempts, failed, gave, gaveUp)
	}
}
