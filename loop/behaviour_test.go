package loop_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/compact"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/scenario"
)

// fixedHost answers every step with the same spec (changeable between turns).
type fixedHost struct{ spec loop.StepSpec }

func (h *fixedHost) Step(context.Context, int64, int64) (loop.StepSpec, error) { return h.spec, nil }

func config(t testing.TB, js string) header.Config {
	t.Helper()
	mp, err := codec.FromJSON(nil, []byte(`{"config":`+js+`}`), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := header.Decode(mp)
	if err != nil {
		t.Fatal(err)
	}
	return s.Config
}

// harness opens loop instances over one store with a scripted provider
// that records what it receives.
type harness struct {
	t     *testing.T
	store *boltlog.Log
	prov  *recording
	host  *fixedHost
}

type recording struct {
	p    scenario.Provider
	seen []scenario.Step
	// before runs before each answer (e.g. to inject during dispatch).
	before func(req *loop.Request)
}

func (r *recording) Stream(ctx context.Context, req *loop.Request) (loop.Stream, error) {
	r.seen = append(r.seen, scenario.Step{Turn: req.Turn, Step: req.Step, Bytes: len(req.JSON), Digest: req.Digest,
		Request: append([]byte(nil), req.JSON...)})
	if r.before != nil {
		r.before(req)
	}
	return r.p.Stream(ctx, req)
}

func newHarness(t *testing.T) *harness {
	return &harness{t: t, store: openStore(t), prov: &recording{},
		host: &fixedHost{spec: loop.StepSpec{System: "sys", Config: config(t, `{"provider":"p","model":"m"}`)}}}
}

func (h *harness) open(id string, mod func(*loop.Options)) *loop.Loop {
	h.t.Helper()
	o := loop.Options{Provider: h.prov, Host: h.host, Now: func() float64 { return 7 }, Invariant: loop.InvariantFromScratch}
	if mod != nil {
		mod(&o)
	}
	l, err := openOrCreate(context.Background(), h.store, id, o)
	if err != nil {
		h.t.Fatal(err)
	}
	return l
}

func (h *harness) send(l *loop.Loop, prompt string, replies ...string) loop.Outcome {
	h.t.Helper()
	var rs [][]byte
	for _, r := range replies {
		rs = append(rs, []byte(r))
	}
	h.prov.p.SetReplies(rs)
	out, err := l.Send(context.Background(), loop.Text(prompt), loop.User)
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// headers returns the request/header and header-delta events of a session.
func (h *harness) headers(id string) []codec.Event {
	_, evs := readSession(h.t, h.store, id)
	var out []codec.Event
	for _, e := range evs {
		if e.Type == codec.TypeRequestHeader || e.Type == codec.TypeHeaderDelta {
			out = append(out, e)
		}
	}
	return out
}

func reasonOf(e codec.Event) string {
	if rh, ok := e.Data.(*codec.RequestHeader); ok {
		return rh.Reason
	}
	return "delta"
}

func text(s string) string { return `[{"type":"text","text":"` + s + `"}]` }

func contributorOf(msgs ...string) loop.Contributor {
	return func(ctx context.Context, c *loop.Composer, next func() ([][]byte, error)) ([][]byte, error) {
		rest, err := next()
		if err != nil {
			return nil, err
		}
		var out [][]byte
		for _, m := range msgs {
			out = append(out, []byte(`{"role":"user","content":`+text(m)+`}`))
		}
		return append(out, rest...), nil
	}
}

func TestPrefixComposedOncePerInstance(t *testing.T) {
	h := newHarness(t)
	var calls atomic.Int32
	counting := func(ctx context.Context, c *loop.Composer, next func() ([][]byte, error)) ([][]byte, error) {
		calls.Add(1)
		return contributorOf("first")(ctx, c, next)
	}
	l := h.open("s", func(o *loop.Options) { o.Prefix = []loop.Contributor{counting, contributorOf("second")} })
	h.send(l, "one", `[{"type":"tool-call","id":"c1","name":"x","arguments":"{}"}]`, text("done"))
	h.send(l, "two", text("ok"))
	if n := calls.Load(); n != 1 {
		t.Fatalf("composed %d times in one instance, want 1", n)
	}
	if len(h.prov.seen) != 3 {
		t.Fatalf("requests = %d, want 3", len(h.prov.seen))
	}
	for _, r := range h.prov.seen {
		want := `"messages":[{"role":"user","content":[{"type":"text","text":"first"}]},{"role":"user","content":[{"type":"text","text":"second"}]},`
		if !strings.Contains(string(r.Request), want) {
			t.Fatalf("request %d.%d does not start with the prefix in registration order: %s", r.Turn, r.Step, r.Request)
		}
	}
	if hs := h.headers("s"); len(hs) != 1 || reasonOf(hs[0]) != "initial" {
		t.Fatalf("header events = %d, want one initial snapshot", len(hs))
	}
	h.open("s", func(o *loop.Options) { o.Prefix = []loop.Contributor{counting} })
	if calls.Load() != 1 {
		t.Fatal("opening composed eagerly; composition belongs to the first step")
	}
	checkTheorem(t, h.store, "s", h.prov.seen)
}

func TestEmptyPrefixWritesNoKey(t *testing.T) {
	h := newHarness(t)
	l := h.open("s", func(o *loop.Options) {
		o.Prefix = []loop.Contributor{func(ctx context.Context, c *loop.Composer, next func() ([][]byte, error)) ([][]byte, error) {
			return next()
		}}
	})
	h.send(l, "hi", text("ok"))
	hs := h.headers("s")
	js, _ := hs[0].AppendJSON(nil)
	if strings.Contains(string(js), "messagePrefix") {
		t.Fatalf("empty composition wrote a prefix: %s", js)
	}
}

func TestContributorMutationDoesNotLeak(t *testing.T) {
	h := newHarness(t)
	mine := []byte(`{"role":"user","content":[{"type":"text","text":"AAAA"}]}`)
	l := h.open("s", func(o *loop.Options) {
		o.Prefix = []loop.Contributor{func(ctx context.Context, c *loop.Composer, next func() ([][]byte, error)) ([][]byte, error) {
			return [][]byte{mine}, nil
		}}
	})
	h.send(l, "one", text("ok"))
	copy(mine[bytesIndex(mine, "AAAA"):], "BBBB")
	h.send(l, "two", text("ok"))
	for _, r := range h.prov.seen {
		if strings.Contains(string(r.Request), "BBBB") {
			t.Fatalf("a contributor's later mutation reached request %d.%d", r.Turn, r.Step)
		}
	}
	checkTheorem(t, h.store, "s", h.prov.seen)
}

func bytesIndex(b []byte, s string) int { return strings.Index(string(b), s) }

func TestCompositionBeforePreStepAndAppendsJoinRequest(t *testing.T) {
	h := newHarness(t)
	var order []string
	l := h.open("s", func(o *loop.Options) {
		o.Prefix = []loop.Contributor{func(ctx context.Context, c *loop.Composer, next func() ([][]byte, error)) ([][]byte, error) {
			order = append(order, "compose")
			if err := c.Append([]byte(text("workspace notes")), loop.Plugin("ws")); err != nil {
				return nil, err
			}
			return next()
		}}
		o.PreStep = []loop.PreStepHook{func(ctx context.Context, p loop.PreStep) error {
			order = append(order, "pre-step")
			return nil
		}}
	})
	h.send(l, "hi", text("ok"))
	if strings.Join(order, ",") != "compose,pre-step" {
		t.Fatalf("order = %v", order)
	}
	if !strings.Contains(string(h.prov.seen[0].Request), `<context source=\"plugin\">`) {
		t.Fatalf("the contributor's append did not join the first request: %s", h.prov.seen[0].Request)
	}
	checkTheorem(t, h.store, "s", h.prov.seen)
}

func TestCancelDuringCompositionRecomposes(t *testing.T) {
	h := newHarness(t)
	var calls int
	ctx, cancel := context.WithCancel(context.Background())
	l := h.open("s", func(o *loop.Options) {
		o.Prefix = []loop.Contributor{func(cctx context.Context, c *loop.Composer, next func() ([][]byte, error)) ([][]byte, error) {
			calls++
			if calls == 1 {
				cancel()
				return [][]byte{[]byte(`{"role":"user","content":` + text("stale") + `}`)}, nil
			}
			return [][]byte{[]byte(`{"role":"user","content":` + text("fresh") + `}`)}, nil
		}}
	})
	h.prov.p.SetReplies([][]byte{[]byte(text("never"))})
	out, err := l.Send(ctx, loop.Text("one"), loop.User)
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != "aborted" || out.Steps != 0 {
		t.Fatalf("outcome %+v, want aborted without a step", out)
	}
	h.send(l, "two", text("ok"))
	if calls != 2 {
		t.Fatalf("composed %d times, want 2", calls)
	}
	if r := string(h.prov.seen[0].Request); strings.Contains(r, "stale") || !strings.Contains(r, "fresh") {
		t.Fatalf("request carries the discarded composition: %s", r)
	}
	checkTheorem(t, h.store, "s", h.prov.seen)
}

func TestResumeWritesResumeEvenWhenUnchanged(t *testing.T) {
	h := newHarness(t)
	h.send(h.open("s", nil), "one", text("ok"))
	h.send(h.open("s", nil), "two", text("ok"))
	hs := h.headers("s")
	if len(hs) != 2 || reasonOf(hs[0]) != "initial" || reasonOf(hs[1]) != "resume" {
		t.Fatalf("headers %v, want initial then resume", reasons(hs))
	}
	checkTheorem(t, h.store, "s", h.prov.seen)
}

func reasons(evs []codec.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, reasonOf(e))
	}
	return out
}

