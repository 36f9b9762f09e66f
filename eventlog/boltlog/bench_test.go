package boltlog_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/rebuild"
)

// Durable append benchmarks (the performance issue's evidence). One op is
// one event. Each benchmark measures, in the same run and interleaved
// round by round with the store (the disk is noisy, so only ratios within
// a round are trustworthy), the baseline: one goroutine appending the same
// ~1 KB JSON lines to one JSONL file with f.Sync() after each line. It
// reports:
//
//	ev/s        durable events per second stored
//	base-ev/s   JSONL+fsync lines per second
//	x-baseline  median over the rounds of (store ev/s ÷ baseline ev/s)
//	ev/tx       events per bbolt transaction (group commit at work)
//	line-B/ev   JSONL bytes per event (line and newline)
//	rec-B/ev    stored record bytes per event (payload + 5)
//	hwm-B/ev    bbolt high-water mark per event (pages in use or free)
//	file-B/ev   file size per event (includes bbolt's preallocation)
//
// Run: go test -run '^$' -bench Durable -benchtime 2s ./eventlog

// benchText is the prose of the benchmark's assistant message.
var benchText = strings.Repeat("The function reads the session log and rebuilds the request; "+
	"it never needs the whole log in memory. ", 8)

// benchLine is the JSON line (no newline) of a realistic assistant/message
// of about 1 KB: text, a tool call, provenance and usage.
func benchLine(seq int64) []byte {
	return []byte(fmt.Sprintf(`{"type":"assistant/message","seq":%d,"time":%d,"data":{"turn":1,"step":%d,`+
		`"content":[{"type":"text","text":%q},{"type":"tool-call","id":"call_%08d","name":"read_file",`+
		`"arguments":"{\"path\":\"internal/store/log.go\",\"offset\":120,\"limit\":80}"}],`+
		`"provenance":{"provider":"deepseek","model":"deepseek-chat"},`+
		`"usage":{"inputTokens":18342,"outputTokens":412,"cacheReadTokens":17920}},`+
		`"sourceEventSeqs":[],"surfaceOp":"append"}`,
		seq, 1767225600000+seq*731, seq+1, benchText, seq))
}

