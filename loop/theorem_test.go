package loop_test

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/compact"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/scenario"
)

// TestTheorem is docs/README.md#the-principle under load: for generated sessions mixing prefix
// contributors, tool calls, idle injections and injections during
// dispatch, steering, system/tool/config changes, compactions, resumes,
// forks and cancellations, every request the provider received is
// byte-identical to the rebuild of its step from the stored log, and to
// the digest the log recorded for it.
func TestTheorem(t *testing.T) {
	seeds := 25
	if testing.Short() {
		seeds = 5
	}
	for seed := 0; seed < seeds; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { theorem(t, rand.New(rand.NewSource(int64(seed)))) })
	}
}

type genRun struct {
	t       *testing.T
	rng     *rand.Rand
	h       *harness
	session string
	l       *loop.Loop
	seen    map[string][]scenario.Step
	forks   int
	tools   []loop.Tool
	cancel  context.CancelFunc
}

func theorem(t *testing.T, rng *rand.Rand) {
	g := &genRun{t: t, rng: rng, h: newHarness(t), session: "root", seen: map[string][]scenario.Step{}}
	g.tools = []loop.Tool{g.tool("read"), g.tool("write"), g.tool("grep")}
	g.h.host.spec.Tools = g.tools
	g.h.prov.before = g.beforeRequest
	g.l = g.open(g.session)
	turns := 8 + rng.Intn(8)
	for i := 0; i < turns; i++ {
		g.turn()
	}
	for id, seen := range g.seen {
		checkTheorem(t, g.h.store, id, seen)
	}
}

func (g *genRun) tool(name string) loop.Tool {
	return loop.Tool{Name: name, Description: "the " + name + " tool", Parameters: []byte(`{"type":"object","properties":{"p":{"type":"string"}},"z":1,"a":2}`),
		Run: func(ctx context.Context, c loop.Call) (loop.Result, error) {
			if g.rng.Intn(8) == 0 {
				return loop.Result{}, fmt.Errorf("%s failed", name)
			}
			return loop.Result{Content: []byte(`[{"type":"text","text":"` + name + ` says ` + words(g.rng, 3) + `"}]`)}, nil
		}}
}

func words(rng *rand.Rand, n int) string {
	vocab := []string{"alpha", "beta", "gamma", "δέλτα", "<b>", "a&b", "ok", "\\u2028", "日本"}
	var out []string
	for i := 0; i < 1+rng.Intn(n); i++ {
		out = append(out, vocab[rng.Intn(len(vocab))])
	}
	return strings.Join(out, " ")
}

func (g *genRun) open(id string) *loop.Loop {
	var prefix []loop.Contributor
	for i := 0; i < g.rng.Intn(3); i++ {
		prefix = append(prefix, contributorOf(fmt.Sprintf("prefix %d of %s: %s", i, id, words(g.rng, 4))))
	}
	gate := &compact.Gate{Config: compact.Config{ContextWindow: 600 + g.rng.Intn(600), ThresholdRatio: 0.8, RetainTokens: 80},
		Summarizer: summarizerFunc(func() string { return `[{"type":"text","text":"summary"}]` })}
	mode := loop.InvariantIncremental
	if g.rng.Intn(3) == 0 {
		mode = loop.InvariantFromScratch
	}
	return g.h.open(id, func(o *loop.Options) {
		o.Prefix, o.Compaction, o.Invariant = prefix, gate, mode
		o.Now = nil
	})
}

// beforeRequest records the request for its session and sometimes injects
// during dispatch or cancels the turn.
func (g *genRun) beforeRequest(req *loop.Request) {
	g.seen[g.session] = append(g.seen[g.session], g.h.prov.seen[len(g.h.prov.seen)-1])
	switch g.rng.Intn(12) {
	case 0:
		if err := g.l.Inject(context.Background(), loop.Text("during dispatch: "+words(g.rng, 3)), loop.Plugin("watch")); err != nil {
			g.t.Error(err)
		}
	case 1:
		if err := g.l.Steer(loop.Text("steer: "+words(g.rng, 2)), loop.User); err != nil {
			g.t.Error(err)
		}
	case 2:
		if g.cancel != nil {
			g.cancel()
		}
	}
}

func (g *genRun) changeHost() {
	spec := &g.h.host.spec
	switch g.rng.Intn(8) {
	case 0:
		spec.System = "You are helpful.\n" + words(g.rng, 5) + "\nBe brief."
	case 1:
		spec.Tools = append([]loop.Tool(nil), g.tools...)
		g.rng.Shuffle(len(spec.Tools), func(i, j int) { spec.Tools[i], spec.Tools[j] = spec.Tools[j], spec.Tools[i] })
		spec.Tools = spec.Tools[:1+g.rng.Intn(len(spec.Tools))]
	case 2:
		spec.Config = config(g.t, fmt.Sprintf(`{"provider":"p","model":"m%d","temperature":0.%d,"stop":[]}`, g.rng.Intn(3), g.rng.Intn(9)))
	}
}

func (g *genRun) turn() {
	switch g.rng.Intn(10) {
	case 0:
		g.l = g.open(g.session) // resume: a new instance
	case 1:
		g.fork()
	}
	g.changeHost()
	if g.rng.Intn(6) == 0 {
		if err := g.l.Inject(context.Background(), loop.Text("idle: "+words(g.rng, 4)), loop.Plugin("scenario")); err != nil {
			g.t.Fatal(err)
		}
	}
	var replies [][]byte
	steps := 1 + g.rng.Intn(3)
	for s := 0; s < steps; s++ {
		if s < steps-1 {
			var calls []string
			for c := 0; c < 1+g.rng.Intn(2); c++ {
				calls = append(calls, fmt.Sprintf(`{"type":"tool-call","id":"c%d","name":"%s","arguments":"{\"p\":\"%d\"}"}`,
					g.rng.Int63(), g.tools[g.rng.Intn(len(g.tools))].Name, s))
			}
			replies = append(replies, []byte("["+strings.Join(calls, ",")+"]"))
		} else {
			replies = append(replies, []byte(`[{"type":"reasoning","text":"thinking"},{"type":"text","text":"`+words(g.rng, 12)+`"}]`))
		}
	}
	g.h.prov.p.SetReplies(replies)
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	if _, err := g.l.Send(ctx, loop.Text(words(g.rng, 20)), loop.User); err != nil {
		g.t.Fatal(err)
	}
	cancel()
}

// fork forks the current session at its last turn/end and continues there.
func (g *genRun) fork() {
	_, evs := readSession(g.t, g.h.store, g.session)
	at := int64(-1)
	for _, e := range evs {
		if e.Type == codec.TypeTurnEnd {
			at = e.Seq
		}
	}
	if at < 0 {
		return
	}
	g.forks++
	child := fmt.Sprintf("%s/fork%d", g.session, g.forks)
	o := loop.Options{Provider: g.h.prov, Host: g.h.host, Invariant: loop.InvariantIncremental}
	l, err := loop.Fork(context.Background(), g.h.store, g.session, at, child, o)
	if err != nil {
		g.t.Fatal(err)
	}
	g.session, g.l = child, l
}