func TestToolReorderWritesFallbackAndEditsWriteDeltas(t *testing.T) {
	h := newHarness(t)
	a := loop.Tool{Name: "a", Description: "A", Parameters: []byte(`{"type":"object"}`)}
	b := loop.Tool{Name: "b", Description: "B", Parameters: []byte(`{"type":"object"}`)}
	h.host.spec.Tools = []loop.Tool{a, b}
	l := h.open("s", nil)
	h.send(l, "one", text("ok"))
	h.host.spec.Tools = []loop.Tool{b, a}
	h.send(l, "two", text("ok"))
	h.host.spec.System = "sys\nmore"
	h.send(l, "three", text("ok"))
	h.send(l, "four", text("ok"))
	got := strings.Join(reasons(h.headers("s")), ",")
	if got != "initial,fallback,delta" {
		t.Fatalf("headers %s, want initial,fallback,delta", got)
	}
	checkTheorem(t, h.store, "s", h.prov.seen)
}

func TestInjectDuringDispatchJoinsNextRequest(t *testing.T) {
	h := newHarness(t)
	l := h.open("s", nil)
	h.prov.before = func(req *loop.Request) {
		if req.Step == 1 {
			if err := l.Inject(context.Background(), loop.Text("late news"), loop.Plugin("watch")); err != nil {
				t.Error(err)
			}
		}
	}
	h.send(l, "go", `[{"type":"tool-call","id":"c1","name":"x","arguments":"{}"}]`, text("done"))
	if strings.Contains(string(h.prov.seen[0].Request), "late news") {
		t.Fatal("an injection during dispatch reached the request it was injected during")
	}
	if !strings.Contains(string(h.prov.seen[1].Request), "late news") {
		t.Fatal("an injection during dispatch did not join the next request")
	}
	checkTheorem(t, h.store, "s", h.prov.seen)
}

