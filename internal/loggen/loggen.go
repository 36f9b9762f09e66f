package loggen

import (
	"fmt"
	"math/rand"
	"strings"

	"github.com/sessionlog/sessionlog/codec"
)

// Options shape a generated session.
type Options struct {
	// Events is the number of events to generate (at least; the last turn
	// is completed).
	Events int
	// CompactEvery compacts the surface head about every that many events;
	// 0 compacts after one turn in four.
	CompactEvery int
	// Realistic makes steps stream like a live model (a dozen chunks, a
	// paragraph of text per reply, longer tool results), for benchmarks.
	Realistic bool
}

// Generate writes a random valid session, line by line (the session
// header line first, then one event per line, each without newline): turns
// of steps with chunks, assistant messages with tool calls and results,
// context and steering messages, header snapshots and deltas (system,
// tools, config, prefix), injections after step/start, steps without
// chunks, steps before any header, and compaction replaces over the
// surface head. The same seed and options give the same lines.
func Generate(seed int64, o Options, emit func(line []byte) error) error {
	g := &gen{rng: rand.New(rand.NewSource(seed)), o: o, emit: emit}
	g.line(`{"type":"session","version":0,"id":"gen-%d","createdAt":1}`, seed)
	for turn := 1; g.err == nil && g.next < int64(o.Events); turn++ {
		g.turn(turn)
	}
	return g.err
}

// Session generates a session and decodes it.
func Session(seed int64, o Options) (codec.SessionHeader, []codec.Event, error) {
	var h codec.SessionHeader
	var evs []codec.Event
	first := true
	err := Generate(seed, o, func(line []byte) error {
		if first {
			first = false
			var err error
			h, err = codec.ParseSessionHeader(line, codec.Limits{})
			return err
		}
		ev, err := codec.ParseEvent(line, codec.Limits{})
		if err != nil {
			return fmt.Errorf("loggen: line %d: %w", len(evs)+2, err)
		}
		evs = append(evs, ev)
		return nil
	})
	return h, evs, err
}

type gen struct {
	rng         *rand.Rand
	o           Options
	emit        func([]byte) error
	err         error
	next        int64 // seq of the next event; -1 before the header line
	started     bool
	surface     []int
	headers     int
	system      []string
	lastCompact int64
}

func (g *gen) seq() int { return int(g.next) }

// line emits a line; %S in format is replaced by the seq.
func (g *gen) line(format string, args ...interface{}) int {
	s := g.seq()
	l := fmt.Sprintf(format, args...)
	l = strings.ReplaceAll(l, "%S", fmt.Sprint(s))
	if g.err == nil {
		g.err = g.emit([]byte(l))
	}
	if !g.started {
		g.started = true // the header line has no seq
		return -1
	}
	g.next++
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
	if g.o.Realistic {
		n = 20 + g.rng.Intn(60)
	}
	var b []string
	for i := 0; i < n; i++ {
		b = append(b, words[g.rng.Intn(len(words))])
	}
	return string(codec.AppendJSONString(nil, []byte(strings.Join(b, " "))))
}

// short is a chunk's text: a word or two.
func (g *gen) short() string {
	o := g.o
	g.o.Realistic = false
	defer func() { g.o = o }()
	return g.text()
}

func (g *gen) turn(turn int) {
	g.ev("turn/start", fmt.Sprintf(`{"turn":%d,"trigger":{"kind":"message","source":{"kind":"user"}}}`, turn), "")
	g.appendSurface("user/message", fmt.Sprintf(`{"content":[{"type":"text","text":%s}],"source":{"kind":"user"}}`, g.text()))
	steps := 1 + g.rng.Intn(3)
	for step := 1; step <= steps; step++ {
		g.step(turn, step)
	}
	if g.wantCompact() {
		g.compact(turn)
		g.lastCompact = g.next
	}
	g.ev("turn/end", fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, turn), "")
}

func (g *gen) wantCompact() bool {
	if len(g.surface) <= 3 {
		return false
	}
	if g.o.CompactEvery > 0 {
		return g.next-g.lastCompact >= int64(g.o.CompactEvery)
	}
	return g.rng.Intn(4) == 0
}

func (g *gen) step(turn, step int) {
	if g.rng.Intn(5) == 0 {
		g.appendSurface("steering/message", fmt.Sprintf(`{"turn":%d,"content":[{"type":"text","text":%s}],"source":{"kind":"user"}}`, turn, g.text()))
	}
	g.ev("step/start", fmt.Sprintf(`{"turn":%d,"step":%d}`, turn, step), "")
	if g.headers == 0 && g.rng.Intn(3) == 0 {
		// A step before any header: its request is null.
	} else if g.headers == 0 || g.rng.Intn(g.headerOdds()) == 0 {
		g.header()
	}
	if g.rng.Intn(6) == 0 {
		g.appendSurface("context/message", fmt.Sprintf(`{"content":[{"type":"text","text":%s}],"source":{"kind":"plugin","plugin":"x"}}`, g.text()))
	}
	if g.rng.Intn(8) == 0 {
		g.ev("step/end", fmt.Sprintf(`{"turn":%d,"step":%d}`, turn, step), "")
		return
	}
	chunks := 1 + g.rng.Intn(3)
	if g.o.Realistic {
		chunks = 8 + g.rng.Intn(12)
	}
	for i := 0; i < chunks; i++ {
		g.ev("assistant/chunk", fmt.Sprintf(`{"turn":%d,"step":%d,"chunk":{"type":"text-delta","index":0,"text":%s}}`, turn, step, g.short()), "")
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
	if g.o.Realistic || g.rng.Intn(2) == 0 {
		config = `{"provider":"p","model":"m2","temperature":0.2,"maxTokens":100,"stop":[]}`
	}
	prefix := ""
	if g.o.Realistic {
		prefix = `,"messagePrefix":[{"role":"user","content":[{"type":"text","text":"The workspace instructions."}]}]`
	} else if g.rng.Intn(3) == 0 {
		prefix = fmt.Sprintf(`,"messagePrefix":[{"role":"user","content":[{"type":"text","text":%s}]}]`, g.text())
	}
	g.ev("request/header", fmt.Sprintf(`{"header":{"config":%s,"system":%q,"tools":[{"name":"read","description":"d","parameters":{"type":"object","b":1,"a":2}}]%s},"reason":%q}`,
		config, strings.Join(g.system, "\n"), prefix, reason), "")
	g.headers++
}

// headerOdds is one in how many steps writes a header event: often in
// tests, rarely (as live hosts do) in realistic sessions.
func (g *gen) headerOdds() int {
	if g.o.Realistic {
		return 40
	}
	return 3
}

func (g *gen) delta() {
	kinds := 4
	if g.o.Realistic {
		kinds = 2 // system and tools change; config and prefix do not
	}
	switch g.rng.Intn(kinds) {
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
// the loop does (docs/rules.md#compaction).
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
