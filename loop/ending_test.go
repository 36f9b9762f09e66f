package loop_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/compact"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/loop"
)

// types returns the event types of a session from seq from on.
func types(t *testing.T, s *boltlog.Log, id string, from int) []string {
	_, evs := readSession(t, s, id)
	var out []string
	for _, e := range evs[from:] {
		out = append(out, e.Type)
	}
	return out
}

func lastJSON(t *testing.T, s *boltlog.Log, id string) string {
	_, evs := readSession(t, s, id)
	js, _ := evs[len(evs)-1].AppendJSON(nil)
	return string(js)
}

type failingProvider struct{ err error }

func (p failingProvider) Stream(context.Context, *loop.Request) (loop.Stream, error) {
	return nil, p.err
}

func TestProviderErrorEndsTurn(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		code string
	}{
		{"coded", &loop.ProviderError{Code: "RATE_LIMIT", Message: "provider says no"}, "RATE_LIMIT"},
		{"wrapped", fmt.Errorf("send: %w", &loop.ProviderError{Code: "AUTH", Message: "bad key", Status: 401}), "AUTH"},
		{"plain", errors.New("boom"), "PROVIDER"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			l := h.open("s", func(o *loop.Options) { o.Provider = failingProvider{tc.err} })
			out, err := l.Send(context.Background(), loop.Text("hi"), loop.User)
			if err != nil {
				t.Fatal(err)
			}
			if out.Reason != "error" || out.Code != tc.code || out.Step != 1 {
				t.Fatalf("outcome %+v", out)
			}
			got := strings.Join(types(t, h.store, "s", 2), ",")
			if got != "step/start,request/header,request/digest,step/end,turn/end" {
				t.Fatalf("events %s", got)
			}
			if want := `"code":"` + tc.code + `"`; !strings.Contains(lastJSON(t, h.store, "s"), want) {
				t.Fatalf("turn/end %s lacks %s", lastJSON(t, h.store, "s"), want)
			}
		})
	}
}

// chunksProvider streams the same chunks for every request.
type chunksProvider []loop.Chunk

func (p chunksProvider) Stream(context.Context, *loop.Request) (loop.Stream, error) {
	return &instantStream{chunks: append([]loop.Chunk(nil), p...)}, nil
}

// TestErrorFinishEndsTurn checks that a server's error inside the stream
// (a finish of kind error, docs/wire.md#openai-chat) ends the turn as a provider error
// does (docs/loop.md#how-turns-end): the text so far is the step's message, and turn/end
// carries the error's code and message, not completed.
func TestErrorFinishEndsTurn(t *testing.T) {
	for _, tc := range []struct {
		name, reason, code, message string
	}{
		{"coded", `{"kind":"error","message":"server overloaded","code":"OVERLOADED"}`, "OVERLOADED", "server overloaded"},
		{"no code", `{"kind":"error","message":"lost"}`, "PROVIDER", "lost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			l := h.open("s", func(o *loop.Options) {
				o.Provider = chunksProvider{
					{Type: loop.ChunkBlockStart, BlockType: "text"},
					{Type: loop.ChunkTextDelta, Text: "partial"},
					{Type: loop.ChunkBlockEnd, Block: []byte(`{"type":"text","text":"partial"}`)},
					{Type: loop.ChunkFinish, Reason: []byte(tc.reason)},
				}
			})
			out, err := l.Send(context.Background(), loop.Text("hi"), loop.User)
			if err != nil {
				t.Fatal(err)
			}
			if out.Reason != "error" || out.Code != tc.code || out.Message != tc.message || out.Step != 1 {
				t.Fatalf("outcome %+v; want error %s %q at step 1", out, tc.code, tc.message)
			}
			got := strings.Join(types(t, h.store, "s", 2), ",")
			want := "step/start,request/header,request/digest,assistant/chunk,assistant/chunk,assistant/chunk,assistant/chunk,assistant/message,step/end,turn/end"
			if got != want {
				t.Fatalf("events %s; want %s", got, want)
			}
			if want := `"reason":{"kind":"error","step":1,"message":"` + tc.message + `","code":"` + tc.code + `"}`; !strings.Contains(lastJSON(t, h.store, "s"), want) {
				t.Fatalf("turn/end %s lacks %s", lastJSON(t, h.store, "s"), want)
			}
		})
	}
}

func TestScriptExhausted(t *testing.T) {
	h := newHarness(t)
	l := h.open("s", nil)
	out := h.send(l, "go", `[{"type":"tool-call","id":"c1","name":"x","arguments":"{}"}]`)
	if out.Reason != "error" || out.Code != "SCRIPT_EXHAUSTED" || out.Step != 2 {
		t.Fatalf("outcome %+v", out)
	}
	checkTheorem(t, h.store, "s", h.prov.seen)
}

