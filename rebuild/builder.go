package rebuild

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"hash"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/header"
)

// Step is the rebuilt request of one step (docs/rules.md#the-request-of-a-step).
type Step struct {
	Turn, Step int64
	// Start is the seq of the step's step/start: its boundary.
	Start int64
	// Null is set when no header was in force: the request could not have
	// been sent, and replay prints "request":null.
	Null bool
	// Request is the request's canonical JSON; nil when Null, or when the
	// Builder was asked for digests only.
	Request []byte
	// History is the derived history of the request (docs/rules.md#derived-history), one
	// message's canonical JSON each: the messages after Header.Prefix. It
	// is set with Request on the steps the Builder emits (not by Peek).
	// The slices alias the fold's and must not be changed.
	History [][]byte
	// Digest is the SHA-256 of the canonical JSON (zero when Null).
	Digest [32]byte
	// Header is the header the request was built under (zero when Null).
	Header header.Snapshot
	// Recorded lists the request/digest events that belong to the step.
	Recorded []Recorded
	// Provenance of the request, for tools that explain changes between
	// steps: the surface generation at the boundary (it grows with every
	// replace), the seq of the last header event folded into Header, the
	// number of request/header snapshots folded, and the latest one's reason.
	Gen        int
	HeaderSeq  int64
	Snapshots  int
	LastReason string
}

// Recorded is a request/digest event.
type Recorded struct {
	Seq    int64
	SHA256 string
}

// BuilderOptions configures a Builder.
type BuilderOptions struct {
	// Requests keeps each step's full request JSON in Step.Request.
	// Without it the Builder computes digests only, in time linear in the
	// log; with it, writing each request is proportional to its size.
	Requests bool
	// Keep, when set, narrows Requests to the steps it returns true for,
	// by the seq of their step/start; the others get digests only. A
	// reader that shows a few steps of a long session folds the whole log
	// in linear time and writes only the requests it shows.
	Keep func(start int64) bool
}

// Builder folds a session's events one at a time and yields each step's
// request and digest (docs/rules.md#requests) at the point the log settles it:
// the step's first chunk, else its step/end, else the end of the log.
//
// Its cost is linear in the log: the SHA-256 state after the head and the
// history so far is kept and resumed, so a step hashes only the messages
// appended since the previous one and the tail. A rewrite of the head
// (provider, model or prefix) or of the surface (a replace) restarts the
// hash once.
type Builder struct {
	id   string
	opts BuilderOptions
	f    *Fold
	emit func(Step) error

	// The running hash over head ‖ history[:hashed].
	h      hash.Hash
	head   []byte // the head the running hash started with
	hashed int    // surface nodes hashed
	anyMsg bool   // whether a message was hashed after "["
	gen    int    // the surface generation the running hash follows

	pending   []*pending
	misplaced []int64

	// Cached per header value: its head and tail bytes.
	cacheSeq  int64
	cacheHead []byte
	cacheTail []byte
}

// pending is a step whose header is not settled yet.
type pending struct {
	turn, step, start int64
	nodes             []node // the surface at the boundary
	head              []byte // head the saved hash state started with (nil: none)
	state             []byte // marshalled SHA-256 state over head ‖ history
	done              bool
	out               Step
}

// NewBuilder returns a Builder for the session whose header line is h.
// emit receives every step in log order of its step/start; an error from
// emit stops the fold and is returned by Add or End.
func NewBuilder(h codec.SessionHeader, opts BuilderOptions, emit func(Step) error) *Builder {
	return &Builder{id: h.ID, opts: opts, f: NewFold(true), emit: emit, cacheSeq: -2}
}

// Fold exposes the builder's fold (surface and header in force).
func (b *Builder) Fold() *Fold { return b.f }

// Misplaced returns the seqs of request/digest events that belong to no
// step (docs/rules.md#digest): outside a step's window between its step/start and
// its first chunk.
func (b *Builder) Misplaced() []int64 { return b.misplaced }

// Add folds the next event. Events that settle a pending step (its first
// chunk, its step/end) settle it before they are folded.
func (b *Builder) Add(ev *codec.Event) error {
	if ev.Seq != b.f.Next() {
		return codec.NamesSeq(invalidf("rebuild: seq %d where %d was expected", errors.Safe(ev.Seq), errors.Safe(b.f.Next())))
	}
	switch d := ev.Data.(type) {
	case *codec.AssistantChunk:
		if err := b.settle(d.Turn, d.Step); err != nil {
			return err
		}
	case *codec.StepEnd:
		if err := b.settle(d.Turn, d.Step); err != nil {
			return err
		}
	case *codec.RequestDigest:
		if p := b.open(d.Turn, d.Step); p != nil {
			p.out.Recorded = append(p.out.Recorded, Recorded{Seq: ev.Seq, SHA256: d.SHA256})
		} else {
			b.misplaced = append(b.misplaced, ev.Seq)
		}
	}
	if err := b.f.Add(ev); err != nil {
		return err
	}
	if d, ok := ev.Data.(*codec.StepStart); ok {
		b.begin(ev.Seq, d.Turn, d.Step)
	}
	return nil
}

// End settles every pending step with the header in force at the end of
// the log.
func (b *Builder) End() error {
	for _, p := range b.pending {
		if !p.done {
			b.finish(p)
		}
	}
	return b.flush()
}

// open returns the unsettled pending step named turn.step, if any.
func (b *Builder) open(turn, step int64) *pending {
	for _, p := range b.pending {
		if !p.done && p.turn == turn && p.step == step {
			return p
		}
	}
	return nil
}

