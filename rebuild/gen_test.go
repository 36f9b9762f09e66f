package rebuild_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
)

// genLog writes a random valid session: turns of steps with chunks,
// assistant messages with tool calls and results, context and steering
// messages, header snapshots and deltas (system, tools, config, prefix),
// injections after step/start, steps without chunks, steps before any
// header, and compaction replaces over the surface head.
func genLog(rng *rand.Rand, events int) (codec.SessionHeader, []codec.Event) {
	g := &gen{rng: rng}
	g.line(`{"type":"session","version":0,"id":"gen-%d","createdAt":1}`, rng.Intn(1000))
	for turn := 1; len(g.lines) < events; turn++ {
		g.turn(turn)
	}
	h, err := codec.ParseSessionHeader([]byte(g.lines[0]), codec.Limits{})
	if err != nil {
		panic(err)
	}
	evs := make([]codec.Event, 0, len(g.lines)-1)
	for i, l := range g.lines[1:] {
		ev, err := codec.ParseEvent([]byte(l), codec.Limits{})
		if err != nil {
			panic(fmt.Sprintf("line %d %s: %v", i+2, l, err))
		}
		evs = append(evs, ev)
	}
	return h, evs
}

type gen struct {
	rng     *rand.Rand
	lines   []string
	surface []int
	headers int
	system  []string
}

func (g *gen) seq() int { return len(g.lines) - 1 }

// line appends an event line; %S in format is replaced by the seq.
func (g *gen) line(format string, args ...interface{}) int {
	s := g.seq()
	l := fmt.Sprintf(format, args...)
	l = strings.ReplaceAll(l, "%S", fmt.Sprint(s))
	g.lines = append(g.lines, l)
	return s
}

func (g *gen) ev(typ, data string, surface string) int {
	if surface != "" {
		surface = "," + surface
	}
	return g.line(`{"type":%q,"seq":%%S,"time":%d,"data":%s%s}`, typ, 1000+g.seq(), data, surface)
}

func (g *gen) appendSurface(typ, data string) {
	s := g.ev(typ, data, `"surfaceOp":"append"`)
	g.surface = append(g.surface, s)
}

func (g *gen) text() string {
	words := []string{"alpha", "β", "<tag>", "a&b", "line\nbreak", "\u2028", "quote\"d", "😀", "tab\t"}
	n := 1 + g.rng.Intn(4)
	var b []string
	for i := 0; i < n; i++ {
		b = append(b, words[g.rng.Intn(len(words))])
	}
	return string(codec.AppendJSONString(nil, []byte(strings.Join(b, " "))))
}

func (g *gen) turn(turn int) {
	g.ev("turn/start", fmt.Sprintf(`{"turn":%d,"trigger":{"kind":"message","source":{"kind":"user"}}}`, turn), "")
	g.appendSurface("user/message", fmt.Sprintf(`{"content":[{"type":"text","text":%s}],"source":{"kind":"user"}}`, g.text()))
	steps := 1 + g.rng.Intn(3)
	for step := 1; step <= steps; step++ {
		g.step(turn, step)
	}
	if g.rng.Intn(4) == 0 && len(g.surface) > 3 {
		g.compact(turn)
	}
	g.ev("turn/end", fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, turn), "")
}

func (g *gen) step(turn, step int) {
	if g.rng.Intn(5) == 0 {
		g.appendSurface("steering/message", fmt.Sprintf(`{"turn":%d,"content":[{"type":"text","text":%s}],"source":{"kind":"user"}}`, turn, g.text()))
	}
	g.ev("step/start", fmt.Sprintf(`{"turn":%d,"step":%d}`, turn, step), "")
	if g.headers == 0 && g.rng.Intn(3) == 0 {
		// A step before any header: its request is null.
	} else if g.headers == 0 || g.rng.Intn(3) == 0 {
		g.header()
	}
	if g.rng.Intn(6) == 0 {
		g.appendSurface("context/message", fmt.Sprintf(`{"content":[{"type":"text","text":%s}],"source":{"kind":"plugin","plugin":"x"}}`, g.text()))
	}
	if g.rng.Intn(8) == 0 {
		g.ev("step/end", fmt.Sprintf(`{"turn":%d,"step":%d}`, turn, step), "")
		return
	}
	for i := 0; i < 1+g.rng.Intn(3); i++ {
		g.ev("assistant/chunk", fmt.Sprintf(`{"turn":%d,"step":%d,"chunk":{"type":"text-delta","index":0,"text":%s}}`, turn, step, g.text()), "")
	}
	if g.rng.Intn(5) == 0 {
		g.header() // after the first chunk: applies from the next step on
	}
	call := g.rng.Intn(2) == 0
	content := fmt.Sprintf(`[{"type":"text","text":%s}]`, g.text())
	if call {
		content = fmt.Sprintf(`[{"type":"tool-call","id":"c%d","name":"read","arguments":"{\"p\":1}"}]`, g.seq())
	} else if g.rng.Intn(6) == 0 {
		content = `[]`
	}
	prov := ""
	if g.rng.Intn(2) == 0 {
		prov = `,"provenance":{"provider":"p","model":"m","replayState":{"z":1,"a":[2]}}`
	}
	g.appendSurface("assistant/message", fmt.Sprintf(`{"turn":%d,"step":%d,"content":%s%s}`, turn, step, content, prov))
	if call {
		g.appendSurface("tool/result", fmt.Sprintf(`{"turn":%d,"step":%d,"callId":"c%d","content":[{"type":"text","text":%s}],"isError":%v}`, turn, step, g.seq()-1, g.text(), g.rng.Intn(3) == 0))
	}
	g.ev("step/end", fmt.Sprintf(`{"turn":%d,"step":%d}`, turn, step), "")
}

