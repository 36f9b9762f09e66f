package scenario

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/compact"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/loop"
)

// Options configures Run.
type Options struct {
	// Session overrides the scenario's session id; both empty means a new
	// random id.
	Session string
	// Now is the loop's clock (Unix ms); nil means the wall clock.
	Now       func() float64
	Invariant loop.InvariantMode
	// Store-level hooks for tests: extra prefix contributors appended after
	// the scenario's, and pre-step hooks.
	Prefix  []loop.Contributor
	PreStep []loop.PreStepHook
	// Provider, when set, answers instead of the scripted model (a live
	// model, docs/cli.md run --provider): the scenario's replies are ignored
	// and its tool results answer the model's calls, by call id or by
	// tool name (docs/cli.md#scenario-files). The compaction summarizer stays scripted.
	Provider loop.Provider
}

// Step is one request the scripted model received.
type Step struct {
	Turn, Step int64
	Bytes      int
	Digest     [32]byte
	Request    []byte
}

// Report is what a run did.
type Report struct {
	Session  string
	Steps    []Step
	Outcomes []loop.Outcome
	// Unused counts, per scenario turn index, the replies left unused.
	Unused map[int]int
}

// Run drives the real loop (a new loop instance) through the scenario
// against a scripted model (or opts.Provider), scripted tool results and,
// unless the scenario sets its own, the default compaction gate with a
// scripted summarizer.
func Run(ctx context.Context, store loop.Store, sc *Scenario, opts Options) (Report, error) {
	id := opts.Session
	if id == "" {
		id = sc.Session
	}
	if id == "" {
		id = NewID()
	}
	rep := Report{Session: id, Unused: map[int]int{}}
	h := &host{system: sc.System, tools: sc.Tools, config: sc.Config}
	scripted := &Provider{}
	prov := &recorder{p: scripted}
	if opts.Provider != nil {
		prov.p = opts.Provider
	}
	lo := loop.Options{
		Provider:  prov,
		Host:      h,
		Now:       opts.Now,
		Invariant: opts.Invariant,
		PreStep:   opts.PreStep,
	}
	for _, msgs := range sc.Prefix {
		lo.Prefix = append(lo.Prefix, contributor(msgs))
	}
	lo.Prefix = append(lo.Prefix, opts.Prefix...)
	lo.Compaction = gate(sc)
	// On an existing session this is a new loop instance; else the
	// scenario starts a new session.
	l, err := loop.Open(ctx, store, id, lo)
	if errors.Is(err, eventlog.ErrNotFound) {
		l, err = loop.Create(ctx, store, id, lo)
	}
	if err != nil {
		return rep, err
	}
	for i, t := range sc.Turns {
		h.apply(t)
		for _, text := range t.Inject {
			if err := l.Inject(ctx, loop.Text(text), loop.Plugin("scenario")); err != nil {
				return rep, err
			}
		}
		if opts.Provider == nil {
			scripted.SetReplies(t.Replies)
		}
		out, err := l.Send(ctx, loop.Text(t.Prompt), loop.User)
		rep.Outcomes = append(rep.Outcomes, out)
		if err != nil {
			return rep, err
		}
		if n := scripted.Unused(); n > 0 && opts.Provider == nil {
			rep.Unused[i] = n
		}
	}
	rep.Steps = prov.steps()
	return rep, nil
}

// NewID returns a random UUID (version 4).
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// contributor contributes msgs the canonical way: [mine, ...next()].
func contributor(msgs [][]byte) loop.Contributor {
	return func(ctx context.Context, c *loop.Composer, next func() ([][]byte, error)) ([][]byte, error) {
		rest, err := next()
		if err != nil {
			return nil, err
		}
		out := make([][]byte, 0, len(msgs)+len(rest))
		for _, m := range msgs {
			out = append(out, append([]byte(nil), m...))
		}
		return append(out, rest...), nil
	}
}

// gate is the compaction gate of a scenario: its knobs or the defaults,
// and a summarizer answering with its scripted summary.
func gate(sc *Scenario) *compact.Gate {
	g := &compact.Gate{}
	summary := "Summary of the earlier conversation."
	if c := sc.Compaction; c != nil {
		g.Config = compact.Config{ContextWindow: c.ContextWindow, ThresholdRatio: c.ThresholdRatio,
			RetainTokens: c.RetainTokens, CharsPerToken: c.CharsPerToken}
		if c.Summary != "" {
			summary = c.Summary
		}
	}
	g.Summarizer = &scriptedSummarizer{text: summary, config: sc.Config}
	return g
}

type scriptedSummarizer struct {
	text   string
	config header.Config
}

func (s *scriptedSummarizer) Summarize(ctx context.Context, msgs [][]byte) (compact.Summary, error) {
	if err := ctx.Err(); err != nil {
		return compact.Summary{}, err
	}
	sum := compact.Summary{Content: loop.Text(s.text), Model: s.config.Model}
	if s.config.HasProvider {
		sum.Provider = s.config.Provider
	}
	return sum, nil
}

// host answers the loop with the scenario's current system, tools and
// config; a turn's changes stay in force for the turns after it.
type host struct {
	mu      sync.Mutex
	system  string
	tools   []ToolSpec
	config  header.Config
	results map[string]ToolResult
}

func (h *host) apply(t Turn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t.System != nil {
		h.system = *t.System
	}
	if t.Tools != nil {
		h.tools = *t.Tools
	}
	if t.Config != nil {
		h.config = *t.Config
	}
	h.results = t.ToolResults
}

func (h *host) Step(ctx context.Context, turn, step int64) (loop.StepSpec, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	spec := loop.StepSpec{System: h.system, Config: h.config}
	results := h.results
	for _, t := range h.tools {
		spec.Tools = append(spec.Tools, loop.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters,
			Run: func(ctx context.Context, c loop.Call) (loop.Result, error) {
				r, ok := results[c.ID]
				if !ok {
					// A live model's call ids cannot be known in
					// advance: the tool's name answers them (docs/cli.md#scenario-files).
					r, ok = results[c.Name]
				}
				if !ok {
					return loop.Result{}, errors.Newf("scenario: no scripted result for call %q", c.ID)
				}
				return loop.Result{Content: r.Content, IsError: r.IsError}, nil
			}})
	}
	return spec, nil
}

// recorder remembers every request the model received.
type recorder struct {
	p    loop.Provider
	mu   sync.Mutex
	seen []Step
}

func (r *recorder) Stream(ctx context.Context, req *loop.Request) (loop.Stream, error) {
	r.mu.Lock()
	r.seen = append(r.seen, Step{Turn: req.Turn, Step: req.Step, Bytes: len(req.JSON), Digest: req.Digest,
		Request: append([]byte(nil), req.JSON...)})
	r.mu.Unlock()
	return r.p.Stream(ctx, req)
}

func (r *recorder) steps() []Step {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Step(nil), r.seen...)
}
