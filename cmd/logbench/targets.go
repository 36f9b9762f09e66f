package main

import (
	"fmt"
	"strings"
)

// writeTargets writes the write path's targets (issue 12) against this
// run's figures, each with its verdict; a figure the run did not measure
// says so.
func (r *report) writeTargets(b *strings.Builder) {
	b.WriteString("## Targets of the write path\n\n")
	b.WriteString("The targets of the write-ahead log and compression work (issue 12), against this run's figures\n" +
		"(medians of per-round ratios; the sections below give their ranges).\n\n")
	t := newTable("measure", "target", "this run", "met")
	verdict := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "**no**"
	}
	missing := func(measure, target string) { t.add(measure, target, "not measured", "–") }
	durable := func(name, measure string, target float64) {
		for _, d := range r.durable {
			if d.mode.name == name {
				t.add(measure, fmt.Sprintf("≥ %.1f×", target), ratio(d.ratio.Median), verdict(d.ratio.Median >= target))
				return
			}
		}
		missing(measure, fmt.Sprintf("≥ %.1f×", target))
	}
	durable(durableModes[0].name, "one session, one event per commit, against JSONL+fsync", 0.9)
	durable(durableModes[2].name, "64 sessions, one event per commit, against JSONL+fsync", 10)
	space := func(match func(spaceResult) bool, measure string) {
		for _, s := range r.space {
			if match(s) {
				v := s.file / s.jsonl
				t.add(measure, "≤ 0.6×", ratio(v), verdict(v <= 0.6))
				return
			}
		}
		missing(measure, "≤ 0.6×")
	}
	space(func(s spaceResult) bool { return strings.HasPrefix(s.data, "generated session") && s.events >= 100_000 },
		"file ÷ JSONL, 100,000-event generated session")
	space(func(s spaceResult) bool { return strings.HasPrefix(s.data, "DSH corpus") },
		"file ÷ JSONL, the whole DSH corpus imported into one store")
	// The slower of the two ways a reader decodes: one record (the
	// unapplied tail, stores before format 3, PostgreSQL), or from a pack.
	decoded := false
	worst := 0.0
	for _, cr := range r.codec {
		if cr.event == "assistant/message" && strings.HasPrefix(cr.op, "decode") && (!decoded || cr.ratio.Median < worst) {
			worst, decoded = cr.ratio.Median, true
		}
	}
	if decoded {
		t.add("decode an assistant/message (a record, or from a pack: the slower), against encoding/json", "≥ 3×", ratio(worst), verdict(worst >= 3))
	} else {
		missing("decode an assistant/message, against encoding/json", "≥ 3×")
	}
	r.sealedTargetRow(t, verdict, missing)
	if len(r.verify) > 1 {
		lo, hi := r.verify[0], r.verify[len(r.verify)-1]
		t.add(fmt.Sprintf("verify, %s ÷ %s events, per event", group(hi.events), group(lo.events)), "≤ 1.2",
			ratio(r.scale.Median), verdict(r.scale.Median <= 1.2))
	} else {
		missing("verify, largest ÷ smallest session, per event", "≤ 1.2")
	}
	if u := r.uiMem; u != nil && len(u.pages) > 0 {
		w := u.worst()
		t.add(fmt.Sprintf("logtool serve, %d clients at once on its worst page (%s) of a store with a %s MiB event: peak resident (issue 19)",
			u.clients, w.page, mib(float64(u.event))), "< "+mib(uiMemLimit)+" MiB", mib(float64(w.peak))+" MiB", verdict(w.peak < uiMemLimit))
	} else {
		missing("logtool serve, 20 clients at once on its worst page of a store with a 50 MiB event: peak resident (issue 19)", "< "+mib(uiMemLimit)+" MiB")
	}
	if len(r.streamMem) == 0 {
		missing("resident memory ÷ bytes streamed, a 200 MiB answer through provider and loop (issue 19)", "≤ 1.5×")
	}
	for _, s := range r.streamMem {
		t.add("resident memory ÷ bytes streamed, a "+mib(float64(s.bytes))+" MiB answer through provider and loop, "+s.wire+" (issue 19)",
			"≤ 1.5×", ratio(s.growth()), verdict(s.growth() <= 1.5))
	}
	if len(r.gateway) == 0 {
		missing(fmt.Sprintf("stored ÷ (sent + answered), a %d-request session through the gateway shaped like Claude Code's, and like Codex's (issue 20)", gatewayRequests),
			fmt.Sprintf("≤ %.2f", gatewayTarget))
	}
	for _, g := range r.gateway {
		t.add(fmt.Sprintf("stored ÷ (sent + answered), a %d-request session through the gateway shaped like %s's (issue 20)", g.requests, g.agent),
			fmt.Sprintf("≤ %.2f", gatewayTarget), fmt.Sprintf("%.4f", g.ratio()), verdict(g.ratio() <= gatewayTarget))
	}
	r.gatewayTargetRows(t, verdict, missing)
	r.redactTargetRows(t, verdict, missing)
	t.write(b)
	if len(r.durable) > 0 || r.walOpen != nil {
		b.WriteString("Also asked for: Append latency")
		for _, d := range r.durable {
			if d.mode.perCommit == 1 {
				fmt.Fprintf(b, "; %s: p50 %s, p99 %s", d.mode.name, dur(d.oursP50), dur(d.oursP99))
			}
		}
		if w := r.walOpen; w != nil {
			fmt.Fprintf(b, "; Open of a store with %s MiB of write-ahead log to apply: %s", mib(float64(w.walBytes)), dur(secs(w.open.Median)))
		}
		b.WriteString(".\n\n")
	}
}
