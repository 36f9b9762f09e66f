package provider_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/compact"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/provider"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/verify"
	"github.com/sessionlog/sessionlog/wire"
)

func openStore(t testing.TB) *boltlog.Log {
	t.Helper()
	l, err := boltlog.Open(filepath.Join(t.TempDir(), "s.db"), &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// host is a host whose answer the generator changes between turns.
type host struct {
	mu   sync.Mutex
	spec loop.StepSpec
}

func (h *host) Step(context.Context, int64, int64) (loop.StepSpec, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.spec, nil
}

func (h *host) set(f func(*loop.StepSpec)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(&h.spec)
}

type summarizer struct{}

func (summarizer) Summarize(ctx context.Context, _ [][]byte) (compact.Summary, error) {
	return compact.Summary{Content: loop.Text("an earlier span, condensed"), Model: "m"}, ctx.Err()
}

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

func tool(name string) loop.Tool {
	return loop.Tool{Name: name, Description: "the " + name + " tool <&>",
		Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"z":1,"a":2}`),
		Run: func(ctx context.Context, c loop.Call) (loop.Result, error) {
			if strings.Contains(c.Arguments, `"n":0`) {
				return loop.Result{}, fmt.Errorf("%s failed", name)
			}
			if strings.Contains(c.Arguments, `"n":1`) {
				return loop.Result{Content: []byte(`[]`)}, nil // no output
			}
			return loop.Result{Content: loop.Text(name + " says " + c.Arguments)}, nil
		}}
}

func contributor(text string) loop.Contributor {
	return func(ctx context.Context, c *loop.Composer, next func() ([][]byte, error)) ([][]byte, error) {
		rest, err := next()
		msg := append(append([]byte(`{"role":"user","content":`), loop.Text(text)...), '}')
		return append([][]byte{msg}, rest...), err
	}
}

// TestProperty drives generated sessions — session prefixes, tools,
// injections, header changes (system, tools, config and the wire keys),
// compactions, resumes, HTTP errors — through the loop and a provider
// against an httptest model server, for each renderer. Every body the
// server received equals the wire rendering of its step rebuilt from the
// log (what replay --wire prints), byte for byte, and every session
// verifies strict.
func TestProperty(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 4
	}
	for _, name := range wire.Names() {
		t.Run(name, func(t *testing.T) {
			seen := map[string]int{}
			for seed := 0; seed < seeds; seed++ {
				t.Run(fmt.Sprint(seed), func(t *testing.T) { property(t, name, rand.New(rand.NewSource(int64(seed))), seen) })
			}
			// The generator did real work: every feature appeared.
			for _, what := range []string{"compact/summary", "tool/result", "context/message", "header:resume", "header-change", "turn/end:error"} {
				if seen[what] == 0 {
					t.Errorf("no %s in %d generated sessions", what, seeds)
				}
			}
			t.Logf("across %d sessions: %v", seeds, seen)
		})
	}
}

func property(t *testing.T, name string, rng *rand.Rand, seen map[string]int) {
	m := &fakeModel{t: t, wire: name, key: "sk-test-" + fmt.Sprint(rng.Int63()), rng: rand.New(rand.NewSource(rng.Int63()))}
	m.fail = func(n int) (int, string, string) {
		if n%9 == 5 {
			return 429, `{"error":{"message":"slow down","type":"rate_limit_error"}}`, "3"
		}
		return 0, "", ""
	}
	srv := httptest.NewServer(m)
	defer srv.Close()
	env := map[string]string{"TEST_KEY": m.key}
	p, err := provider.New(provider.Options{Wire: name, BaseURL: srv.URL, APIKeyEnv: "TEST_KEY",
		Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	store := openStore(t)
	tools := []loop.Tool{tool("read"), tool("write"), tool("grep")}
	h := &host{spec: loop.StepSpec{System: "You are a coding agent.\nBe brief.", Tools: tools,
		Config: config(t, `{"provider":"p","model":"m","wire":"`+name+`"}`)}}
	ctx := context.Background()
	open := func(create bool) *loop.Loop {
		var prefix []loop.Contributor
		for i := 0; i < rng.Intn(3); i++ {
			prefix = append(prefix, contributor(fmt.Sprintf("prefix %d: AGENTS.md says <be careful> %d", i, rng.Intn(99))))
		}
		gate := &compact.Gate{Config: compact.Config{ContextWindow: 500 + rng.Intn(500), ThresholdRatio: 0.8, RetainTokens: 80},
			Summarizer: summarizer{}}
		o := loop.Options{Provider: p, Host: h, Prefix: prefix, Compaction: gate}
		var l *loop.Loop
		var err error
		if create {
			l, err = loop.Create(ctx, store, "s", o)
		} else {
			l, err = loop.Open(ctx, store, "s", o)
		}
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	l := open(true)
	turns := 6 + rng.Intn(6)
	outcomes := map[string]int{}
	for i := 0; i < turns; i++ {
		if i > 0 && rng.Intn(5) == 0 {
			l = open(false) // resume: a new instance, a resume snapshot
		}
		h.set(func(s *loop.StepSpec) {
			switch rng.Intn(7) {
			case 0:
				s.System = "You are a coding agent.\nTurn " + fmt.Sprint(i) + ".\nBe brief."
			case 1:
				s.Tools = append([]loop.Tool(nil), tools...)
				rng.Shuffle(len(s.Tools), func(a, b int) { s.Tools[a], s.Tools[b] = s.Tools[b], s.Tools[a] })
				s.Tools = s.Tools[:1+rng.Intn(len(s.Tools))]
			case 2:
				s.Config = config(t, fmt.Sprintf(`{"provider":"p","model":"m%d","temperature":0.%d,"maxTokens":%d,"stop":["END"],"wire":"%s"}`,
					rng.Intn(2), rng.Intn(9), 1000+rng.Intn(3000), name))
			case 3:
				s.Config = config(t, fmt.Sprintf(`{"provider":"p","model":"m","wire":"%s","thinking":"%s","reasoningEffort":"%s"}`,
					name, []string{"enabled", "disabled"}[rng.Intn(2)], []string{"low", "high"}[rng.Intn(2)]))
			}
		})
		if rng.Intn(4) == 0 {
			if err := l.Inject(ctx, loop.Text("idle notice "+fmt.Sprint(i)), loop.Plugin("watch")); err != nil {
				t.Fatal(err)
			}
		}
		out, err := l.Send(ctx, loop.Text(fmt.Sprintf("task %d: fix the \"bug\" in <main.go> & test", i)), loop.User)
		if err != nil {
			t.Fatal(err)
		}
		outcomes[out.Reason+"/"+out.Code]++
		if out.Code == "RATE_LIMIT" && out.RetryAfter.Seconds() != 3 {
			t.Errorf("turn %d: Retry-After %v, want 3s", out.Turn, out.RetryAfter)
		}
	}
	bodies := m.received()
	if len(bodies) < turns {
		t.Fatalf("the server received %d bodies for %d turns", len(bodies), turns)
	}
	res, err := verify.Session(ctx, store, "s", verify.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Findings {
		t.Errorf("verify: %s", f)
	}
	rendered := replayWire(t, store, "s")
	if len(rendered) != len(bodies) {
		t.Fatalf("%d steps with a recorded digest, %d bodies received", len(rendered), len(bodies))
	}
	for i := range bodies {
		if !bytes.Equal(bodies[i], rendered[i]) {
			off := rebuild.FirstDifference(bodies[i], rendered[i])
			t.Fatalf("body %d differs from replay --wire at byte %d", i, off)
		}
	}
	for _, b := range bodies {
		if bytes.Contains(b, []byte(m.key)) {
			t.Fatal("a body holds the API key")
		}
	}
	t.Logf("%d turns, %d bodies byte-exact, outcomes %v", turns, len(bodies), outcomes)
	count(t, store, "s", seen)
}

// count tallies the features a generated session exercised.
func count(t *testing.T, store *boltlog.Log, id string, seen map[string]int) {
	it, err := store.Scan(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for {
		ev, err := it.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		seen[ev.Type]++
		switch d := ev.Data.(type) {
		case *codec.RequestHeader:
			if d.Reason == "resume" {
				seen["header:resume"]++
			}
			if d.Reason == "fallback" {
				seen["header-change"]++
			}
		case *codec.TurnEnd:
			if d.Reason == "error" {
				seen["turn/end:error"]++
			}
		}
		if ev.Type == codec.TypeHeaderDelta {
			seen["header-change"]++
		}
	}
}

// replayWire renders, from the stored log alone, the body of every step
// that recorded a request digest (a request that was sent), in log order,
// with the renderer its header names: what replay --wire prints.
func replayWire(t *testing.T, store *boltlog.Log, id string) [][]byte {
	t.Helper()
	ctx := context.Background()
	head, err := store.Head(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	b := rebuild.NewBuilder(head.Header, rebuild.BuilderOptions{Requests: true}, func(s rebuild.Step) error {
		if s.Null || len(s.Recorded) == 0 {
			return nil
		}
		r, err := wire.Lookup(s.Header.Config.Wire)
		if err != nil {
			return err
		}
		body, err := r.AppendBody(nil, s.Request, &s.Header)
		out = append(out, body)
		return err
	})
	it, err := store.Scan(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for {
		ev, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Add(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.End(); err != nil {
		t.Fatal(err)
	}
	return out
}