func benchEvent(b *testing.B, seq int64) codec.Event {
	ev, err := codec.ParseEvent(benchLine(seq), codec.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	return ev
}

// jsonlBaseline is the JSONL+fsync writer.
type jsonlBaseline struct {
	f     *os.File
	lines int
	bytes int64
	took  time.Duration
}

func newBaseline(b *testing.B) *jsonlBaseline {
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "session.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return &jsonlBaseline{f: f}
}

// write appends lines, each followed by an fsync, and returns the time it
// took.
func (j *jsonlBaseline) write(b *testing.B, lines [][]byte) time.Duration {
	start := time.Now()
	for _, l := range lines {
		if _, err := j.f.Write(l); err != nil {
			b.Fatal(err)
		}
		if err := j.f.Sync(); err != nil {
			b.Fatal(err)
		}
		j.bytes += int64(len(l))
	}
	took := time.Since(start)
	j.took += took
	j.lines += len(lines)
	return took
}

// Rounds: the store appends about roundEvents events, then the baseline
// writes baselineLines lines; a run has at least minRounds rounds. The
// ratio is taken per round (both sides a second apart on the same disk)
// and the median is reported.
const (
	roundEvents   = 2048
	baselineLines = 64
	minRounds     = 6
)

// benchDurable appends b.N events (at least minRounds rounds) to sessions
// sessions, perCommit events per Append, one goroutine per session, fsync
// on.
func benchDurable(b *testing.B, sessions, perCommit int) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "sessions.db")
	l, err := boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = fmt.Sprintf("session-%03d", i)
		if err := l.Create(ctx, codec.NewSessionHeader(ids[i], 1767225600000, "/home/dev/project", "", 0)); err != nil {
			b.Fatal(err)
		}
	}
	base := newBaseline(b)
	roundPerSession := perCommit * max(1, roundEvents/(sessions*perCommit))
	next := make([]int64, sessions)
	var stored time.Duration
	var ratios []float64
	total := 0
	tx0, writes0 := l.CommitStats()
	b.ResetTimer()
	b.StopTimer()
	for total < b.N || len(ratios) < minRounds {
		// Prepare the round's batches (not timed).
		batches := make([][][]codec.Event, sessions)
		var lines [][]byte
		for s := range sessions {
			for k := 0; k < roundPerSession; k += perCommit {
				batch := make([]codec.Event, perCommit)
				for i := range batch {
					batch[i] = benchEvent(b, next[s])
					if len(lines) < baselineLines {
						lines = append(lines, append(benchLine(next[s]), '\n'))
					}
					next[s]++
				}
				batches[s] = append(batches[s], batch)
			}
		}
		// The store.
		b.StartTimer()
		start := time.Now()
		var wg sync.WaitGroup
		for s := range sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, batch := range batches[s] {
					if err := l.Append(ctx, ids[s], batch); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		took := time.Since(start)
		b.StopTimer()
		stored += took
		events := sessions * roundPerSession
		total += events
		// The baseline.
		baseTook := base.write(b, lines)
		ratios = append(ratios, (float64(events)/took.Seconds())/(float64(len(lines))/baseTook.Seconds()))
	}
	tx1, writes1 := l.CommitStats()
	storedRecs := int64(0)
	heads, err := l.Sessions(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, h := range heads {
		storedRecs += h.StoredBytes
	}
	hwm := boltlog.HighWater(l)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	evs := float64(total)
	slices.Sort(ratios)
	b.ReportMetric(evs/stored.Seconds(), "ev/s")
	b.ReportMetric(float64(base.lines)/base.took.Seconds(), "base-ev/s")
	b.ReportMetric(ratios[len(ratios)/2], "x-baseline")
	b.ReportMetric(float64(writes1-writes0)*float64(perCommit)/float64(tx1-tx0), "ev/tx")
	b.ReportMetric(float64(base.bytes)/float64(base.lines), "line-B/ev")
	b.ReportMetric(float64(storedRecs)/evs, "rec-B/ev")
	b.ReportMetric(float64(hwm)/evs, "hwm-B/ev")
	b.ReportMetric(float64(fi.Size())/evs, "file-B/ev")
	// ns/op is the store's time per event.
	b.ReportMetric(float64(stored.Nanoseconds())/evs, "ns/op")
}

func BenchmarkDurable(b *testing.B) {
	b.Run("sessions=1/per-commit=1", func(b *testing.B) { benchDurable(b, 1, 1) })
	b.Run("sessions=1/per-commit=100", func(b *testing.B) { benchDurable(b, 1, 100) })
	b.Run("sessions=64/per-commit=1", func(b *testing.B) { benchDurable(b, 64, 1) })
}

// BenchmarkFreelistSync compares bbolt's NoFreelistSync off (the
// default here) and on: 64 sessions appending one event per commit, and a
// read-write Open of a store of 100k events (the cost of rebuilding the
// freelist on Open).
func BenchmarkFreelistSync(b *testing.B) {
	for _, noSync := range []bool{false, true} {
		b.Run(fmt.Sprintf("NoFreelistSync=%v/append", noSync), func(b *testing.B) {
			old := boltlog.SetNoFreelistSync(noSync)
			defer boltlog.SetNoFreelistSync(old)
			benchDurable(b, 64, 1)
		})
		b.Run(fmt.Sprintf("NoFreelistSync=%v/open-100k", noSync), func(b *testing.B) {
			old := boltlog.SetNoFreelistSync(noSync)
			defer boltlog.SetNoFreelistSync(old)
			path := bigStore(b, 100000)
			b.ResetTimer()
			for range b.N {
				l, err := boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// bigStore writes n benchmark events (100 sessions, batches of 100,
// without fsync) and closes the store.
func bigStore(b *testing.B, n int) string {
	b.Helper()
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "big.db")
	l, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		b.Fatal(err)
	}
	const sessions = 100
	for s := range sessions {
		id := fmt.Sprintf("big-%03d", s)
		if err := l.Create(ctx, codec.NewSessionHeader(id, 1767225600000, "", "", 0)); err != nil {
			b.Fatal(err)
		}
		for seq := int64(0); seq < int64(n/sessions); seq += 100 {
			batch := make([]codec.Event, 100)
			for i := range batch {
				batch[i] = benchEvent(b, seq+int64(i))
			}
			if err := l.Append(ctx, id, batch); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkScan reads a session of 10k benchmark events: one op is one
// event read, decoded and checked (CRC, seq = key).
func BenchmarkScan(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "scan.db")
	l, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	const n = 10000
	if err := l.Create(ctx, codec.NewSessionHeader("s", 1767225600000, "", "", 0)); err != nil {
		b.Fatal(err)
	}
	for seq := int64(0); seq < n; seq += 100 {
		batch := make([]codec.Event, 100)
		for i := range batch {
			batch[i] = benchEvent(b, seq+int64(i))
		}
		if err := l.Append(ctx, "s", batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	read := 0
	for read < b.N {
		it, err := l.Scan(ctx, "s", 0)
		if err != nil {
			b.Fatal(err)
		}
		for ; read < b.N; read++ {
			if _, err := it.Next(); err != nil {
				break
			}
		}
		it.Close()
	}
}

// BenchmarkSpace reports bytes on disk per event for a store of 20k
// benchmark events written in each commit pattern (without fsync, which
// does not change the layout), against the JSONL line size. One op is one
// whole store.
func BenchmarkSpace(b *testing.B) {
	const n = 20000
	patterns := []struct {
		name                string
		sessions, perCommit int
	}{
		{"sessions=1/per-commit=1", 1, 1},
		{"sessions=1/per-commit=100", 1, 100},
		{"sessions=64/per-commit=1", 64, 1},
	}
	for _, p := range patterns {
		b.Run(p.name, func(b *testing.B) {
			ctx := context.Background()
			var file, hwm, recs, lines int64
			for range b.N {
				path := filepath.Join(b.TempDir(), "space.db")
				l, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
				if err != nil {
					b.Fatal(err)
				}
				recs, lines = 0, 0
				for s := range p.sessions {
					id := fmt.Sprintf("session-%03d", s)
					if err := l.Create(ctx, codec.NewSessionHeader(id, 1767225600000, "", "", 0)); err != nil {
						b.Fatal(err)
					}
				}
				// Round robin over the sessions, as concurrent writers would
				// interleave.
				per := int64(n / p.sessions)
				for seq := int64(0); seq < per; seq += int64(p.perCommit) {
					for s := range p.sessions {
						batch := make([]codec.Event, p.perCommit)
						for i := range batch {
							batch[i] = benchEvent(b, seq+int64(i))
							lines += int64(len(benchLine(seq+int64(i))) + 1)
						}
						if err := l.Append(ctx, fmt.Sprintf("session-%03d", s), batch); err != nil {
							b.Fatal(err)
						}
					}
				}
				heads, err := l.Sessions(ctx)
				if err != nil {
					b.Fatal(err)
				}
				for _, h := range heads {
					recs += h.StoredBytes
				}
				hwm = boltlog.HighWater(l)
				if err := l.Close(); err != nil {
					b.Fatal(err)
				}
				fi, err := os.Stat(path)
				if err != nil {
					b.Fatal(err)
				}
				file = fi.Size()
			}
			evs := float64(n / p.sessions * p.sessions)
			b.ReportMetric(float64(lines)/evs, "line-B/ev")
			b.ReportMetric(float64(recs)/evs, "rec-B/ev")
			b.ReportMetric(float64(hwm)/evs, "hwm-B/ev")
			b.ReportMetric(float64(file)/evs, "file-B/ev")
			b.ReportMetric(float64(hwm)/float64(lines), "hwm/jsonl")
		})
	}
}

// BenchmarkLinger compares, round by round on the same disk, 64 sessions
// appending one event per commit with the committer's linger off and on.
func BenchmarkLinger(b *testing.B) {
	for _, d := range []time.Duration{0, 500 * time.Microsecond} {
		b.Run(fmt.Sprintf("linger=%s", d), func(b *testing.B) {
			old := boltlog.SetLinger(d)
			defer boltlog.SetLinger(old)
			benchDurable(b, 64, 1)
		})
	}
}
