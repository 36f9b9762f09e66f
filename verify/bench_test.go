package verify_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/loggen"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/verify"
)

// lines is an eventlog.Source over generated lines.
type lines struct {
	evs []codec.Event
}

func (l *lines) Next() (codec.Event, error) {
	if len(l.evs) == 0 {
		return codec.Event{}, io.EOF
	}
	ev := l.evs[0]
	l.evs = l.evs[1:]
	return ev, nil
}

// benchStore imports a generated realistic session of n events.
func benchStore(b *testing.B, n int) (*boltlog.Log, string) {
	b.Helper()
	h, evs, err := loggen.Session(7, loggen.Options{Events: n, CompactEvery: 3000, Realistic: true})
	if err != nil {
		b.Fatal(err)
	}
	s, err := boltlog.Open(filepath.Join(b.TempDir(), "bench.db"), &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if _, err := s.Import(context.Background(), h, &lines{evs: evs}); err != nil {
		b.Fatal(err)
	}
	return s, h.ID
}

// BenchmarkVerify verifies one stored session of 1k, 10k and 100k events
// (records, chain, fold, every step's digest) and reports time per event;
// the target is ns/event at 100k within 1.5× of that at 1k.
func BenchmarkVerify(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			s, id := benchStore(b, n)
			b.ResetTimer()
			var events int64
			for i := 0; i < b.N; i++ {
				res, err := verify.Session(context.Background(), s, id, verify.Options{})
				if err != nil || res.Failed() {
					b.Fatalf("verify: %v %v", err, res.Findings)
				}
				events = res.Events
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(events), "ns/event")
		})
	}
}

// BenchmarkReplayMemory replays the 100k-event session from the store,
// building every step's full request, and reports the peak heap in use:
// bounded by the current surface, not by the log.
func BenchmarkReplayMemory(b *testing.B) {
	s, id := benchStore(b, 100000)
	ctx := context.Background()
	head, err := s.Head(ctx, id)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	b.ResetTimer()
	var peak uint64
	for i := 0; i < b.N; i++ {
		steps := 0
		bl := rebuild.NewBuilder(head.Header, rebuild.BuilderOptions{Requests: true}, func(st rebuild.Step) error {
			steps++
			if steps%200 == 0 {
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				peak = max(peak, m.HeapInuse)
			}
			return nil
		})
		it, err := s.Scan(ctx, id, 0)
		if err != nil {
			b.Fatal(err)
		}
		for {
			ev, err := it.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if err := bl.Add(&ev); err != nil {
				b.Fatal(err)
			}
		}
		it.Close()
		if err := bl.End(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(base.HeapInuse)/(1<<20), "base-heap-MiB")
}
