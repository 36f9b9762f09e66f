package audit

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/sessionlog/sessionlog/codec"
)

// showAround is how much of a differing message the text shows before
// and after the first difference (missing and extra: from the start).
const (
	showBefore = 80
	showAfter  = 160
)

// excerpt is js from off-before to off+after, with an ellipsis where it
// was cut.
func excerpt(js []byte, off int) string {
	from, to := max(off-showBefore, 0), min(off+showAfter, len(js))
	if from > to {
		from = to
	}
	// Cut at character starts.
	for from > 0 && !utf8.RuneStart(js[from]) {
		from--
	}
	for to < len(js) && !utf8.RuneStart(js[to]) {
		to++
	}
	s := string(js[from:to])
	if from > 0 {
		s = "…" + s
	}
	if to < len(js) {
		s += "… (" + strconv.Itoa(len(js)) + " bytes)"
	}
	return s
}

func (p *StepPair) name() string {
	side := func(r Ref) string {
		if r == (Ref{}) {
			return "-"
		}
		return r.String()
	}
	return side(p.Transcript) + " | " + side(p.Wire)
}

// AppendText appends the comparison as logtool compare prints it: a
// line per step pair (transcript | wire), the differing messages under
// it by the wire's message index ([tN] for a message only the
// transcript has) with an excerpt of each version, then the totals.
func (c *Comparison) AppendText(b []byte) []byte {
	format := c.Format
	if format == "" {
		format = "imported"
	}
	t := &c.Totals
	b = fmt.Appendf(b, "compare %s (%s transcript) with %s (recorded)\n", c.Transcript, format, c.Wire)
	b = fmt.Appendf(b, "steps: %d in the transcript, %d recorded, %d paired\n", t.StepsTranscript, t.StepsWire, t.Paired)
	for i := range c.Pairs {
		p := &c.Pairs[i]
		b = fmt.Appendf(b, "step %s: ", p.name())
		switch {
		case p.Wire == (Ref{}):
			b = fmt.Appendf(b, "only in the transcript (%s)\n", Count(p.MessagesTranscript, "message", "messages"))
			continue
		case p.Transcript == (Ref{}):
			b = fmt.Appendf(b, "only recorded (%s)\n", Count(p.MessagesWire, "message", "messages"))
			continue
		}
		b = fmt.Appendf(b, "messages %d | %d", p.MessagesTranscript, p.MessagesWire)
		if len(p.Diffs) == 0 {
			b = append(b, ", identical"...)
		}
		b = append(b, "; system "+p.System...)
		if p.System == PartAltered {
			b = fmt.Appendf(b, " (from byte %d)", p.SystemOffset)
		}
		b = append(b, "; tools "+p.Tools...)
		if p.ToolsDetail != "" {
			b = append(b, " ("+p.ToolsDetail+")"...)
		}
		if p.ModelTranscript != p.ModelWire {
			b = fmt.Appendf(b, "; model %q | %q", p.ModelTranscript, p.ModelWire)
		}
		b = append(b, '\n')
		for _, d := range p.Diffs {
			switch d.Kind {
			case MessageAltered:
				b = fmt.Appendf(b, "  [%d] altered at %s (byte %d; transcript [%d])\n", d.Wire, pathText(d.Path), d.Offset, d.Transcript)
				b = fmt.Appendf(b, "    wire:       %s\n    transcript: %s\n", excerpt(d.WireJSON, d.Offset), excerpt(d.TranscriptJSON, d.Offset))
			case MessageMissing:
				b = fmt.Appendf(b, "  [%d] missing from the transcript\n    wire:       %s\n", d.Wire, excerpt(d.WireJSON, 0))
			default:
				b = fmt.Appendf(b, "  [t%d] extra: not in the wire's request\n    transcript: %s\n", d.Transcript, excerpt(d.TranscriptJSON, 0))
			}
		}
	}
	b = fmt.Appendf(b, "messages: %d in the recorded requests: %d identical, %d altered, %d missing from the transcript; %d extra in it\n",
		t.Messages, t.Identical, t.Altered, t.Missing, t.Extra)
	b = fmt.Appendf(b, "system prompt: compared in %d of %d paired steps (not recorded by the transcript in the others), differs in %d\n", t.SystemCompared, t.Paired, t.SystemAltered)
	b = fmt.Appendf(b, "tools: compared in %d of %d paired steps (not recorded by the transcript in the others), differ in %d\n", t.ToolsCompared, t.Paired, t.ToolsAltered)
	b = fmt.Appendf(b, "models differ in %d\n", t.ModelsAltered)
	return b
}

