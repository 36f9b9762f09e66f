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

// opTiming is one timed sample of a short operation.
type opTiming struct {
	NsPerOp     float64
	AllocsPerOp float64
	BytesPerOp  float64
}

// timeOp runs op repeatedly until one run of n calls takes at least
// minTime (n doubling from 1), and returns that run's time and
// allocations per call. It stops at op's first error.
func timeOp(minTime time.Duration, op func() error) (opTiming, error) {
	for n := 1; ; n *= 2 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		for range n {
			if err := op(); err != nil {
				return opTiming{}, err
			}
		}
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		if took >= minTime || n >= 1<<30 {
			return opTiming{
				NsPerOp:     float64(took.Nanoseconds()) / float64(n),
				AllocsPerOp: float64(after.Mallocs-before.Mallocs) / float64(n),
				BytesPerOp:  float64(after.TotalAlloc-before.TotalAlloc) / float64(n),
			}, nil
		}
	}
}

// timeRepeat runs op until minTime has passed (at least once) and returns
// the mean time of one call.
func timeRepeat(minTime time.Duration, op func() error) (time.Duration, error) {
	start := time.Now()
	n := 0
	for {
		if err := op(); err != nil {
			return 0, err
		}
		n++
		if took := time.Since(start); took >= minTime {
			return took / time.Duration(n), nil
		}
	}
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
