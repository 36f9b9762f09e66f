package stress

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/compact"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/scenario"
)

// storeOptions are the options every store of these tests is opened
// with: the default durability (fsync on every commit) and the rebuild
// rules checking every append, as the writers of a real deployment use
// them (logtool does the same).
func storeOptions() *eventlog.Options {
	return &eventlog.Options{NewValidator: rebuild.NewValidator}
}

// storeBoltOptions are the bbolt options of these tests' stores.
func storeBoltOptions() *boltlog.Options {
	// A killed child's lock is gone once it is reaped; be generous under
	// load.
	return &boltlog.Options{LockTimeout: 30 * time.Second}
}

// workload drives the real loop over one session against a scripted
// model: turns of one to three steps whose non-final steps call tools,
// idle injections, injections and steering during dispatch, system-prompt
// changes (header deltas), a prefix contributor that also appends context
// while composing, a failing summarizer now and then, cancellations
// (unless calm), and a small context window so that compactions are
// frequent.
type workload struct {
	id   string
	rng  *lockedRand
	calm bool
	host *host
	prov *provider
	gate *compact.Gate
	// mu guards l, the current loop instance (open replaces it).
	mu sync.Mutex
	l  *loop.Loop
	// quiet is held (read) by asynchronous injectors around each call and
	// (write) by a turn that may be cancelled: a turn cancelled with
	// context queued loses it (TestInjectQueuedInCancelledTurn), so the
	// crash rounds keep the two apart until that is fixed; for the same
	// reason the provider does not inject in a turn that may be cancelled.
	quiet sync.RWMutex
}

// newWorkload returns the workload of session id. A calm workload runs
// one-step turns with nothing injected, never cancels, and its summarizer
// never fails: each of its turns ends completed, at little cost.
func newWorkload(id string, seed int64, calm bool) *workload {
	rng := &lockedRand{r: rand.New(rand.NewSource(seed))}
	w := &workload{id: id, rng: rng, calm: calm}
	w.host = &host{system: "You are a careful assistant.\nAnswer briefly.\nSession " + id + "."}
	for _, name := range []string{"read", "write", "grep"} {
		w.host.tools = append(w.host.tools, w.tool(name))
	}
	w.host.config = header.Config{Provider: "scripted", HasProvider: true, Model: "scripted-1"}
	w.prov = &provider{w: w}
	w.gate = &compact.Gate{
		Config:     compact.Config{ContextWindow: 300 + rng.Intn(300), ThresholdRatio: 0.8, RetainTokens: 80},
		Summarizer: summarizer{w: w},
	}
	return w
}

// open starts a new loop instance over the session (creating it if
// needed, appending crash closers if its last turn is open).
func (w *workload) open(ctx context.Context, store loop.Store) error {
	composeContext := w.rng.Intn(3) == 0
	prefix := func(ctx context.Context, c *loop.Composer, next func() ([][]byte, error)) ([][]byte, error) {
		if composeContext {
			if err := c.Append(loop.Text("workspace of "+w.id+": "+w.words(6)), loop.Plugin("workspace")); err != nil {
				return nil, err
			}
		}
		rest, err := next()
		if err != nil {
			return nil, err
		}
		mine := []byte(`{"role":"user","content":` + string(loop.Text("project rules for "+w.id)) + `}`)
		return append([][]byte{mine}, rest...), nil
	}
	l, err := openOrCreate(ctx, store, w.id, loop.Options{
		Provider:   w.prov,
		Host:       w.host,
		Prefix:     []loop.Contributor{prefix},
		Compaction: w.gate,
		Invariant:  loop.InvariantIncremental,
		Cwd:        "/work/" + w.id,
	})
	if err != nil {
		return errors.Wrapf(err, "open session %s", errors.Safe(w.id))
	}
	w.mu.Lock()
	w.l = l
	w.mu.Unlock()
	return nil
}

// loop returns the current loop instance.
func (w *workload) loop() *loop.Loop {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.l
}

// turn runs one turn (after an idle injection, sometimes, which is a turn
// of its own) and returns how it ended.
func (w *workload) turn(ctx context.Context) (loop.Outcome, error) {
	if w.calm {
		w.prov.p.SetReplies([][]byte{[]byte(`[{"type":"text","text":` + w.quoted(20) + `}]`)})
		out, err := w.loop().Send(ctx, loop.Text(w.words(20)), loop.User)
		return out, errors.Wrapf(err, "session %s: send", errors.Safe(w.id))
	}
	if w.rng.Intn(6) == 0 {
		w.host.setSystem("You are a careful assistant.\n" + w.words(5) + "\nSession " + w.id + ".")
	}
	if w.rng.Intn(5) == 0 {
		if err := w.loop().Inject(ctx, loop.Text("idle: "+w.words(8)), loop.Plugin("watch")); err != nil {
			return loop.Outcome{}, errors.Wrapf(err, "session %s: inject", errors.Safe(w.id))
		}
	}
	steps := 1 + w.rng.Intn(3)
	replies := make([][]byte, 0, steps)
	for s := 0; s < steps-1; s++ {
		var calls []string
		for c := 0; c < 1+w.rng.Intn(2); c++ {
			args, _ := json.Marshal(fmt.Sprintf(`{"path":"f%d.go"}`, w.rng.Intn(100)))
			calls = append(calls, fmt.Sprintf(`{"type":"tool-call","id":"call-%d","name":"%s","arguments":%s}`,
				w.rng.Int63(), w.host.tools[w.rng.Intn(len(w.host.tools))].Name, args))
		}
		replies = append(replies, []byte(`[{"type":"text","text":`+w.quoted(4)+`},`+strings.Join(calls, ",")+`]`))
	}
	replies = append(replies, []byte(`[{"type":"reasoning","text":`+w.quoted(6)+`},{"type":"text","text":`+w.quoted(30)+`}]`))
	w.prov.p.SetReplies(replies)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if w.rng.Intn(3) == 0 {
		w.quiet.Lock()
		defer w.quiet.Unlock()
		w.prov.setCancel(cancel)
	} else {
		w.prov.setCancel(nil)
	}
	out, err := w.loop().Send(ctx, loop.Text(w.words(40)), loop.User)
	return out, errors.Wrapf(err, "session %s: send", errors.Safe(w.id))
}

