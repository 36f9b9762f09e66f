package audit

import (
	"context"
	"crypto/sha256"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/rebuild"
)

// A transcript set against the wire (logtool compare): the steps of a
// session imported from an agent's own transcript (docs/transcripts.md), each
// rebuilt to the request the transcript says the model saw, beside the
// steps of the session the recording gateway recorded of the same
// conversation (docs/gateway.md), each rebuilt from the bytes the model
// received. Steps pair up in order. Within a pair, the messages are
// compared in a normal form (role and content; tool-call arguments as
// canonical JSON; provenance, which says where an answer came from, left
// out), aligned so that a message one side lacks shows as such:
//
//   - missing: the wire has it, the transcript does not;
//   - extra: the transcript has it, the wire does not;
//   - altered: both have a message there, and they differ (the first
//     difference's JSON path and byte offset, and both versions);
//
// each by its index in the wire's request (for extra, the transcript's).
// The system prompt and tools are compared where the transcript records
// them ("not recorded" where it does not and the wire has them; both
// absent is identical), and the model always.

// How a header part of a step pair compares.
const (
	PartIdentical   = "identical"
	PartAltered     = "altered"
	PartNotRecorded = "not recorded" // the transcript does not record it
	PartExtra       = "extra"        // the transcript has it, the wire does not
)

// How a message of a step pair differs.
const (
	MessageMissing = "missing"
	MessageAltered = "altered"
	MessageExtra   = "extra"
)

// MessageDiff is one message that differs between a step's two requests.
type MessageDiff struct {
	Kind string // MessageMissing, MessageAltered, MessageExtra
	// Wire and Transcript are the message's index in each request's
	// messages, -1 on the side that lacks it.
	Wire, Transcript int
	// Path and Offset locate the first difference of an altered message
	// (in the wire's version).
	Path   string
	Offset int
	// WireJSON and TranscriptJSON are the two versions, in normal form
	// (nil on the side that lacks it).
	WireJSON, TranscriptJSON []byte
}

// StepPair is one step of each session, compared.
type StepPair struct {
	// Transcript and Wire name the steps; a zero Ref on the side that has
	// fewer steps.
	Transcript, Wire Ref
	// System and Tools are Part* values; SystemOffset is the first byte
	// at which the system prompts differ, ToolsDetail what differs (as
	// diff says it: added, removed, changed, reordered).
	System, Tools string
	SystemOffset  int
	ToolsDetail   string
	// ModelTranscript and ModelWire are the models the two headers name.
	ModelTranscript, ModelWire string
	// Messages counts each request's messages; Diffs are the messages
	// that differ, in the wire's order.
	MessagesTranscript, MessagesWire int
	Diffs                            []MessageDiff
}

// Comparison is the whole of logtool compare.
type Comparison struct {
	Transcript, Wire string // the two session ids
	// Format is the transcript's format (the header's config.source).
	Format string
	Pairs  []StepPair
	Totals CompareTotals
}

// CompareTotals sums a comparison.
type CompareTotals struct {
	// StepsTranscript and StepsWire count each session's steps; Paired
	// the pairs with a step on both sides.
	StepsTranscript, StepsWire, Paired int
	// Messages counts the wire's messages in the pairs, Identical those
	// the transcript has the same; Missing, Altered and Extra the diffs.
	Messages, Identical, Missing, Altered, Extra int
	// SystemCompared and ToolsCompared count the pairs in which the
	// system prompt (tools) could be compared: the transcript records it,
	// or neither side has one; SystemAltered and ToolsAltered those in
	// which they differ.
	SystemCompared, SystemAltered, ToolsCompared, ToolsAltered int
	// ModelsAltered counts the pairs whose models differ.
	ModelsAltered int
}

// stepData is what a comparison keeps of one rebuilt step.
type stepData struct {
	ref    Ref
	null   bool
	system string
	tools  []header.Tool
	model  string
	source string
	msgs   []digestKey
}

type digestKey [32]byte

