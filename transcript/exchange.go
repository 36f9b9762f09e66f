package transcript

import (
	"bytes"
	"encoding/hex"
	"slices"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// Gateway is the origin format of the events the recording gateway maps
// (docs/gateway.md#what-is-recorded): they carry "origin":{"format":"gateway","seq":N}, N the
// seq of their exchange's wire/request.
const Gateway Format = "gateway"

// Request is a request body of an API parsed once: for its lane's root
// and for its mapping (Lane.Map), which the recording gateway needs of
// every request it records.
type Request struct {
	req *request
}

// ParseRequest parses a request body of api for a lane of the gateway's
// (NewLane): its header config names the gateway as source. A body that is not of the
// API's shape is refused (ErrInvalid, naming the API, never content).
func ParseRequest(api string, body []byte) (*Request, error) {
	req, err := parseRequest(api, body)
	if err != nil {
		return nil, err
	}
	return &Request{req: req}, nil
}

// Root returns the lane key of the request (docs/gateway.md#sessions): a digest, in
// hex, of the conversation's first user message in normal form (cache
// markers dropped, a list of one text block equal to its text). Two
// requests of one conversation have the same root; a sub-agent's or a
// side call's has another.
func (r *Request) Root() (string, error) {
	if !r.req.hasRoot {
		return "", requestf(r.req.api, "the conversation has no user message")
	}
	return hex.EncodeToString(r.req.root[:]), nil
}

// PromptCacheKey is the body's top-level prompt_cache_key string, "" when
// it has none: the agent's session id of a client that sends no header
// naming it (docs/gateway.md#sessions).
func (r *Request) PromptCacheKey() string { return r.req.cacheKey }

// Root is ParseRequest(api, body).Root().
func Root(api string, body []byte) (string, error) {
	r, err := ParseRequest(api, body)
	if err != nil {
		return "", err
	}
	return r.Root()
}

// Break says, as far as the mapping can tell, why a request could not
// reuse the previous request's prompt cache of its lane (docs/gateway.md#cache-audit).
type Break struct {
	// Kind is one of BreakFirst, BreakConfig, BreakTools, BreakSystem,
	// BreakEdited, BreakReordered, BreakMarkers, BreakNone: the first
	// cause in the order a provider's cache reads a request (config,
	// which invalidates all; tools; system; messages).
	Kind string
	// Index is, for edited and reordered, the index of the first request
	// item (messages[] or input[]) that does not continue the lane's
	// conversation; the number of items when the request dropped the tail.
	Index int
	// Offset is, for system, the first byte offset at which the system
	// prompt differs.
	Offset int
}

// Break kinds.
const (
	BreakFirst     = "first"
	BreakConfig    = "config"
	BreakTools     = "tools"
	BreakSystem    = "system"
	BreakEdited    = "edited"
	BreakReordered = "reordered"
	BreakMarkers   = "markers"
	BreakNone      = "none"
)

// Lane is the state of one conversation of the recording gateway
// (docs/gateway.md#sessions): one session. MapRequest maps each request body to the events
// it adds, MapAnswer the answer's chunks. It is not safe for concurrent
// use; the gateway maps one exchange of a lane at a time, in order.
type Lane struct {
	api   string
	b     builder
	stats Stats
	// items are the visible surface nodes (those that project to a
	// message) in order, each as the conversation unit it holds.
	items []laneItem
	// header is the header snapshot in force (storage form), nil before
	// the first.
	header []byte
	// The previous request's header parts, for Break.
	sys              string
	tools            [][]byte
	config           []byte
	sysRaw, toolsRaw digest
	rawKnown         bool
	requests         int
	model            string
	// stepOpen: a step is open; answered: its answer was mapped; pending:
	// the calls of its answer no result has answered yet.
	stepOpen, answered bool
	pending            []string
	// open is the origin (wire/request seq) of the open step's request.
	open int64
}

type laneItem struct {
	seq      int64
	key, raw digest
}

// NewLane returns the state of a new lane of api (APIAnthropic, APIChat,
// APIResponses).
func NewLane(api string) (*Lane, error) {
	if _, ok := configKeys[api]; !ok {
		return nil, errclass.Mark(errors.Newf("transcript: unknown api %q", errors.Safe(api)), codec.ErrInvalid)
	}
	return newLane(api, Gateway, "seq"), nil
}

// newLane returns a lane whose events carry origin {format: f, key: N}:
// the gateway's (Gateway, "seq"), or a transcript's whose requests are
// rebuilt from its lines (format, "line").
func newLane(api string, f Format, originKey string) *Lane {
	l := &Lane{api: api}
	l.b = builder{format: f, originKey: originKey, stats: &l.stats}
	return l
}

// API is the lane's API.
func (l *Lane) API() string { return l.api }

// Awaiting reports whether the lane's last request has no answer mapped
// yet: after a crash, Close ends its step and turn.
func (l *Lane) Awaiting() bool { return l.stepOpen && !l.answered }

// start prepares the builder for a batch of events at seq next.
func (l *Lane) start(next int64, time float64) {
	l.b.seq, l.b.time, l.b.queue = next, time, nil
}

// done returns the batch built.
func (l *Lane) done() []codec.Event {
	out := l.b.queue
	l.b.queue = nil
	return out
}

// MapRequest maps a request body of the lane's API (docs/gateway.md#what-is-recorded): the
// events it adds to the lane's session, the first at seq next, each with
// origin {format:"gateway", seq: origin} (origin the seq of the
// exchange's wire/request) and the time given:
//
//   - a conversation that extends the previous request's adds its new
//     items; one that does not (edited, dropped, compacted) replaces the
//     changed span of the surface (docs/rules.md#surface), so that the step rebuilds to
//     this request's conversation;
//   - a new user prompt (a user message without tool results) ends the
//     open step and turn and starts a turn; items before it that are not
//     tool results or assistant content join the new turn;
//   - tool results answering the open step's calls are its tool/result
//     events, then the step ends; other tool results (an edited history)
//     are user messages holding the tool-result block, which rebuild
//     projects the same way; system and developer messages are
//     context/message events (envelope raw, source their role);
//     assistant content the lane's answers did not give (an edit, a
//     prefill) is an assistant/message outside a step, which verify
//     reports as a structure warning;
//   - then step/start, and a request/header snapshot (initial, then
//     change) when system, tools or config differ from the header in
//     force, right after it as the loop writes it (docs/rules.md#the-request-of-a-step).
//
// The Break says what the request changed against the previous one. A
// body that is not of the API's shape is refused (ErrInvalid, naming the
// API and the item index, never content), and the lane is unchanged.
func (l *Lane) MapRequest(body []byte, origin, next int64, time float64) ([]codec.Event, Break, error) {
	req, err := parseRequestFrom(l.api, body, string(l.b.format))
	if err != nil {
		return nil, Break{}, err
	}
	return l.Map(&Request{req: req}, origin, next, time)
}

// Map is MapRequest of a request already parsed; one of another API than
// the lane's is refused (ErrInvalid). r is the lane's from then on: map it
// once.
func (l *Lane) Map(r *Request, origin, next int64, time float64) ([]codec.Event, Break, error) {
	req := r.req
	if req.api != l.api {
		return nil, Break{}, requestf(l.api, "the request is of another API (%s)", errors.Safe(req.api))
	}
	if req.source != string(l.b.format) {
		return nil, Break{}, requestf(l.api, "the request was parsed for %s events, the lane maps %s", errors.Safe(req.source), errors.Safe(l.b.format))
	}
	if len(req.units) == 0 {
		return nil, Break{}, requestf(l.api, "the conversation is empty")
	}
	k := 0
	for k < len(l.items) && k < len(req.units) && l.items[k].key == req.units[k].key {
		k++
	}
	brk := l.breakOf(req, k)
	line := int(origin)
	l.start(next, time)
	if l.stepOpen && !l.answered {
		// The previous request's answer was never mapped.
		if err := l.closeTurn(line, interrupted()); err != nil {
			return nil, Break{}, err
		}
	}
	fresh := req.units[k:]
	var op codec.SurfaceOp
	var sources []int64
	if k < len(l.items) {
		if len(fresh) == 0 {
			// The tail was dropped: the last item kept replaces it.
			k--
			fresh = req.units[k:]
		}
		start := l.items[k].seq
		for i, s := range l.b.surface {
			if s == start {
				sources = append([]int64(nil), l.b.surface[i:]...)
				break
			}
		}
		op = codec.SurfaceOp{Kind: codec.OpReplace, Start: start, End: l.b.surface[len(l.b.surface)-1]}
	}
	// The first prompt, and the items before it that join its turn.
	p := -1
	for i, u := range fresh {
		if u.prompt {
			p = i
			break
		}
	}
	q := p
	for q > 0 && (fresh[q-1].kind == unitUser || fresh[q-1].kind == unitContext) {
		q--
	}
	items := append([]laneItem(nil), l.items[:k]...)
	for i := range items {
		items[i].raw = req.units[i].raw
	}
	for i, u := range fresh {
		if i == q {
			if err := l.closeTurn(line, nil); err != nil {
				return nil, Break{}, err
			}
			if err := l.b.openTurn(line, true, false); err != nil {
				return nil, Break{}, err
			}
		}
		if !l.b.inTurn {
			if err := l.b.openTurn(line, false, true); err != nil {
				return nil, Break{}, err
			}
		}
		if op.Kind == codec.OpNone {
			op.Kind = codec.OpAppend
		}
		if err := l.unit(line, &u, op, sources); err != nil {
			return nil, Break{}, err
		}
		op, sources = codec.SurfaceOp{Kind: codec.OpAppend}, nil
		items = append(items, laneItem{seq: l.b.seq - 1, key: u.key, raw: u.raw})
	}
	if err := l.endStep(line); err != nil {
		return nil, Break{}, err
	}
	if !l.b.inTurn {
		if err := l.b.openTurn(line, false, true); err != nil {
			return nil, Break{}, err
		}
	}
	l.b.steps++
	l.b.stats.Steps++
	o := l.b.data()
	o.Int("turn", l.b.turn).Int("step", l.b.steps)
	if _, err := l.b.emit(codec.TypeStepStart, o, line, codec.SurfaceOp{}, nil); err != nil {
		return nil, Break{}, err
	}
	if h := req.header(); !bytes.Equal(h, l.header) {
		reason := "change"
		if l.header == nil {
			reason = "initial"
		}
		o := l.b.data()
		o.Value("header", h).Str("reason", reason)
		if _, err := l.b.emit(codec.TypeRequestHeader, o, line, codec.SurfaceOp{}, nil); err != nil {
			return nil, Break{}, err
		}
		l.header = h
	}
	l.items = items
	l.stepOpen, l.answered, l.pending, l.open = true, false, nil, origin
	l.sys, l.tools, l.config, l.sysRaw, l.toolsRaw, l.rawKnown = req.system, req.tools, req.config, req.sysRaw, req.toolsRaw, true
	l.model = req.model
	l.requests++
	return l.done(), brk, nil
}

// unit writes one conversation unit of a request with op on the surface.
func (l *Lane) unit(line int, u *unit, op codec.SurfaceOp, sources []int64) error {
	b := &l.b
	switch u.kind {
	case unitUser:
		return b.userMessageOp(line, codec.Array(u.blocks...), op, sources...)
	case unitContext:
		return b.contextMessageOp(line, codec.Array(u.blocks...), u.source, op, sources...)
	case unitResult:
		r := u.result
		r.line = line
		if l.stepOpen && l.answers(r.id) {
			return b.toolResult(r, op, sources...)
		}
		var bl codec.Object
		bl.Str("type", codec.BlockToolResult).Str("toolCallId", r.id).Value("content", r.content).Bool("isError", r.isError)
		return b.userMessageOp(line, codec.Array(bl.Bytes()), op, sources...)
	}
	// Assistant content no answer gave: its own surface node, never
	// inside the model's step.
	if err := l.endStep(line); err != nil {
		return err
	}
	return b.assistant(line, u.blocks, u.replay, nil, "", "", op, sources...)
}

// answers removes id from the open step's pending calls; false when it
// is not one of them.
func (l *Lane) answers(id string) bool {
	for i, c := range l.pending {
		if c == id {
			l.pending = append(l.pending[:i:i], l.pending[i+1:]...)
			return true
		}
	}
	return false
}

// endStep writes step/end for the open step, if any.
func (l *Lane) endStep(line int) error {
	if !l.stepOpen {
		return nil
	}
	o := l.b.data()
	o.Int("turn", l.b.turn).Int("step", l.b.steps)
	if _, err := l.b.emit(codec.TypeStepEnd, o, line, codec.SurfaceOp{}, nil); err != nil {
		return err
	}
	l.stepOpen, l.pending = false, nil
	return nil
}

// closeTurn ends the open step and turn, if any: reason nil means
// completed.
func (l *Lane) closeTurn(line int, reason []byte) error {
	if err := l.endStep(line); err != nil {
		return err
	}
	return l.b.closeTurn(line, reason)
}

// breakOf compares a request with the lane's previous one; k is the
// length of their common conversation.
func (l *Lane) breakOf(req *request, k int) Break {
	switch {
	case l.requests == 0:
		return Break{Kind: BreakFirst}
	case !bytes.Equal(req.config, l.config):
		return Break{Kind: BreakConfig}
	case !slices.EqualFunc(req.tools, l.tools, bytes.Equal):
		if sameSet(req.tools, l.tools) {
			return Break{Kind: BreakReordered, Index: -1}
		}
		return Break{Kind: BreakTools}
	case req.system != l.sys:
		off := 0
		for off < len(req.system) && off < len(l.sys) && req.system[off] == l.sys[off] {
			off++
		}
		return Break{Kind: BreakSystem, Offset: off}
	case k < len(l.items):
		at := req.units[len(req.units)-1].item + 1
		if k < len(req.units) {
			at = req.units[k].item
		}
		kind := BreakEdited
		if len(req.units)-k >= len(l.items)-k && reordered(l.items[k:], req.units[k:]) {
			kind = BreakReordered
		}
		return Break{Kind: kind, Index: at}
	}
	if l.rawKnown && (req.sysRaw != l.sysRaw || req.toolsRaw != l.toolsRaw) {
		return Break{Kind: BreakMarkers}
	}
	for i := 0; i < k; i++ {
		if r := l.items[i].raw; r != (digest{}) && r != req.units[i].raw {
			return Break{Kind: BreakMarkers, Index: req.units[i].item}
		}
	}
	return Break{Kind: BreakNone}
}

// sameSet reports whether a and b hold the same values in another order.
func sameSet(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	n := map[string]int{}
	for _, x := range a {
		n[string(x)]++
	}
	for _, x := range b {
		if n[string(x)]--; n[string(x)] < 0 {
			return false
		}
	}
	return true
}

// reordered reports whether every item of old is among units: the
// request moved items, it changed none.
func reordered(old []laneItem, units []unit) bool {
	n := map[digest]int{}
	for _, u := range units {
		n[u.key]++
	}
	for _, it := range old {
		if n[it.key]--; n[it.key] < 0 {
			return false
		}
	}
	return true
}

// interrupted is the turn/end reason of a turn whose answer never came.
func interrupted() []byte {
	var r codec.Object
	r.Str("kind", "interrupted")
	return r.Bytes()
}