// settle finishes every pending step named turn.step: the event about to
// be folded is its first chunk or its step/end.
func (b *Builder) settle(turn, step int64) error {
	for _, p := range b.pending {
		if !p.done && p.turn == turn && p.step == step {
			b.finish(p)
		}
	}
	return b.flush()
}

// flush emits settled steps in order of their step/start.
func (b *Builder) flush() error {
	i := 0
	for ; i < len(b.pending) && b.pending[i].done; i++ {
		if err := b.emit(b.pending[i].out); err != nil {
			return err
		}
	}
	b.pending = b.pending[i:]
	return nil
}

// begin takes a boundary: the history of the step is the surface now.
func (b *Builder) begin(start, turn, step int64) {
	p := &pending{turn: turn, step: step, start: start, nodes: b.f.surface}
	p.out = Step{Turn: turn, Step: step, Start: start, Gen: b.f.gen, HeaderSeq: -1}
	if h, ok := b.f.Header(); ok {
		head := b.headFor(&h)
		b.catchUp(head)
		p.head = head
		p.state, _ = b.h.(encoding.BinaryMarshaler).MarshalBinary()
	}
	b.pending = append(b.pending, p)
}

// catchUp brings the running hash to the current surface under head,
// restarting it when the head or the surface was rewritten.
func (b *Builder) catchUp(head []byte) {
	s := b.f.surface
	rewritten := b.h == nil || !bytes.Equal(head, b.head) || b.gen != b.f.gen || b.hashed > len(s)
	if rewritten {
		b.h = sha256.New()
		b.h.Write(head)
		b.head, b.hashed, b.gen = head, 0, b.f.gen
		b.anyMsg = head[len(head)-1] != '['
	}
	for _, n := range s[b.hashed:] {
		if n.msg == nil {
			continue
		}
		if b.anyMsg {
			b.h.Write([]byte{','})
		}
		b.h.Write(n.msg)
		b.anyMsg = true
	}
	b.hashed = len(s)
}

// headFor returns the head bytes of h, cached per header event.
func (b *Builder) headFor(h *header.Snapshot) []byte {
	b.refreshCache(h)
	return b.cacheHead
}

func (b *Builder) refreshCache(h *header.Snapshot) {
	if b.cacheSeq == b.f.headerSeq {
		return
	}
	b.cacheSeq = b.f.headerSeq
	b.cacheHead = appendHead(nil, h)
	b.cacheTail = appendTail(nil, h, b.id)
}

// finish settles p with the header in force now.
func (b *Builder) finish(p *pending) {
	p.done = true
	p.out = b.compute(p, b.opts.Requests && (b.opts.Keep == nil || b.opts.Keep(p.start)), nil)
	if p.out.Request != nil {
		p.out.History = messages(p.nodes)
	}
	p.nodes, p.state = nil, nil
}

// Peek returns the request of the latest step that is not settled yet, as
// it stands with the header in force now, without settling it: what the
// loop sends after writing a step's header. ok is false when no step is
// pending. Step.Request is set when the Builder keeps requests.
func (b *Builder) Peek() (s Step, ok bool) {
	return b.peek(b.opts.Requests, nil)
}

// PeekRequest is Peek with Step.Request always set: a loop folds its log
// without keeping every request, and builds the full request only for the
// step it is about to send.
func (b *Builder) PeekRequest() (s Step, ok bool) {
	return b.peek(true, nil)
}

// PeekRequestTo is PeekRequest writing the request into buf's storage
// (from buf[:0]) when it is large enough, so that a caller sending one
// request after another reuses one buffer.
func (b *Builder) PeekRequestTo(buf []byte) (s Step, ok bool) {
	return b.peek(true, buf[:0])
}

func (b *Builder) peek(request bool, buf []byte) (Step, bool) {
	for i := len(b.pending) - 1; i >= 0; i-- {
		if p := b.pending[i]; !p.done {
			return b.compute(p, request, buf), true
		}
	}
	return Step{}, false
}

// compute builds p's request with the header in force now; the full
// request JSON only when request is set.
func (b *Builder) compute(p *pending, request bool, buf []byte) Step {
	out := p.out
	out.Recorded = append([]Recorded(nil), p.out.Recorded...)
	h, ok := b.f.Header()
	if !ok {
		out.Null = true
		return out
	}
	b.refreshCache(&h)
	head, tail := b.cacheHead, b.cacheTail
	out.Header = h
	out.HeaderSeq, out.Snapshots, out.LastReason = b.f.headerSeq, b.f.snapshots, b.f.reason
	d := sha256.New()
	if p.state != nil && bytes.Equal(head, p.head) {
		_ = d.(encoding.BinaryUnmarshaler).UnmarshalBinary(p.state) // state came from MarshalBinary
	} else {
		d.Write(head)
		any := len(h.Prefix) > 0
		for _, n := range p.nodes {
			if n.msg == nil {
				continue
			}
			if any {
				d.Write([]byte{','})
			}
			d.Write(n.msg)
			any = true
		}
	}
	d.Write(tail)
	d.Sum(out.Digest[:0])
	if request {
		out.Request = appendRequestNodes(buf, &h, p.nodes, b.id)
	}
	return out
}

// messages returns the derived history of a surface (docs/rules.md#derived-history).
func messages(nodes []node) [][]byte {
	out := make([][]byte, 0, len(nodes))
	for _, n := range nodes {
		if n.msg != nil {
			out = append(out, n.msg)
		}
	}
	return out
}
