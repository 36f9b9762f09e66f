package rebuild_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/internal/loggen"
	"github.com/sessionlog/sessionlog/rebuild"
)

func benchSession(b *testing.B, events int) (codec.SessionHeader, []codec.Event) {
	b.Helper()
	h, evs, err := loggen.Session(1, loggen.Options{Events: events, CompactEvery: 3000, Realistic: true})
	if err != nil {
		b.Fatal(err)
	}
	return h, evs
}

// BenchmarkBuilder folds a session through the incremental Builder
// (digests only, what verify does), reporting time per event.
func BenchmarkBuilder(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			h, evs := benchSession(b, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				fold(b, h, evs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(evs)), "ns/event")
		})
	}
}

func fold(b *testing.B, h codec.SessionHeader, evs []codec.Event) int {
	steps := 0
	bl := rebuild.NewBuilder(h, rebuild.BuilderOptions{}, func(rebuild.Step) error { steps++; return nil })
	for j := range evs {
		if err := bl.Add(&evs[j]); err != nil {
			b.Fatal(err)
		}
	}
	if err := bl.End(); err != nil {
		b.Fatal(err)
	}
	return steps
}

// BenchmarkBuilderVsNaive measures, in one run on the same 10k-event
// session, the incremental Builder against the naive rebuild that folds
// from scratch for every step, and reports the ratio.
func BenchmarkBuilderVsNaive(b *testing.B) {
	h, evs := benchSession(b, 10000)
	b.ResetTimer()
	var inc, naive time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		fold(b, h, evs)
		inc += time.Since(t0)
		t0 = time.Now()
		if _, err := rebuild.Steps(h, evs); err != nil {
			b.Fatal(err)
		}
		naive += time.Since(t0)
	}
	b.ReportMetric(float64(inc.Nanoseconds())/float64(b.N)/1e6, "builder-ms")
	b.ReportMetric(float64(naive.Nanoseconds())/float64(b.N)/1e6, "naive-ms")
	b.ReportMetric(float64(naive)/float64(inc), "x-faster")
}
