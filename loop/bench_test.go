package loop_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/compact"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/metrictest"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/rebuild"
)

// instant answers every request at once with a short text: the loop's
// cost without a model.
type instant struct{}

func (instant) Stream(ctx context.Context, req *loop.Request) (loop.Stream, error) {
	return &instantStream{chunks: []loop.Chunk{
		{Type: loop.ChunkBlockStart, BlockType: "text"},
		{Type: loop.ChunkTextDelta, Text: "Done: "},
		{Type: loop.ChunkTextDelta, Text: "the change is in."},
		{Type: loop.ChunkBlockEnd, Block: []byte(`{"type":"text","text":"Done: the change is in."}`)},
		{Type: loop.ChunkUsage, Usage: loop.Usage{InputTokens: 100, OutputTokens: 8}},
		{Type: loop.ChunkFinish, Reason: []byte(`{"kind":"stop"}`)},
	}}, nil
}

type instantStream struct{ chunks []loop.Chunk }

func (s *instantStream) Next() (loop.Chunk, error) {
	if len(s.chunks) == 0 {
		return loop.Chunk{}, io.EOF
	}
	c := s.chunks[0]
	s.chunks = s.chunks[1:]
	return c, nil
}

func (s *instantStream) Close() error { return nil }

// historyLog is a closed session with msgs history messages of ~200 bytes.
type historyLog struct {
	msgs, next int
	turn       int
	pending    []string
}

func (h *historyLog) Next() (codec.Event, error) {
	for len(h.pending) == 0 {
		if h.turn*2 >= h.msgs {
			return codec.Event{}, io.EOF
		}
		h.turn++
		t := h.turn
		text := strings.Repeat(fmt.Sprintf("turn %d says something useful. ", t), 6)
		h.pending = append(h.pending,
			fmt.Sprintf(`{"type":"turn/start","seq":%%d,"time":1,"data":{"turn":%d}}`, t),
			fmt.Sprintf(`{"type":"user/message","seq":%%d,"time":1,"data":{"content":[{"type":"text","text":%q}],"source":{"kind":"user"}},"surfaceOp":"append"}`, text),
			fmt.Sprintf(`{"type":"step/start","seq":%%d,"time":1,"data":{"turn":%d,"step":1}}`, t))
		if t == 1 {
			h.pending = append(h.pending, `{"type":"request/header","seq":%d,"time":1,"data":{"header":{"config":{"provider":"p","model":"m"},"system":"You are a coding agent."},"reason":"initial"}}`)
		}
		h.pending = append(h.pending,
			fmt.Sprintf(`{"type":"assistant/message","seq":%%d,"time":1,"data":{"turn":%d,"step":1,"content":[{"type":"text","text":%q}],"provenance":{"provider":"p","model":"m"}},"sourceEventSeqs":[],"surfaceOp":"append"}`, t, text),
			fmt.Sprintf(`{"type":"step/end","seq":%%d,"time":1,"data":{"turn":%d,"step":1}}`, t),
			fmt.Sprintf(`{"type":"turn/end","seq":%%d,"time":1,"data":{"turn":%d,"reason":{"kind":"completed"}}}`, t))
	}
	line := fmt.Sprintf(h.pending[0], h.next)
	h.pending = h.pending[1:]
	h.next++
	return codec.ParseEvent([]byte(line), codec.Limits{})
}

// BenchmarkStepOverhead measures the loop's cost per step without a model
// — appends with the store's default durability (fsync), the default
// invariant check, the digest — on a session with 10 and one with 10,000
// history messages, interleaved step by step so both see the same disk,
// and reports the ratio. The target: the ratio stays under 2.
// BENCH_NOSYNC=1 leaves fsync out, to see the CPU part alone.
func BenchmarkStepOverhead(b *testing.B) {
	ctx := context.Background()
	small, large := overheadLoop(b, 10), overheadLoop(b, 10000)
	prompt := loop.Text("Make the change and tell me when it is in.")
	send := func(l *loop.Loop) time.Duration {
		t0 := time.Now()
		out, err := l.Send(ctx, prompt, loop.User)
		if err != nil || out.Reason != "completed" {
			b.Fatalf("send: %v %+v", err, out)
		}
		return time.Since(t0)
	}
	send(small) // each instance's first request writes its resume header
	send(large)
	b.ResetTimer()
	var ts, tl time.Duration
	for i := 0; i < b.N; i++ {
		ts += send(small)
		tl += send(large)
	}
	b.ReportMetric(float64(ts.Microseconds())/float64(b.N), "µs/step-10")
	b.ReportMetric(float64(tl.Microseconds())/float64(b.N), "µs/step-10k")
	b.ReportMetric(float64(tl)/float64(ts), "ratio")
}

// overheadLoop opens a loop over a session with n history messages.
func overheadLoop(b *testing.B, n int) *loop.Loop { return overheadLoopWith(b, n, nil) }

// overheadLoopWith is overheadLoop with the loop's and the store's
// metrics going to mp (nil: off).
func overheadLoopWith(b *testing.B, n int, mp metric.MeterProvider) *loop.Loop {
	path := filepath.Join(b.TempDir(), "s.db")
	setup, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := setup.Import(ctx, codec.NewSessionHeader("s", 1, "", "", 0), &historyLog{msgs: n}); err != nil {
		b.Fatal(err)
	}
	setup.Close()
	store, err := boltlog.Open(path, &eventlog.Options{NoSync: os.Getenv("BENCH_NOSYNC") != "", NewValidator: rebuild.NewValidator,
		Metrics: mp}, nil)

	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	host := &fixedHost{spec: loop.StepSpec{System: "You are a coding agent.", Config: config(b, `{"provider":"p","model":"m"}`)}}
	l, err := openOrCreate(ctx, store, "s", loop.Options{Provider: instant{}, Host: host,
		Compaction: &compact.Gate{Config: compact.Config{ContextWindow: 1 << 30}}, Metrics: mp})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// BenchmarkMetricsOverhead measures a turn with the loop's and the store's
// metrics off (nil) and on (a recording provider, internal/metrictest),
// interleaved turn by turn (alternating which goes first) on two stores
// with sessions of 10 history messages, and
// reports the ratio on/off. BENCH_NOSYNC=1 leaves fsync out.
func BenchmarkMetricsOverhead(b *testing.B) {
	ctx := context.Background()
	off, on := overheadLoopWith(b, 10, nil), overheadLoopWith(b, 10, metrictest.New())
	prompt := loop.Text("Make the change and tell me when it is in.")
	send := func(l *loop.Loop) time.Duration {
		t0 := time.Now()
		out, err := l.Send(ctx, prompt, loop.User)
		if err != nil || out.Reason != "completed" {
			b.Fatalf("send: %v %+v", err, out)
		}
		return time.Since(t0)
	}
	send(off)
	send(on)
	b.ResetTimer()
	var toff, ton time.Duration
	for i := 0; i < b.N; i++ {
		if i%2 == 0 { // alternate who goes first: the second turn runs on a warmer cache
			toff += send(off)
			ton += send(on)
		} else {
			ton += send(on)
			toff += send(off)
		}
	}
	b.ReportMetric(float64(toff.Microseconds())/float64(b.N), "µs/turn-off")
	b.ReportMetric(float64(ton.Microseconds())/float64(b.N), "µs/turn-on")
	b.ReportMetric(float64(ton)/float64(toff), "ratio")
}
