package header

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
)

// gen builds random headers as JSON text, so that every value under test
// went through Decode like a stored one.
type gen struct{ r *rand.Rand }

var (
	genLines = []string{"alpha", "beta", "gamma", "", "x y", "<&>", "\u2028", "tab\there", "é"}
	genNames = []string{"read", "write", "bash", "grep", "ls", "edit", "web", "todo"}
	genDescs = []string{"Reads a file.", "Writes.", "", "Runs \"bash\"."}
	genParms = []string{
		`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`,
		`{"type":"object","required":["path"],"properties":{"path":{"type":"string"}}}`,
		`{"type":"object","properties":{}}`,
		`{"z":1,"a":[1,2.5,-3e-7]}`,
	}
	genMsgs = []string{
		`{"role":"user","content":[{"type":"text","text":"<system-reminder>\nctx\n</system-reminder>"}]}`,
		`{"role":"assistant","content":[],"provenance":{"provider":"p","model":"m"}}`,
		`{"content":[{"type":"image","data":"AAAA"}],"role":"user"}`,
	}
)

func (g gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g gen) system() []string {
	n := g.r.IntN(9)
	ls := make([]string, n)
	for i := range ls {
		ls[i] = g.pick(genLines)
	}
	return ls
}

type genTool struct{ name, desc, params string }

func (t genTool) json() string {
	var b []byte
	b = append(b, `{"name":`...)
	b = codec.AppendJSONString(b, []byte(t.name))
	b = append(b, `,"description":`...)
	b = codec.AppendJSONString(b, []byte(t.desc))
	b = append(b, `,"parameters":`...)
	b = append(b, t.params...)
	return string(append(b, '}'))
}

func (g gen) tool(name string) genTool {
	return genTool{name: name, desc: g.pick(genDescs), params: g.pick(genParms)}
}

// tools returns a list with distinct names.
func (g gen) tools() []genTool {
	names := append([]string(nil), genNames...)
	g.r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	ts := make([]genTool, g.r.IntN(len(names)+1))
	for i := range ts {
		ts[i] = g.tool(names[i])
	}
	return ts
}

func (g gen) config() string {
	var parts []string
	if g.r.IntN(2) == 0 {
		parts = append(parts, `"provider":"`+g.pick([]string{"deepseek", "", "openai"})+`"`)
	}
	parts = append(parts, `"model":"`+g.pick([]string{"m1", "m2"})+`"`)
	if g.r.IntN(2) == 0 {
		parts = append(parts, `"temperature":`+g.pick([]string{"0", "0.5", "1", "0.7"}))
	}
	if g.r.IntN(2) == 0 {
		parts = append(parts, `"maxTokens":`+g.pick([]string{"1", "4096"}))
	}
	if g.r.IntN(2) == 0 {
		parts = append(parts, `"stop":`+g.pick([]string{`[]`, `["a"]`, `["a","b"]`, `["b","a"]`}))
	}
	if g.r.IntN(4) == 0 {
		parts = append(parts, `"reasoningEffort":"high"`)
	}
	g.r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	return "{" + strings.Join(parts, ",") + "}"
}

func (g gen) prefix() []string {
	ms := make([]string, g.r.IntN(3))
	for i := range ms {
		ms[i] = g.pick(genMsgs)
	}
	return ms
}

type genHeader struct {
	config string
	system []string
	tools  []genTool
	prefix []string
}

func (h genHeader) json() string {
	var b strings.Builder
	b.WriteString(`{"config":` + h.config)
	sys := codec.AppendJSONString(nil, []byte(strings.Join(h.system, "\n")))
	b.WriteString(`,"system":` + string(sys))
	b.WriteString(`,"tools":[`)
	for i, t := range h.tools {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(t.json())
	}
	b.WriteString(`],"messagePrefix":[` + strings.Join(h.prefix, ",") + `]}`)
	return b.String()
}

func (g gen) header() genHeader {
	return genHeader{config: g.config(), system: g.system(), tools: g.tools(), prefix: g.prefix()}
}