var vocab = []string{"alpha", "beta", "gamma", "δέλτα", "<b>", "a&b", "ok", "\u2028", "日本", `"quoted"`, "tab\there", "line\nbreak", "build", "test"}

// words returns n random words.
func (w *workload) words(n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = vocab[w.rng.Intn(len(vocab))]
	}
	return strings.Join(out, " ")
}

// quoted returns n random words as a JSON string.
func (w *workload) quoted(n int) string {
	b, _ := json.Marshal(w.words(n))
	return string(b)
}

// host answers every step with the current system prompt, tools and
// config.
type host struct {
	mu     sync.Mutex
	system string
	tools  []loop.Tool
	config header.Config
}

func (h *host) Step(context.Context, int64, int64) (loop.StepSpec, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return loop.StepSpec{System: h.system, Tools: h.tools, Config: h.config}, nil
}

func (h *host) setSystem(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.system = s
}

// tool is a tool whose result is a function of the call alone; unless
// the workload is calm, it cancels a cancellable turn now and then, so
// that turns also end aborted while their tools run.
func (w *workload) tool(name string) loop.Tool {
	return loop.Tool{
		Name:        name,
		Description: "The " + name + " tool.",
		Parameters:  []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		Run: func(ctx context.Context, c loop.Call) (loop.Result, error) {
			if !w.calm && w.rng.Intn(12) == 0 {
				w.prov.cancelTurn()
			}
			if err := ctx.Err(); err != nil {
				return loop.Result{}, err
			}
			text, _ := json.Marshal(name + " " + c.Arguments + " → 42 lines")
			return loop.Result{Content: []byte(`[{"type":"text","text":` + string(text) + `}]`)}, nil
		},
	}
}

// provider is the scripted model; before answering, it sometimes injects
// context or steers (both join the next request) or cancels the turn.
type provider struct {
	w      *workload
	p      scenario.Provider
	mu     sync.Mutex
	cancel context.CancelFunc
}

func (p *provider) setCancel(c context.CancelFunc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cancel = c
}

// cancelTurn cancels the running turn if it may be cancelled.
func (p *provider) cancelTurn() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cancel != nil {
		p.cancel()
	}
}

func (p *provider) Stream(ctx context.Context, req *loop.Request) (loop.Stream, error) {
	w := p.w
	if w.calm {
		return p.p.Stream(ctx, req)
	}
	p.mu.Lock()
	cancellable := p.cancel != nil
	p.mu.Unlock()
	switch w.rng.Intn(16) {
	case 0, 1:
		if cancellable {
			break // see workload.quiet
		}
		if err := w.loop().Inject(ctx, loop.Text("during dispatch: "+w.words(5)), loop.Plugin("watch")); err != nil {
			return nil, err
		}
	case 2:
		if err := w.loop().Steer(loop.Text("steer: "+w.words(3)), loop.User); err != nil {
			return nil, err
		}
	case 3:
		p.cancelTurn()
	}
	return p.p.Stream(ctx, req)
}

// summarizer is the compaction's scripted summarizer; unless the workload
// is calm it fails now and then, which the log records as compact/end
// with an error.
type summarizer struct{ w *workload }

func (s summarizer) Summarize(ctx context.Context, msgs [][]byte) (compact.Summary, error) {
	if err := ctx.Err(); err != nil {
		return compact.Summary{}, err
	}
	if !s.w.calm && s.w.rng.Intn(10) == 0 {
		return compact.Summary{}, errors.New("stress: scripted summarizer failure")
	}
	return compact.Summary{
		Content:  []byte(`[{"type":"text","text":"Summary of ` + fmt.Sprint(len(msgs)) + ` messages."}]`),
		Provider: "scripted",
		Model:    "scripted-1",
	}, nil
}

// lockedRand is a math/rand source shared by the goroutines of one
// workload (the loop may run tools and hooks on goroutines of its own).
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (l *lockedRand) Intn(n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Intn(n)
}

func (l *lockedRand) Int63() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Int63()
}