func pathText(p string) string {
	if p == "" {
		return "the message itself"
	}
	return p
}

// AppendJSON appends the comparison as one JSON object (logtool compare
// --json), keys in this order: {"transcript","wire","format","totals":
// {"stepsTranscript","stepsWire","paired","messages","identical",
// "altered","missing","extra","systemCompared","systemAltered",
// "toolsCompared","toolsAltered","modelsAltered"},"steps":[{"transcript":
// "T.S"|null,"wire":"T.S"|null,"messages":[T,W],"system"?,"systemOffset"?,
// "tools"?,"toolsDetail"?,"models"?:[T,W],"diffs":[{"kind","wire",
// "transcript","path"?,"offset"?,"wireMessage"?,"transcriptMessage"?}]}]},
// indexes -1 on the side that lacks a message, the messages as JSON
// values in normal form; the header parts and models are present when
// both sides have the step.
func (c *Comparison) AppendJSON(b []byte) []byte {
	str := func(s string) { b = codec.AppendJSONString(b, []byte(s)) }
	b = append(b, `{"transcript":`...)
	str(c.Transcript)
	b = append(b, `,"wire":`...)
	str(c.Wire)
	b = append(b, `,"format":`...)
	str(c.Format)
	t := &c.Totals
	b = fmt.Appendf(b, `,"totals":{"stepsTranscript":%d,"stepsWire":%d,"paired":%d,"messages":%d,"identical":%d,"altered":%d,"missing":%d,"extra":%d,`+
		`"systemCompared":%d,"systemAltered":%d,"toolsCompared":%d,"toolsAltered":%d,"modelsAltered":%d},"steps":[`,
		t.StepsTranscript, t.StepsWire, t.Paired, t.Messages, t.Identical, t.Altered, t.Missing, t.Extra,
		t.SystemCompared, t.SystemAltered, t.ToolsCompared, t.ToolsAltered, t.ModelsAltered)
	ref := func(r Ref) {
		if r == (Ref{}) {
			b = append(b, "null"...)
		} else {
			str(r.String())
		}
	}
	for i := range c.Pairs {
		p := &c.Pairs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"transcript":`...)
		ref(p.Transcript)
		b = append(b, `,"wire":`...)
		ref(p.Wire)
		b = fmt.Appendf(b, `,"messages":[%d,%d]`, p.MessagesTranscript, p.MessagesWire)
		if p.System != "" {
			b = append(b, `,"system":`...)
			str(p.System)
			if p.System == PartAltered {
				b = fmt.Appendf(b, `,"systemOffset":%d`, p.SystemOffset)
			}
			b = append(b, `,"tools":`...)
			str(p.Tools)
			if p.ToolsDetail != "" {
				b = append(b, `,"toolsDetail":`...)
				str(p.ToolsDetail)
			}
			b = append(b, `,"models":[`...)
			str(p.ModelTranscript)
			b = append(b, ',')
			str(p.ModelWire)
			b = append(b, ']')
		}
		b = append(b, `,"diffs":[`...)
		for j, d := range p.Diffs {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"kind":`...)
			str(d.Kind)
			b = fmt.Appendf(b, `,"wire":%d,"transcript":%d`, d.Wire, d.Transcript)
			if d.Kind == MessageAltered {
				b = append(b, `,"path":`...)
				str(d.Path)
				b = fmt.Appendf(b, `,"offset":%d`, d.Offset)
			}
			if d.WireJSON != nil {
				b = append(append(b, `,"wireMessage":`...), d.WireJSON...)
			}
			if d.TranscriptJSON != nil {
				b = append(append(b, `,"transcriptMessage":`...), d.TranscriptJSON...)
			}
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	return append(b, "]}"...)
}
