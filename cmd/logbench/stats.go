package main

import (
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// stat summarises the samples of one figure, one per round.
type stat struct {
	Median, Min, Max float64
	N                int
}

// summarize returns the median, minimum and maximum of samples.
func summarize(samples []float64) stat {
	if len(samples) == 0 {
		return stat{Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return stat{Median: m, Min: s[0], Max: s[len(s)-1], N: len(s)}
}

// percentile returns the p-th percentile (0–100) of durations, nearest
// rank.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// opTiming is the measured cost of one call of an operation.
type opTiming struct {
	NsPerOp     float64
	AllocsPerOp float64
}

// batch is an operation run n times in a row, with its running totals.
type batch struct {
	op      func() error
	n       int
	calls   int
	took    time.Duration
	mallocs uint64
}

// run runs the batch once and adds it to the totals.
func (b *batch) run() error {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for range b.n {
		if err := b.op(); err != nil {
			return err
		}
	}
	b.took += time.Since(start)
	runtime.ReadMemStats(&after)
	b.calls += b.n
	b.mallocs += after.Mallocs - before.Mallocs
	return nil
}

func (b *batch) timing() opTiming {
	return opTiming{
		NsPerOp:     float64(b.took.Nanoseconds()) / float64(b.calls),
		AllocsPerOp: float64(b.mallocs) / float64(b.calls),
	}
}

// callTime runs op once (a warm-up) and returns how long it took.
func callTime(op func() error) (time.Duration, error) {
	start := time.Now()
	err := op()
	return time.Since(start), err
}

// timePair measures two operations interleaved, so that load from other
// processes weighs on both alike: each runs in batches of about the same
// length (at least slice, and at least one call of the slower of the
// two), a batch of a then a batch of b, until both have run for minTime.
// A ratio of the two timings is therefore taken pair by pair at a fine
// grain.
func timePair(minTime, slice time.Duration, a, b func() error) (opTiming, opTiming, error) {
	da, err := callTime(a)
	if err != nil {
		return opTiming{}, opTiming{}, err
	}
	db, err := callTime(b)
	if err != nil {
		return opTiming{}, opTiming{}, err
	}
	length := max(slice, da, db)
	ba := &batch{op: a, n: callsIn(length, da)}
	bb := &batch{op: b, n: callsIn(length, db)}
	for ba.took < minTime || bb.took < minTime {
		if err := ba.run(); err != nil {
			return opTiming{}, opTiming{}, err
		}
		if err := bb.run(); err != nil {
			return opTiming{}, opTiming{}, err
		}
	}
	return ba.timing(), bb.timing(), nil
}

// callsIn is how many calls of duration d fill length (at least 1).
func callsIn(length, d time.Duration) int {
	if d <= 0 {
		return 1 << 20
	}
	return int(max(1, min(1<<30, int64(length/d))))
}

// group writes an integer with thousands separators: 12,345.
func group(v int64) string {
	s := strconv.FormatInt(v, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// num writes v with about three significant digits, grouped when large:
// 12,345 / 123 / 12.3 / 1.23 / 0.123.
func num(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case math.Abs(v) >= 100:
		return group(int64(math.Round(v)))
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case math.Abs(v) >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

// ratio writes a ratio as 1.23×.
func ratio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return num(v) + "×"
}

// ratioRange writes a ratio stat as 1.23× (1.10–1.40), or just 1.23× when
// there was one round.
func ratioRange(s stat) string {
	if s.N <= 1 || math.IsNaN(s.Median) {
		return ratio(s.Median)
	}
	return ratio(s.Median) + " (" + num(s.Min) + "–" + num(s.Max) + ")"
}

// mib writes a byte count in MiB.
func mib(b float64) string { return num(b / (1 << 20)) }