func TestToolFailuresBecomeErrorResults(t *testing.T) {
	h := newHarness(t)
	h.host.spec.Tools = []loop.Tool{
		{Name: "panics", Run: func(context.Context, loop.Call) (loop.Result, error) { panic("kaboom") }},
		{Name: "fails", Run: func(context.Context, loop.Call) (loop.Result, error) { return loop.Result{}, errors.New("disk full") }},
		{Name: "garbage", Run: func(context.Context, loop.Call) (loop.Result, error) {
			return loop.Result{Content: []byte(`{"not":"an array"}`)}, nil
		}},
	}
	l := h.open("s", nil)
	out := h.send(l, "go", `[{"type":"tool-call","id":"c1","name":"panics","arguments":"{}"},`+
		`{"type":"tool-call","id":"c2","name":"fails","arguments":"{}"},`+
		`{"type":"tool-call","id":"c3","name":"garbage","arguments":"{}"},`+
		`{"type":"tool-call","id":"c4","name":"missing","arguments":"{}"}]`, text("recovered"))
	if out.Reason != "completed" {
		t.Fatalf("outcome %+v", out)
	}
	_, evs := readSession(t, h.store, "s")
	var codes []string
	for _, e := range evs {
		if e.Type == codec.TypeToolResult {
			js, _ := e.AppendJSON(nil)
			i := strings.Index(string(js), `"code":"`)
			codes = append(codes, strings.SplitN(string(js)[i+8:], `"`, 2)[0])
			if !e.Data.(*codec.ToolResult).IsError {
				t.Fatalf("tool result %s is not an error", js)
			}
		}
	}
	if got := strings.Join(codes, ","); got != "panic,tool-error,invalid-result,unknown-tool" {
		t.Fatalf("codes %s", got)
	}
	checkTheorem(t, h.store, "s", h.prov.seen)
}

// blockingProvider streams one chunk, then waits for ctx.
type blockingProvider struct{ started chan struct{} }

func (p blockingProvider) Stream(ctx context.Context, req *loop.Request) (loop.Stream, error) {
	return &blockingStream{ctx: ctx, started: p.started}, nil
}

type blockingStream struct {
	ctx     context.Context
	started chan struct{}
	n       int
}

func (s *blockingStream) Next() (loop.Chunk, error) {
	s.n++
	if s.n == 1 {
		return loop.Chunk{Type: loop.ChunkTextDelta, Text: "partial"}, nil
	}
	close(s.started)
	<-s.ctx.Done()
	return loop.Chunk{}, s.ctx.Err()
}

func (s *blockingStream) Close() error { return nil }

func TestCancelDuringStreaming(t *testing.T) {
	for _, dispose := range []bool{false, true} {
		h := newHarness(t)
		started := make(chan struct{})
		l := h.open("s", func(o *loop.Options) { o.Provider = blockingProvider{started} })
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-started
			if dispose {
				if err := l.Dispose(context.Background()); err != nil {
					t.Error(err)
				}
			} else {
				cancel()
			}
		}()
		out, err := l.Send(ctx, loop.Text("hi"), loop.User)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{false: "aborted", true: "disposed"}[dispose]
		if out.Reason != want {
			t.Fatalf("dispose=%v: outcome %+v", dispose, out)
		}
		got := strings.Join(types(t, h.store, "s", 5), ",")
		if got != "assistant/chunk,step/end,turn/end" {
			t.Fatalf("dispose=%v: events %s", dispose, got)
		}
		if dispose {
			if _, err := l.Send(context.Background(), loop.Text("again"), loop.User); !errors.Is(err, loop.ErrDisposed) {
				t.Fatalf("Send after Dispose = %v", err)
			}
		}
	}
}

func TestCancelDuringTools(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	h.host.spec.Tools = []loop.Tool{{Name: "slow", Run: func(c context.Context, _ loop.Call) (loop.Result, error) {
		cancel()
		<-c.Done()
		return loop.Result{}, c.Err()
	}}}
	l := h.open("s", nil)
	h.prov.p.SetReplies([][]byte{[]byte(`[{"type":"tool-call","id":"c1","name":"slow","arguments":"{}"},{"type":"tool-call","id":"c2","name":"slow","arguments":"{}"}]`)})
	out, err := l.Send(ctx, loop.Text("go"), loop.User)
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != "aborted" {
		t.Fatalf("outcome %+v", out)
	}
	_, evs := readSession(t, h.store, "s")
	n := 0
	for _, e := range evs {
		if e.Type == codec.TypeToolResult {
			n++
			if js, _ := e.AppendJSON(nil); !strings.Contains(string(js), `"error":{"name":"AbortError","code":"aborted"}`) {
				t.Fatalf("result %s", js)
			}
		}
	}
	if n != 2 {
		t.Fatalf("%d aborted results, want 2", n)
	}
	// The log is still well-formed: a new instance opens and continues.
	h.send(h.open("s", nil), "again", text("ok"))
	checkTheorem(t, h.store, "s", h.prov.seen)
}

