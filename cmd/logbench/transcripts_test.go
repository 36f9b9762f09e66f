package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/sessionlog/sessionlog/transcript"
)

// BenchmarkTranscript runs the two sides of logbench's transcript import
// section on the same generated files, for profiling (go test -bench
// Transcript -cpuprofile): "import" is transcript.Open and every event it
// yields, "json" is bufio.Scanner and json.Unmarshal of every line. Their
// ns/op ratio is the section's speed ratio; logbench interleaves them.
func BenchmarkTranscript(b *testing.B) {
	size := 10 << 20
	if testing.Short() {
		size = 1 << 20
	}
	for _, f := range []transcript.Format{transcript.Codex, transcript.ClaudeCode} {
		data := genTranscript(f, size)
		b.Run(string(f)+"/import", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				s, err := transcript.Open(bytes.NewReader(data), int64(len(data)), f, transcript.Options{Name: "bench.jsonl"})
				if err != nil {
					b.Fatal(err)
				}
				for {
					ev, err := s.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					codecSink += len(ev.Raw)
				}
			}
		})
		b.Run(string(f)+"/json", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				sc := bufio.NewScanner(bytes.NewReader(data))
				sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
				for sc.Scan() {
					var v any
					if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
						b.Fatal(err)
					}
					codecSink++
				}
				if err := sc.Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