func (g *gen) header() {
	if g.headers > 0 && g.rng.Intn(2) == 0 {
		g.delta()
		return
	}
	reasons := []string{"change", "resume", "fallback"}
	reason := "initial"
	if g.headers > 0 {
		reason = reasons[g.rng.Intn(len(reasons))]
	}
	g.system = []string{"You are helpful.", "Line two.", "Line three."}
	config := `{"model":"m1"}`
	if g.rng.Intn(2) == 0 {
		config = `{"provider":"p","model":"m2","temperature":0.2,"maxTokens":100,"stop":[]}`
	}
	prefix := ""
	if g.rng.Intn(3) == 0 {
		prefix = fmt.Sprintf(`,"messagePrefix":[{"role":"user","content":[{"type":"text","text":%s}]}]`, g.text())
	}
	g.ev("request/header", fmt.Sprintf(`{"header":{"config":%s,"system":%q,"tools":[{"name":"read","description":"d","parameters":{"type":"object","b":1,"a":2}}]%s},"reason":%q}`,
		config, strings.Join(g.system, "\n"), prefix, reason), "")
	g.headers++
}

func (g *gen) delta() {
	switch g.rng.Intn(4) {
	case 0:
		g.ev("request/header-delta", fmt.Sprintf(`{"system":{"keepStart":1,"keepEnd":%d,"insert":[%s]}}`, g.rng.Intn(3)-1, g.text()), "")
	case 1:
		g.ev("request/header-delta", `{"tools":{"added":[{"name":"write","description":"w","parameters":{}}],"removed":["read"],"changed":[]}}`, "")
	case 2:
		g.ev("request/header-delta", `{"config":{"provider":"q","model":"m3"}}`, "")
	default:
		if g.rng.Intn(2) == 0 {
			g.ev("request/header-delta", `{"messagePrefix":[]}`, "")
		} else {
			g.ev("request/header-delta", fmt.Sprintf(`{"messagePrefix":[{"role":"user","content":[{"type":"text","text":%s}]}]}`, g.text()), "")
		}
	}
}

// compact replaces a head span of the surface with a summary, the way
// the loop does (SPEC §9).
func (g *gen) compact(turn int) {
	n := 1 + g.rng.Intn(len(g.surface)-1)
	span := g.surface[:n]
	start := g.ev("compact/start", fmt.Sprintf(`{"turn":%d}`, turn), "")
	sum := g.ev("compact/summary", fmt.Sprintf(`{"summary":[{"type":"text","text":"sum"}],"shadowedRange":{"start":%d,"end":%d},"shadowedSeqs":[],"shadowedTokenCount":1,"model":"m"}`, span[0], span[n-1]), "")
	srcs := []string{fmt.Sprint(start), fmt.Sprint(sum)}
	for _, s := range span {
		srcs = append(srcs, fmt.Sprint(s))
	}
	s := g.ev("user/message", `{"content":[{"type":"text","text":"summary"}],"source":{"kind":"plugin","plugin":"compact"}}`,
		fmt.Sprintf(`"surfaceOp":{"op":"replace","start":%d,"end":%d},"sourceEventSeqs":[%s]`, span[0], span[n-1], strings.Join(srcs, ",")))
	g.surface = append([]int{s}, g.surface[n:]...)
	g.ev("compact/end", fmt.Sprintf(`{"turn":%d}`, turn), "")
}

func TestGenLogIsValid(t *testing.T) {
	for i := 0; i < 20; i++ {
		_, evs := genLog(rand.New(rand.NewSource(int64(i))), 300)
		if len(evs) < 299 {
			t.Fatalf("generated %d events", len(evs))
		}
	}
}
