package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/provider"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/wire"
)

// streamMemResult is one long answer streamed through a provider and the
// loop into a bbolt store (issue 19: memory while streaming).
type streamMemResult struct {
	wire  string
	bytes int64 // SSE bytes the server sent
	// base is the resident memory before the answer, peak the most during
	// it (VmHWM after resetting it), in bytes.
	base, peak int64
	took       time.Duration
}

// growth is the resident memory the answer added, per byte streamed.
func (s streamMemResult) growth() float64 { return float64(s.peak-s.base) / float64(s.bytes) }

// streamMemSize is the answer's size (the 200 MB).
func (c config) streamMemSize() int64 {
	if c.quick {
		return 2 << 20 // the shape of the measure, not its figure: the test command runs it
	}
	return 200 << 20
}

// measureStreamMemory streams, for each renderer, one answer of the
// configured size from a local server through provider.Provider and the
// loop into a bbolt store, and reads the process's peak resident memory.
func measureStreamMemory(ctx context.Context, c config, work string, p progress) ([]streamMemResult, error) {
	var out []streamMemResult
	for _, name := range wire.Names() {
		r, err := streamOnce(ctx, name, c.streamMemSize(), work)
		if err != nil {
			return nil, errors.Wrapf(err, "%s", errors.Safe(name))
		}
		p.printf("  %s: %s MiB streamed in %s, resident memory %s → %s MiB: %s × the bytes", name, mib(float64(r.bytes)),
			dur(r.took), mib(float64(r.base)), mib(float64(r.peak)), num(r.growth()))
		out = append(out, r)
	}
	return out, nil
}

// streamWords are the answer's fragments, as internal/ssegen's.
var streamWords = []string{"The ", "function ", "returns ", "an ", "error ", "when ", `\"path\" `, "is ",
	`empty.\n`, "<b>", "a&b ", "日本語 ", "δ ", "ok, ", "then ", "we ", "fix ", `it.\n\n`}

// serveLongAnswer writes an answer of about size bytes, generated as it
// goes (the server holds none of it): reasoning, then text, a few words
// per event, then the end.
func serveLongAnswer(name string, size int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(200)
		var buf []byte
		var n int64
		anthropic := name == wire.AnthropicMessages
		if anthropic {
			buf = append(buf, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n"...)
		}
		second := false
		for i := 0; n < size && r.Context().Err() == nil; i++ {
			text := streamWords[i%len(streamWords)] + streamWords[(i+3)%len(streamWords)]
			if !second && n > size/2 {
				second = true
				if anthropic {
					buf = append(buf, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"+
						"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"...)
				}
			}
			switch {
			case !anthropic && !second:
				buf = append(buf, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"reasoning_content":"`+text+`"},"finish_reason":null}]}`+"\n\n"...)
			case !anthropic:
				buf = append(buf, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"`+text+`"},"finish_reason":null}]}`+"\n\n"...)
			case !second:
				buf = append(buf, "event: content_block_delta\n"+`data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"`+text+`"}}`+"\n\n"...)
			default:
				buf = append(buf, "event: content_block_delta\n"+`data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"`+text+`"}}`+"\n\n"...)
			}
			if len(buf) >= 32<<10 {
				if _, err := w.Write(buf); err != nil {
					return
				}
				n += int64(len(buf))
				buf = buf[:0]
			}
		}
		if anthropic {
			buf = append(buf, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n"+
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":9}}\n\n"+
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"...)
		} else {
			buf = append(buf, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"...)
		}
		w.Write(buf)
	}
}

// streamHost asks for the same step every time.
type streamHost struct{ spec loop.StepSpec }

func (h streamHost) Step(context.Context, int64, int64) (loop.StepSpec, error) { return h.spec, nil }

// streamOnce streams one answer of about size bytes through a provider
// and the loop into a new store under work.
func streamOnce(ctx context.Context, name string, size int64, work string) (streamMemResult, error) {
	res := streamMemResult{wire: name}
	var sent int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveLongAnswer(name, size)(countingWriter{w, &sent}, r)
	}))
	defer srv.Close()
	prov, err := provider.New(provider.Options{Wire: name, BaseURL: srv.URL, MaxResponseBytes: -1})
	if err != nil {
		return res, err
	}
	path := filepath.Join(work, "stream-"+name+".db")
	defer os.Remove(path)
	st, err := boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		return res, err
	}
	defer st.Close()
	mp, err := codec.FromJSON(nil, []byte(`{"config":{"provider":"p","model":"m","wire":"`+name+`"}}`), codec.Limits{})
	if err != nil {
		return res, err
	}
	h, err := header.Decode(mp)
	if err != nil {
		return res, err
	}
	l, err := loop.Create(ctx, st, "stream", loop.Options{Provider: prov, Host: streamHost{loop.StepSpec{Config: h.Config}}})
	if err != nil {
		return res, err
	}
	debug.FreeOSMemory() // what an earlier answer left is returned first
	res.base = resident()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return res, errors.Wrap(err, "reset the peak resident memory (/proc/self/clear_refs)")
	}
	start := time.Now()
	out, err := l.Send(ctx, loop.Text("go"), loop.User)
	res.took = time.Since(start)
	res.peak, res.bytes = peakResident(), sent
	if err != nil {
		return res, err
	}
	if out.Reason != "completed" {
		return res, measuref("the turn ended %s (%s %s)", errors.Safe(out.Reason), errors.Safe(out.Code), errors.Safe(out.Message))
	}
	if res.peak <= 0 || res.bytes < size {
		return res, measuref("no figure: peak %d, %d bytes streamed", errors.Safe(res.peak), errors.Safe(res.bytes))
	}
	return res, nil
}

// countingWriter counts the bytes a handler writes.
type countingWriter struct {
	http.ResponseWriter
	n *int64
}

func (w countingWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	*w.n += int64(n)
	return n, err
}

// resident and peakResident read this process's VmRSS and VmHWM, in
// bytes (0 when /proc is not there).
func resident() int64 {
	v, _ := procStatus(os.Getpid(), "VmRSS")
	return v
}

func peakResident() int64 {
	v, _ := procStatus(os.Getpid(), "VmHWM")
	return v
}

// writeStreamMemory writes the section on memory while streaming.
func (r *report) writeStreamMemory(b *strings.Builder) {
	if len(r.streamMem) == 0 {
		return
	}
	b.WriteString("## Memory while streaming\n\n")
	fmt.Fprintf(b, "One answer of %s MiB (reasoning, then text, a few words per event, generated as it is sent) streams\n"+
		"from a local server through `provider.Provider` and the loop into a bbolt store. Resident memory is read\n"+
		"from `/proc/self/status` before the turn and at its peak (VmHWM, reset just before); the figure is the\n"+
		"growth ÷ the bytes streamed (target ≤ 1.5×, issue 19).\n\n", mib(float64(r.cfg.streamMemSize())))
	t := newTable("renderer", "streamed MiB", "took", "resident before MiB", "peak MiB", "growth ÷ bytes")
	t.align[0] = false
	for _, s := range r.streamMem {
		t.add(s.wire, mib(float64(s.bytes)), dur(s.took), mib(float64(s.base)), mib(float64(s.peak)), ratio(s.growth()))
	}
	t.write(b)
}