// TestPressureCountsPrefix: a resumed instance with a bigger prefix
// compacts before its first request instead of overflowing.
func TestPressureCountsPrefix(t *testing.T) {
	h := newHarness(t)
	gate := &compact.Gate{Config: compact.Config{ContextWindow: 400, ThresholdRatio: 0.8, RetainTokens: 40},
		Summarizer: summarizerFunc(func() string { return `[{"type":"text","text":"s"}]` })}
	l := h.open("s", func(o *loop.Options) { o.Compaction = gate })
	for i := 0; i < 4; i++ {
		h.send(l, strings.Repeat("word ", 30), text(strings.Repeat("answer ", 20)))
	}
	before := countType(t, h, "s", codec.TypeCompactSummary)
	big := strings.Repeat("prefix ", 80)
	l = h.open("s", func(o *loop.Options) {
		o.Compaction = gate
		o.Prefix = []loop.Contributor{contributorOf(big)}
	})
	h.send(l, "again", text("ok"))
	if after := countType(t, h, "s", codec.TypeCompactSummary); after <= before {
		t.Fatalf("no compaction before the resumed instance's first request (summaries %d → %d)", before, after)
	}
	// The compaction happened before the boundary of that first request.
	_, evs := readSession(t, h.store, "s")
	lastSummary, resume := int64(-1), int64(-1)
	for _, e := range evs {
		if e.Type == codec.TypeCompactSummary {
			lastSummary = e.Seq
		}
		if e.Type == codec.TypeRequestHeader && reasonOf(e) == "resume" {
			resume = e.Seq
		}
	}
	if lastSummary > resume {
		t.Fatalf("compaction at seq %d came after the resume snapshot at %d", lastSummary, resume)
	}
	checkTheorem(t, h.store, "s", h.prov.seen)
}

type summarizerFunc func() string

func (f summarizerFunc) Summarize(ctx context.Context, msgs [][]byte) (compact.Summary, error) {
	return compact.Summary{Content: []byte(f()), Model: "m"}, nil
}

func countType(t *testing.T, h *harness, id, typ string) int {
	_, evs := readSession(t, h.store, id)
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}