// mutate returns a changed copy of h, and whether the change is one a
// delta can express (no reorder, no insertion before the end, no duplicate
// names).
func (g gen) mutate(h genHeader) (genHeader, bool) {
	n := genHeader{config: h.config, system: h.system, tools: h.tools, prefix: h.prefix}
	expressible := true
	if g.r.IntN(3) == 0 {
		n.config = g.config()
	}
	switch g.r.IntN(4) {
	case 0:
		n.system = g.system()
	case 1:
		ls := append([]string(nil), h.system...)
		for k := g.r.IntN(3); k >= 0; k-- {
			i := g.r.IntN(len(ls) + 1)
			switch {
			case g.r.IntN(2) == 0 || len(ls) == 0:
				ls = append(ls[:i], append([]string{g.pick(genLines)}, ls[i:]...)...)
			case i < len(ls):
				ls = append(ls[:i], ls[i+1:]...)
			}
		}
		n.system = ls
	}
	if g.r.IntN(3) == 0 {
		n.prefix = g.prefix()
	}
	ts := append([]genTool(nil), h.tools...)
	for k := g.r.IntN(4); k > 0; k-- {
		switch op := g.r.IntN(6); {
		case op == 0 && len(ts) > 0: // remove
			i := g.r.IntN(len(ts))
			ts = append(ts[:i], ts[i+1:]...)
		case op == 1 && len(ts) > 0: // change in place
			i := g.r.IntN(len(ts))
			ts[i] = g.tool(ts[i].name)
		case op == 2: // append a new name at the end
			if name, ok := g.unused(ts, h.tools); ok {
				ts = append(ts, g.tool(name))
			}
		case op == 3 && len(ts) > 1: // swap: a reorder
			i, j := g.r.IntN(len(ts)), g.r.IntN(len(ts))
			if i != j && ts[i].json() != ts[j].json() {
				expressible = false
			}
			ts[i], ts[j] = ts[j], ts[i]
		case op == 4 && len(ts) > 0: // insert a new name before the end
			if name, ok := g.unused(ts, h.tools); ok {
				i := g.r.IntN(len(ts))
				ts = append(ts[:i], append([]genTool{g.tool(name)}, ts[i:]...)...)
				expressible = false
			}
		case op == 5 && len(ts) > 0: // duplicate a name at the end
			ts = append(ts, g.tool(ts[g.r.IntN(len(ts))].name))
			expressible = false
		}
	}
	n.tools = ts
	return n, expressible
}

// unused picks a name in neither list (a name prev had would be a change,
// not an addition).
func (g gen) unused(ts, prev []genTool) (string, bool) {
	used := map[string]bool{}
	for _, t := range append(append([]genTool(nil), ts...), prev...) {
		used[t.name] = true
	}
	for _, i := range g.r.Perm(len(genNames)) {
		if !used[genNames[i]] {
			return genNames[i], true
		}
	}
	return "", false
}

func mustDecode(t testing.TB, text string) Snapshot {
	t.Helper()
	mp, err := codec.FromJSON(nil, []byte(text), codec.Limits{})
	if err != nil {
		t.Fatalf("FromJSON(%s) = %v", text, err)
	}
	s, err := Decode(mp)
	if err != nil {
		t.Fatalf("Decode(%s) = %v", text, err)
	}
	return s
}

