package wal

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// BenchmarkAppend appends synced 1 KiB records to a WAL with default
// options and reports p50 and p99 latency. Segment cuts are included.
func BenchmarkAppend(b *testing.B) {
	w, _, err := Open(b.TempDir(), 0, Options{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	p := make([]byte, 1024)
	if _, err := w.Append(p); err != nil { // the first segment, outside the timer
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.SetBytes(int64(len(p)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := w.Append(p); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkCut measures starting a default-size segment: header, 64 MiB of
// zeros, fdatasync, directory fsync.
func BenchmarkCut(b *testing.B) {
	dir := b.TempDir()
	for i := 0; i < b.N; i++ {
		w := &WAL{dir: dir, opts: Options{SegmentSize: DefaultSegmentSize}, next: uint64(i + 1)}
		if err := w.cut(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		w.f.Close()
		os.Remove(filepath.Join(dir, segmentName(uint64(i+1))))
		b.StartTimer()
	}
}

// BenchmarkRead reads a WAL of 64 MiB of 1 KiB records (two segments),
// as Open does with a WAL still to apply.
func BenchmarkRead(b *testing.B) {
	dir := b.TempDir()
	w, _, err := Open(dir, 0, Options{NoSync: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	p := make([]byte, 1024)
	for w.Size() < 64<<20 || w.Last() < 64<<10 {
		if _, err := w.Append(p); err != nil {
			b.Fatal(err)
		}
	}
	w.Close()
	b.SetBytes(int64(w.Last()) * int64(len(p)+frameSize))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := Read(dir, 0, func(uint64, []byte) error { return nil })
		if err != nil || rep.Records != int(w.Last()) {
			b.Fatalf("Read: %+v, %v", rep, err)
		}
	}
}
