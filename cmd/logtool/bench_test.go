package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// benchTurns is the size of the synthetic session the benchmarks use.
const benchTurns = 500

// writeBenchLog writes a canonical session of turns turns, each a prompt
// and one streamed answer of 20 chunks, and returns its path and its
// number of events.
func writeBenchLog(b *testing.B, turns int) (string, int) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	seq := 0
	// ev writes one event: typ is its JSON-quoted type, data the format
	// of its data and of whatever follows it on the line.
	ev := func(data, typ string, args ...interface{}) {
		fmt.Fprintf(w, `{"type":%s,"seq":%d,"time":%d,"data":`+data+"\n",
			append([]interface{}{typ, seq, 1767225600000 + seq}, args...)...)
		seq++
	}
	fmt.Fprintln(w, `{"type":"session","version":0,"id":"bench-1","createdAt":1767225600000,"cwd":"/home/dev/bench"}`)
	for t := 1; t <= turns; t++ {
		ev(`{"turn":%d}}`, `"turn/start"`, t)
		ev(`{"content":[{"type":"text","text":"Question %d: what does the function on line %d do?"}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
			`"user/message"`, t, t*7)
		ev(`{"turn":%d,"step":1}}`, `"step/start"`, t)
		if t == 1 {
			ev(`{"header":{"config":{"provider":"p","model":"m"},"system":"You are terse.","tools":[{"name":"read","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}]},"reason":"initial"}}`,
				`"request/header"`)
		}
		first := seq
		var text strings.Builder
		for c := 0; c < 20; c++ {
			word := fmt.Sprintf("word%d ", c)
			text.WriteString(word)
			ev(`{"turn":%d,"step":1,"chunk":{"type":"text-delta","index":0,"text":"%s"}}}`, `"assistant/chunk"`, t, word)
		}
		srcs := make([]string, 0, 20)
		for s := first; s < seq; s++ {
			srcs = append(srcs, fmt.Sprint(s))
		}
		ev(`{"turn":%d,"step":1,"content":[{"type":"text","text":"%s"}],"usage":{"inputTokens":%d,"outputTokens":20}},"sourceEventSeqs":[%s],"surfaceOp":"append"}`,
			`"assistant/message"`, t, text.String(), 100+t, strings.Join(srcs, ","))
		ev(`{"turn":%d,"step":1}}`, `"step/end"`, t)
		ev(`{"turn":%d,"reason":{"kind":"completed"}}}`, `"turn/end"`, t)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path, seq
}

func benchEnv() env {
	return env{
		stdin:  strings.NewReader(""),
		getenv: func(string) string { return "" },
		now:    func() time.Time { return testNow },
		random: strings.NewReader(strings.Repeat("r", 1<<10)),
	}
}

// BenchmarkImport imports the synthetic session into a new store.
func BenchmarkImport(b *testing.B) {
	path, events := writeBenchLog(b, benchTurns)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	b.SetBytes(fi.Size())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		db := filepath.Join(dir, fmt.Sprintf("%d.db", i))
		if code := runEnv(context.Background(), benchEnv(), []string{"--db", db, "import", path}, io.Discard, io.Discard); code != exitOK {
			b.Fatalf("import = exit %d", code)
		}
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// benchRead imports the synthetic session once, then runs a read-only
// command line (the store path is appended after --db) b.N times.
func benchRead(b *testing.B, args ...string) {
	path, events := writeBenchLog(b, benchTurns)
	db := filepath.Join(b.TempDir(), "bench.db")
	if code := runEnv(context.Background(), benchEnv(), []string{"--db", db, "import", path}, io.Discard, io.Discard); code != exitOK {
		b.Fatalf("import = exit %d", code)
	}
	args = append([]string{"--db", db}, args...)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if code := runEnv(context.Background(), benchEnv(), args, io.Discard, io.Discard); code != exitOK {
			b.Fatalf("%v = exit %d", args, code)
		}
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkExport exports the synthetic session to a discarding writer.
func BenchmarkExport(b *testing.B) { benchRead(b, "export", "bench-1") }

// BenchmarkShow prints the synthetic session's one-line summaries.
func BenchmarkShow(b *testing.B) { benchRead(b, "show", "bench-1") }

// BenchmarkStat computes the synthetic session's statistics.
func BenchmarkStat(b *testing.B) { benchRead(b, "stat", "bench-1") }