func TestCrashClosers(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	// A crash after the assistant message asked for two tools and the first
	// tool/call was logged: write that log directly.
	lines := []string{
		`{"type":"turn/start","seq":0,"time":5,"data":{"turn":1}}`,
		`{"type":"user/message","seq":1,"time":5,"data":{"content":[{"type":"text","text":"go"}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
		`{"type":"step/start","seq":2,"time":6,"data":{"turn":1,"step":1}}`,
		`{"type":"assistant/message","seq":3,"time":6,"data":{"turn":1,"step":1,"content":[{"type":"tool-call","id":"a","name":"x","arguments":"{}"},{"type":"tool-call","id":"b","name":"x","arguments":"{}"}]},"sourceEventSeqs":[],"surfaceOp":"append"}`,
		`{"type":"tool/call","seq":4,"time":9,"data":{"turn":1,"step":1,"callId":"a","name":"x","arguments":"{}"}}`,
	}
	if err := h.store.Create(ctx, codec.NewSessionHeader("s", 1, "", "", 0)); err != nil {
		t.Fatal(err)
	}
	var evs []codec.Event
	for _, l := range lines {
		ev, err := codec.ParseEvent([]byte(l), codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if err := h.store.Append(ctx, "s", evs); err != nil {
		t.Fatal(err)
	}
	h.open("s", nil)
	_, got := readSession(t, h.store, "s")
	var tail []string
	for _, e := range got[5:] {
		js, _ := e.AppendJSON(nil)
		tail = append(tail, string(js))
	}
	want := []string{
		`{"type":"tool/result","seq":5,"time":9,"data":{"turn":1,"step":1,"callId":"a","content":[{"type":"text","text":"Tool call interrupted by a crash; no result was recorded."}],"isError":true,"error":{"name":"InterruptedError","code":"interrupted"}},"sourceEventSeqs":[4],"surfaceOp":"append"}`,
		`{"type":"tool/result","seq":6,"time":9,"data":{"turn":1,"step":1,"callId":"b","content":[{"type":"text","text":"Tool call interrupted by a crash; no result was recorded."}],"isError":true,"error":{"name":"InterruptedError","code":"interrupted"}},"surfaceOp":"append"}`,
		`{"type":"step/end","seq":7,"time":9,"data":{"turn":1,"step":1}}`,
		`{"type":"turn/end","seq":8,"time":9,"data":{"turn":1,"reason":{"kind":"interrupted"}}}`,
	}
	if strings.Join(tail, "\n") != strings.Join(want, "\n") {
		t.Fatalf("closers:\n%s\nwant:\n%s", strings.Join(tail, "\n"), strings.Join(want, "\n"))
	}
	// A second open finds nothing to close.
	h.open("s", nil)
	if _, again := readSession(t, h.store, "s"); len(again) != len(got) {
		t.Fatalf("second open appended %d events", len(again)-len(got))
	}
}

// tamperingStore serves the invariant checker a log whose user message
// differs from the one stored: the loop must refuse to send.
type tamperingStore struct {
	*boltlog.Log
	armed bool
}

func (s *tamperingStore) Scan(ctx context.Context, id string, from int64) (eventlog.Iterator, error) {
	it, err := s.Log.Scan(ctx, id, from)
	if err != nil || !s.armed {
		return it, err
	}
	return &tamperIter{Iterator: it}, nil
}

type tamperIter struct{ eventlog.Iterator }

func (it *tamperIter) Next() (codec.Event, error) {
	ev, err := it.Iterator.Next()
	if err == nil && ev.Type == codec.TypeUserMessage {
		js, _ := ev.AppendJSON(nil)
		js = []byte(strings.Replace(string(js), "hello", "HELLO", 1))
		return codec.ParseEvent(js, codec.Limits{})
	}
	return ev, err
}

func TestInvariantRefusal(t *testing.T) {
	for _, mode := range []loop.InvariantMode{loop.InvariantIncremental, loop.InvariantFromScratch} {
		h := newHarness(t)
		ts := &tamperingStore{Log: h.store}
		l, err := openOrCreate(context.Background(), ts, "s", loop.Options{Provider: h.prov, Host: h.host, Invariant: mode})
		if err != nil {
			t.Fatal(err)
		}
		ts.armed = true
		out := h.send(l, "hello there", text("never sent"))
		if out.Reason != "error" || out.Code != "INVARIANT" {
			t.Fatalf("mode %d: outcome %+v", mode, out)
		}
		if len(h.prov.seen) != 0 {
			t.Fatalf("mode %d: the provider received a request the log does not explain", mode)
		}
		if strings.Contains(out.Message, "hello") || !strings.Contains(out.Message, "messages[0].content[0].text") {
			t.Fatalf("mode %d: refusal must name the position, not the content: %s", mode, out.Message)
		}
		got := strings.Join(types(t, h.store, "s", 2), ",")
		if got != "step/start,request/header,step/end,turn/end" {
			t.Fatalf("mode %d: events %s", mode, got)
		}
	}
}

// A crash inside the compaction bracket leaves an inert compact/start: the
// next instance closes the turn and history derives in full.
func TestCrashMidCompactionIsInert(t *testing.T) {
	h := newHarness(t)
	l := h.open("s", nil)
	h.send(l, "one", text("first answer"))
	h.send(l, "two", text("second answer"))
	_, before := readSession(t, h.store, "s")
	ctx := context.Background()
	// The crash: compact/start of an open turn, then nothing.
	ts, _ := codec.ParseEvent([]byte(`{"type":"turn/start","seq":`+itoa(len(before))+`,"time":8,"data":{"turn":3}}`), codec.Limits{})
	um, _ := codec.ParseEvent([]byte(`{"type":"user/message","seq":`+itoa(len(before)+1)+`,"time":8,"data":{"content":[{"type":"text","text":"three"}],"source":{"kind":"user"}},"surfaceOp":"append"}`), codec.Limits{})
	cs, _ := codec.ParseEvent([]byte(`{"type":"compact/start","seq":`+itoa(len(before)+2)+`,"time":8,"data":{"turn":3}}`), codec.Limits{})
	if err := h.store.Append(ctx, "s", []codec.Event{ts, um, cs}); err != nil {
		t.Fatal(err)
	}
	l = h.open("s", nil)
	h.send(l, "four", text("ok"))
	last := h.prov.seen[len(h.prov.seen)-1]
	for _, want := range []string{"first answer", "second answer", "three", "four"} {
		if !strings.Contains(string(last.Request), want) {
			t.Fatalf("history lost %q after an interrupted compaction", want)
		}
	}
	checkTheorem(t, h.store, "s", h.prov.seen)
}

func TestCompactionLeavesHeaderAndPrefixAlone(t *testing.T) {
	h := newHarness(t)
	gate := &compact.Gate{Config: compact.Config{ContextWindow: 300, ThresholdRatio: 0.8, RetainTokens: 30},
		Summarizer: summarizerFunc(func() string { return `[{"type":"text","text":"sum"}]` })}
	l := h.open("s", func(o *loop.Options) {
		o.Compaction = gate
		o.Prefix = []loop.Contributor{contributorOf("the prefix")}
	})
	for i := 0; i < 6; i++ {
		h.send(l, strings.Repeat("talk ", 20), text(strings.Repeat("reply ", 15)))
	}
	if countType(t, h, "s", codec.TypeCompactSummary) == 0 {
		t.Fatal("no compaction happened")
	}
	if hs := h.headers("s"); len(hs) != 1 {
		t.Fatalf("compaction wrote %d header events, want the one initial snapshot", len(hs))
	}
	for _, r := range h.prov.seen {
		if !strings.Contains(string(r.Request), `"messages":[{"role":"user","content":[{"type":"text","text":"the prefix"}]}`) ||
			!strings.Contains(string(r.Request), `"system":"sys"`) {
			t.Fatalf("request %d.%d lost its prefix or system", r.Turn, r.Step)
		}
	}
	checkTheorem(t, h.store, "s", h.prov.seen)
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestProviderErrorDetails: a ProviderError's message is turn/end's
// message as is, and its Retry-After reaches the host in the Outcome.
func TestProviderErrorDetails(t *testing.T) {
	h := newHarness(t)
	pe := &loop.ProviderError{Code: "RATE_LIMIT", Message: "slow down", Status: 429, RetryAfter: 7 * time.Second}
	l := h.open("s", func(o *loop.Options) { o.Provider = failingProvider{fmt.Errorf("dispatch: %w", pe)} })
	out, err := l.Send(context.Background(), loop.Text("hi"), loop.User)
	if err != nil {
		t.Fatal(err)
	}
	if out.Code != "RATE_LIMIT" || out.Message != "slow down" || out.RetryAfter != 7*time.Second {
		t.Fatalf("outcome %+v", out)
	}
	if want := `"reason":{"kind":"error","step":1,"message":"slow down","code":"RATE_LIMIT"}`; !strings.Contains(lastJSON(t, h.store, "s"), want) {
		t.Fatalf("turn/end %s lacks %s", lastJSON(t, h.store, "s"), want)
	}
	if got := pe.Error(); got != "RATE_LIMIT (HTTP 429): slow down" {
		t.Fatalf("Error() = %q", got)
	}
}
