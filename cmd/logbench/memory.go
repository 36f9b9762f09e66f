package main

import (
	"context"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/sessionlog/sessionlog/rebuild"
)

// memoryRuns is the most replays the memory figure is the median of: a
// replay of the largest session takes seconds, and its peak varies little.
const memoryRuns = 3

// memorySampleEvery is the period of the heap sampler that runs beside
// the replay.
const memorySampleEvery = 2 * time.Millisecond

// memoryResult is what replaying one session took.
type memoryResult struct {
	events int64
	steps  int
	jsonl  int64
	// base is the heap in use before the replay (after a GC); peak the
	// most heap in use sampled during it; both per run, in bytes.
	base, peak stat
	// largest is the size of the largest request built.
	largest int
	// perEvent is the replay's µs per event, per run (sampling included).
	perEvent stat
}

// measureMemory replays every session, smallest first, so that the
// table shows how the peak grows (or does not) with the log.
func measureMemory(ctx context.Context, c config, sessions []*benchSession, p progress) ([]memoryResult, error) {
	var out []memoryResult
	for _, s := range sessions {
		m, err := measureReplay(ctx, c, s, p)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// measureReplay replays the session from its store through a Builder
// that builds every step's full request, as replay does, and samples the
// heap in use while it runs.
func measureReplay(ctx context.Context, c config, s *benchSession, p progress) (memoryResult, error) {
	res := memoryResult{events: s.events, jsonl: s.jsonl}
	var bases, peaks, perEvent []float64
	for r := range min(c.rounds, memoryRuns) {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		base := m.HeapInuse
		smp := newHeapSampler()
		start := time.Now()
		steps, largest, err := replay(ctx, s, smp)
		took := time.Since(start)
		peak := smp.stop()
		if err != nil {
			return res, err
		}
		res.steps, res.largest = steps, max(res.largest, largest)
		bases, peaks = append(bases, float64(base)), append(peaks, float64(peak))
		perEvent = append(perEvent, float64(took.Nanoseconds())/1e3/float64(s.events))
		p.printf("  replay of %s events with full requests, run %d: peak heap in use %s MiB (%s MiB before)",
			group(s.events), r+1, mib(float64(peak)), mib(float64(base)))
	}
	res.base, res.peak, res.perEvent = summarize(bases), summarize(peaks), summarize(perEvent)
	return res, nil
}

// replay folds the session's events from a Scan through a Builder with
// full requests, sampling the heap every few steps.
func replay(ctx context.Context, s *benchSession, smp *heapSampler) (steps, largest int, err error) {
	b := rebuild.NewBuilder(s.header, rebuild.BuilderOptions{Requests: true}, func(st rebuild.Step) error {
		steps++
		largest = max(largest, len(st.Request))
		if steps%32 == 0 {
			smp.sample()
		}
		return nil
	})
	it, err := s.st.Scan(ctx, s.header.ID, 0)
	if err != nil {
		return 0, 0, err
	}
	defer it.Close()
	for {
		ev, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, 0, err
		}
		if err := b.Add(&ev); err != nil {
			return 0, 0, err
		}
	}
	if err := b.End(); err != nil {
		return 0, 0, err
	}
	smp.sample()
	return steps, largest, nil
}

// heapSampler keeps the most heap in use seen by sample calls and by its
// own goroutine, which samples every memorySampleEvery until stop.
type heapSampler struct {
	mu   sync.Mutex
	peak uint64
	done chan struct{}
	wg   sync.WaitGroup
}

func newHeapSampler() *heapSampler {
	h := &heapSampler{done: make(chan struct{})}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		t := time.NewTicker(memorySampleEvery)
		defer t.Stop()
		for {
			select {
			case <-h.done:
				return
			case <-t.C:
				h.sample()
			}
		}
	}()
	return h
}

// sample reads the heap in use now.
func (h *heapSampler) sample() {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	h.mu.Lock()
	h.peak = max(h.peak, m.HeapInuse)
	h.mu.Unlock()
}

// stop ends the sampler's goroutine and returns the peak.
func (h *heapSampler) stop() uint64 {
	close(h.done)
	h.wg.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.peak
}