// stepsOf rebuilds every step of a session and keeps its header parts
// and messages (normal form, each kept once in msgs by its digest).
func stepsOf(ctx context.Context, st Store, head eventlog.Head, msgs map[digestKey][]byte) ([]stepData, error) {
	var out []stepData
	err := Steps(ctx, st, head, rebuild.BuilderOptions{Requests: true}, nil, func(s rebuild.Step) error {
		d := stepData{ref: Ref{s.Turn, s.Step}, null: s.Null}
		if !s.Null {
			d.system, d.model = s.Header.System, s.Header.Config.Model
			d.tools = append([]header.Tool(nil), s.Header.Tools...)
			d.source = LookupString(s.Header.Config.Raw, "source")
			for _, m := range s.History {
				n, err := normalMessage(m)
				if err != nil {
					return errors.Wrapf(err, "step %s", errors.Safe(d.ref.String()))
				}
				k := digestKey(sha256.Sum256(n))
				if _, ok := msgs[k]; !ok {
					msgs[k] = n
				}
				d.msgs = append(d.msgs, k)
			}
		}
		out = append(out, d)
		return nil
	})
	return out, err
}

// normalMessage is a message's JSON in the normal form compare reads:
// {role, content}, a tool-call block's arguments as canonical JSON.
func normalMessage(js []byte) ([]byte, error) {
	mp, err := codec.FromJSON(nil, js, codec.Limits{})
	if err != nil {
		return nil, errors.Wrap(err, "audit: a rebuilt message")
	}
	role, _, _ := Lookup(mp, "role")
	content, _, _ := Lookup(mp, "content")
	var blocks [][]byte
	r := codec.NewReader(content)
	if t, err := r.Next(); err == nil && t.Kind == codec.KindArray {
		for i := 0; i < t.N; i++ {
			b, err := r.Value(1024)
			if err != nil {
				return nil, errors.Wrap(err, "audit: a rebuilt message's content")
			}
			blocks = append(blocks, normalBlock(b))
		}
	}
	var o codec.Object
	o.Value("role", role).Array("content", blocks...)
	out, _, err := codec.ToJSON(nil, o.Bytes())
	return out, err
}

// normalBlock is a content block with a tool call's arguments in
// canonical JSON (arguments that are not JSON are left as they are).
func normalBlock(b []byte) []byte {
	if LookupString(b, "type") != codec.BlockToolCall {
		return b
	}
	args := LookupString(b, "arguments")
	mp, err := codec.FromJSON(nil, []byte(args), codec.Limits{})
	if err != nil {
		return b
	}
	canon, _, err := codec.ToJSON(nil, mp)
	if err != nil {
		return b
	}
	var o codec.Object
	_ = EachField(b, func(k string, v []byte) error {
		if k == "arguments" {
			o.Str(k, string(canon))
		} else {
			o.Value(k, v)
		}
		return nil
	})
	return o.Bytes()
}

// CompareTranscript compares the session of tr (imported from an agent's
// transcript) with the session of wire (recorded by the gateway) step by
// step, in order. A step with no request (no header in force) compares
// as a request of no messages.
func CompareTranscript(ctx context.Context, st Store, tr, wire eventlog.Head) (*Comparison, error) {
	msgs := map[digestKey][]byte{}
	ts, err := stepsOf(ctx, st, tr, msgs)
	if err != nil {
		return nil, err
	}
	ws, err := stepsOf(ctx, st, wire, msgs)
	if err != nil {
		return nil, err
	}
	c := &Comparison{Transcript: tr.Header.ID, Wire: wire.Header.ID}
	for _, s := range ts {
		if s.source != "" && s.source != "gateway" {
			c.Format = s.source
			break
		}
	}
	tot := &c.Totals
	tot.StepsTranscript, tot.StepsWire = len(ts), len(ws)
	for i := 0; i < max(len(ts), len(ws)); i++ {
		var p StepPair
		var a, b *stepData
		if i < len(ts) {
			a = &ts[i]
			p.Transcript = a.ref
		}
		if i < len(ws) {
			b = &ws[i]
			p.Wire = b.ref
		}
		if a != nil && b != nil {
			tot.Paired++
			comparePair(&p, a, b, msgs, tot)
		} else if a != nil {
			p.MessagesTranscript = len(a.msgs)
		} else {
			p.MessagesWire = len(b.msgs)
		}
		c.Pairs = append(c.Pairs, p)
	}
	return c, nil
}

