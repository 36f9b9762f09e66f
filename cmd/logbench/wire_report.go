package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// wireSummary adds the wire's headline rows to the summary.
func (r *report) wireSummary(t *table) {
	w := r.wire
	if w == nil {
		return
	}
	for _, rr := range w.renders {
		if rr.requestBytes > 10<<10 {
			t.add(fmt.Sprintf("render a %s KB request, %s: render ÷ build it from the log", num(float64(rr.requestBytes)/1024), rr.wire),
				num(rr.render.Median/1e3)+" µs", num(rr.build.Median/1e3)+" µs", ratio(rr.ratio.Median))
		}
	}
	for _, name := range sortedKeys(w.linear) {
		pb := w.perByte[name]
		t.add("render time per request byte, large ÷ small request, "+name, num(pb[1])+" ns", num(pb[0])+" ns", ratio(w.linear[name].Median))
	}
	for _, s := range w.streams {
		t.add("stream translation, "+s.wire+" (CPU time)", num(s.cpuMBps.Median)+" MB/s", "50 MB/s", ratio(s.cpuMBps.Median/50))
	}
}

func (r *report) writeWire(b *strings.Builder) {
	w := r.wire
	if w == nil {
		return
	}
	b.WriteString("## The wire\n\n")
	b.WriteString("Render is `wire.Renderer.AppendBody` of a step's canonical request (docs/wire.md: the exact body a\n" +
		"provider sends; the buffer reused). Its baseline, build, is building that same request from the log:\n" +
		"`rebuild.Request` over the session's decoded events up to the step (the fold, the derived history,\n" +
		"the header in force, the canonical JSON), as replay does for one step. Assemble is only the last part\n" +
		"of build, `rebuild.AppendRequest` from messages already derived (copying their bytes), which is what\n" +
		"the incremental builder pays per step; render reads and re-encodes every message, so it is many times\n" +
		"that. The steps are those of a generated realistic session (no compaction) whose requests are closest\n" +
		"to 1 KB and 100 KB. Each round times build and render interleaved, then assemble and render, for " + dur(r.cfg.minTime) + " each.\n\n")
	t := newTable("renderer", "step", "request B", "body B", "events folded", "render µs", "build µs", "render ÷ build", "assemble µs", "render ÷ assemble")
	t.align[0] = false
	for _, rr := range w.renders {
		t.add(rr.wire, rr.step, group(int64(rr.requestBytes)), group(int64(rr.bodyBytes)), group(int64(rr.events)),
			num(rr.render.Median/1e3), num(rr.build.Median/1e3), ratioRange(rr.ratio), num(rr.assemble.Median/1e3), ratioRange(rr.vsAssemble))
	}
	t.write(b)
	for _, name := range sortedKeys(w.linear) {
		fmt.Fprintf(b, "Linearity, %s: render ns per request byte at the large request ÷ at the small one: **%s** (the two renders timed interleaved).\n", name, ratioRange(w.linear[name]))
	}
	b.WriteString("\nStream translation feeds a generated answer (reasoning, text and tool calls in small fragments, as\n" +
		"live models stream them; `internal/ssegen`) to a `wire.Translator` in 32 KB reads. Wall MB/s is taken\n" +
		"interleaved with its baseline, decoding every event's JSON data alone (`codec.FromJSON`), the floor any\n" +
		"translator pays; CPU MB/s is the translation's CPU time on a locked thread, which the load of other\n" +
		"processes does not inflate. The target is 50 MB/s.\n\n")
	t = newTable("renderer", "stream B", "chunks", "MB/s (wall)", "MB/s (CPU time)", "translate ÷ decode")
	t.align[0] = false
	for _, s := range w.streams {
		t.add(s.wire, group(int64(s.bytes)), group(int64(s.chunks)), num(s.wallMBps.Median), num(s.cpuMBps.Median), ratioRange(s.ratio))
	}
	t.write(b)
}

func sortedKeys(m map[string]stat) []string { return slices.Sorted(maps.Keys(m)) }