// TestDiffApplyProperty checks, over random header pairs: Decode(Encode(s))
// equals s; when Diff says ok, Apply reproduces next, also through the
// delta's stored form; Diff says ok for every change a delta can express;
// and neither function modifies its inputs.
func TestDiffApplyProperty(t *testing.T) {
	g := gen{r: rand.New(rand.NewPCG(1, 2))}
	var oks, fallbacks int
	for i := 0; i < 5000; i++ {
		ph := g.header()
		nh, expressible := g.mutate(ph)
		prev, next := mustDecode(t, ph.json()), mustDecode(t, nh.json())
		checkSnapshotRoundTrip(t, prev)
		checkSnapshotRoundTrip(t, next)
		pb, nb := prev.Encode(), next.Encode()

		d, ok := Diff(prev, next)
		if ok {
			oks++
		} else {
			fallbacks++
		}
		if !bytes.Equal(pb, prev.Encode()) || !bytes.Equal(nb, next.Encode()) {
			t.Fatalf("case %d: Diff modified its inputs", i)
		}
		got := Apply(prev, d)
		if !bytes.Equal(pb, prev.Encode()) {
			t.Fatalf("case %d: Apply modified its input", i)
		}
		if ok != got.Equal(next) {
			t.Fatalf("case %d: Diff ok = %v, Apply(prev, d).Equal(next) = %v", i, ok, !ok)
		}
		if expressible && !ok {
			t.Fatalf("case %d: Diff(%s, %s) = fallback for an expressible change",
				i, ph.json(), nh.json())
		}
		if prev.Equal(next) && (!ok || !d.Empty()) {
			t.Fatalf("case %d: equal headers gave ok=%v, delta %s", i, ok, d.Encode())
		}
		enc := d.Encode()
		back, err := DecodeDelta(enc)
		if err != nil {
			t.Fatalf("case %d: DecodeDelta(Encode(d)) = %v", i, err)
		}
		if !bytes.Equal(back.Encode(), enc) {
			t.Fatalf("case %d: delta round trip changed bytes", i)
		}
		if ok && !Apply(prev, back).Equal(next) {
			t.Fatalf("case %d: the stored delta does not reproduce next", i)
		}
	}
	if oks == 0 || fallbacks == 0 {
		t.Fatalf("generator covers too little: %d ok, %d fallback", oks, fallbacks)
	}
	t.Logf("%d ok, %d fallback", oks, fallbacks)
}

// jsSlice is Array.prototype.slice(start, end) written as the ECMAScript
// specification states it, over doubles.
func jsSlice(a []string, start, end float64) []string {
	n := float64(len(a))
	rel := func(x float64) float64 {
		if x < 0 {
			return math.Max(n+x, 0)
		}
		return math.Min(x, n)
	}
	from, to := rel(start), rel(end)
	if from >= to {
		return nil
	}
	return a[int(from):int(to)]
}

// TestApplySystemSlice compares Apply's system rule with a direct
// transcription of the ECMAScript slice algorithm, for counts from small
// to the extremes of int64.
func TestApplySystemSlice(t *testing.T) {
	g := gen{r: rand.New(rand.NewPCG(3, 4))}
	counts := []int64{math.MinInt64, math.MinInt64 + 1, -(1 << 53), -100, -1, 0, 1, 2, 3, 100, 1 << 53, math.MaxInt64}
	count := func() int64 {
		if g.r.IntN(2) == 0 {
			return counts[g.r.IntN(len(counts))]
		}
		return int64(g.r.IntN(21) - 10)
	}
	for i := 0; i < 20000; i++ {
		ls := g.system()
		sd := SystemDelta{KeepStart: count(), KeepEnd: count()}
		for k := g.r.IntN(3); k > 0; k-- {
			sd.Insert = append(sd.Insert, g.pick(genLines))
		}
		prev := strings.Join(ls, "\n")
		if prev == "" {
			ls = nil // "" is absent: zero lines
		}
		n := float64(len(ls))
		var want []string
		want = append(want, jsSlice(ls, 0, float64(sd.KeepStart))...)
		want = append(want, sd.Insert...)
		want = append(want, jsSlice(ls, n-float64(sd.KeepEnd), n)...)
		wantS := strings.Join(want, "\n")

		got := Apply(Snapshot{Config: Config{Model: "m"}, System: prev}, Delta{System: &sd})
		if got.System != wantS {
			t.Fatalf("Apply(%q, %+v).System = %q, want %q", prev, sd, got.System, wantS)
		}
	}
}