func comparePair(p *StepPair, a, b *stepData, msgs map[digestKey][]byte, tot *CompareTotals) {
	p.ModelTranscript, p.ModelWire = a.model, b.model
	if a.model != b.model {
		tot.ModelsAltered++
	}
	switch {
	case a.system == b.system:
		p.System = PartIdentical
	case a.system == "":
		p.System = PartNotRecorded
	case b.system == "":
		p.System = PartExtra
	default:
		p.System = PartAltered
		for p.SystemOffset < len(a.system) && p.SystemOffset < len(b.system) && a.system[p.SystemOffset] == b.system[p.SystemOffset] {
			p.SystemOffset++
		}
	}
	if p.System != PartNotRecorded {
		tot.SystemCompared++
		if p.System != PartIdentical {
			tot.SystemAltered++
		}
	}
	switch d := toolsDiff(b.tools, a.tools); {
	case d == "":
		p.Tools = PartIdentical
	case len(a.tools) == 0:
		p.Tools = PartNotRecorded
	case len(b.tools) == 0:
		p.Tools = PartExtra
	default:
		p.Tools, p.ToolsDetail = PartAltered, d
	}
	if p.Tools != PartNotRecorded {
		tot.ToolsCompared++
		if p.Tools != PartIdentical {
			tot.ToolsAltered++
		}
	}
	p.MessagesTranscript, p.MessagesWire = len(a.msgs), len(b.msgs)
	tot.Messages += len(b.msgs)
	for _, op := range align(a.msgs, b.msgs) {
		switch {
		case op.t >= 0 && op.w >= 0 && a.msgs[op.t] == b.msgs[op.w]:
			tot.Identical++
		case op.t >= 0 && op.w >= 0:
			x, y := msgs[a.msgs[op.t]], msgs[b.msgs[op.w]]
			off := rebuild.FirstDifference(y, x)
			p.Diffs = append(p.Diffs, MessageDiff{Kind: MessageAltered, Wire: op.w, Transcript: op.t,
				Path: rebuild.PathAt(y, off), Offset: off, WireJSON: y, TranscriptJSON: x})
			tot.Altered++
		case op.w >= 0:
			p.Diffs = append(p.Diffs, MessageDiff{Kind: MessageMissing, Wire: op.w, Transcript: -1, WireJSON: msgs[b.msgs[op.w]]})
			tot.Missing++
		default:
			p.Diffs = append(p.Diffs, MessageDiff{Kind: MessageExtra, Wire: -1, Transcript: op.t, TranscriptJSON: msgs[a.msgs[op.t]]})
			tot.Extra++
		}
	}
}

// alignOp pairs message t of the transcript with message w of the wire
// (-1: none on that side).
type alignOp struct{ t, w int }

// maxAlign bounds the messages between the common prefix and suffix that
// align matches by longest common subsequence; past it they pair up by
// position.
const maxAlign = 2000

// align pairs the messages of two requests: equal ones by their longest
// common subsequence (after the common prefix and suffix), and between
// two matches, the unmatched ones by position (altered), the rest of the
// longer run missing or extra.
func align(t, w []digestKey) []alignOp {
	var ops []alignOp
	p := 0
	for p < len(t) && p < len(w) && t[p] == w[p] {
		ops = append(ops, alignOp{p, p})
		p++
	}
	s := 0
	for s < len(t)-p && s < len(w)-p && t[len(t)-1-s] == w[len(w)-1-s] {
		s++
	}
	mt, mw := t[p:len(t)-s], w[p:len(w)-s]
	var matches []alignOp // in mt, mw
	if len(mt) > 0 && len(mw) > 0 && len(mt) <= maxAlign && len(mw) <= maxAlign {
		matches = lcs(mt, mw)
	}
	i, j := 0, 0
	gap := func(ti, wj int) {
		for i < ti && j < wj {
			ops = append(ops, alignOp{p + i, p + j})
			i++
			j++
		}
		for ; j < wj; j++ {
			ops = append(ops, alignOp{-1, p + j})
		}
		for ; i < ti; i++ {
			ops = append(ops, alignOp{p + i, -1})
		}
	}
	for _, m := range matches {
		gap(m.t, m.w)
		ops = append(ops, alignOp{p + m.t, p + m.w})
		i, j = m.t+1, m.w+1
	}
	gap(len(mt), len(mw))
	for k := 0; k < s; k++ {
		ops = append(ops, alignOp{len(t) - s + k, len(w) - s + k})
	}
	return ops
}

// lcs returns the pairs of a longest common subsequence of a and b, in
// order.
func lcs(a, b []digestKey) []alignOp {
	n, m := len(a), len(b)
	// l[i][j] is the length of an LCS of a[i:] and b[j:].
	l := make([][]int32, n+1)
	for i := range l {
		l[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	var out []alignOp
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case a[i] == b[j]:
			out = append(out, alignOp{i, j})
			i++
			j++
		case l[i+1][j] >= l[i][j+1]:
			i++
		default:
			j++
		}
	}
	return out
}
