package loop

import (
	"context"
	"encoding/hex"
	"io"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/compact"
	"github.com/sessionlog/sessionlog/header"
)

// step runs one step in docs/loop.md's order. It returns the turn's ending (nil
// to go on with the next step), whether it opened a step, and an error
// only when the log could not be written.
func (l *Loop) step(ctx context.Context, turn, step int64) (*ending, bool, error) {
	if err := l.drainSteering(ctx, turn); err != nil {
		return nil, false, err
	}
	if e := l.cancelled(ctx); e != nil {
		return e, false, nil
	}
	spec, err := l.opts.Host.Step(ctx, turn, step)
	if err != nil {
		if e := l.cancelled(ctx); e != nil {
			return e, false, nil
		}
		return failed(step, "HOST", err), false, nil
	}
	snap, err := l.snapshotFor(spec)
	if err != nil {
		return failed(step, "HOST", err), false, nil
	}
	if e, err := l.composePrefix(ctx, step); e != nil || err != nil {
		return e, false, err
	}
	snap.Prefix = l.prefix
	for _, h := range l.opts.PreStep {
		if err := h(ctx, PreStep{Turn: turn, Step: step, System: spec.System, Prefix: l.prefix}); err != nil {
			if e := l.cancelled(ctx); e != nil {
				return e, false, nil
			}
			return failed(step, "PRE_STEP", err), false, nil
		}
	}
	if err := l.gate(ctx, turn, step, spec.System); err != nil {
		return nil, false, err
	}
	if e := l.cancelled(ctx); e != nil {
		return e, false, nil
	}
	if err := l.boundary(ctx, turn, step, snap); err != nil {
		return nil, true, err
	}
	e, err := l.dispatch(ctx, turn, step, spec)
	return e, true, err
}

// snapshotFor builds the header the host asks for (prefix set later).
func (l *Loop) snapshotFor(spec StepSpec) (header.Snapshot, error) {
	s := header.Snapshot{Config: spec.Config, System: spec.System}
	if s.Config.Model == "" {
		return s, errors.New("loop: the host's config has no model")
	}
	for _, t := range spec.Tools {
		ht, err := toolHeader(t)
		if err != nil {
			return s, err
		}
		s.Tools = append(s.Tools, ht)
	}
	return s, nil
}

// toolHeader is the header entry of a tool: {name, description, parameters}.
func toolHeader(t Tool) (header.Tool, error) {
	params := t.Parameters
	if params == nil {
		params = []byte(`{}`)
	}
	js := append([]byte(`{"name":`), codec.AppendJSONString(nil, []byte(t.Name))...)
	js = append(js, `,"description":`...)
	js = codec.AppendJSONString(js, []byte(t.Description))
	js = append(js, `,"parameters":`...)
	js = append(js, params...)
	js = append(js, '}')
	ht, err := header.ParseTool(js)
	return ht, errors.Wrapf(err, "loop: tool %d", errors.Safe(len(t.Name)))
}

func (l *Loop) drainSteering(ctx context.Context, turn int64) error {
	q := l.takeSteering()
	if len(q) == 0 {
		return nil
	}
	b := l.batch()
	for _, m := range q {
		b.add(codec.TypeSteeringMessage, steeringMessage(turn, m.content, m.source), codec.SurfaceOp{Kind: codec.OpAppend}, nil)
	}
	return b.commit(ctx)
}

// gate runs the compaction gate (docs/loop.md#steps, step 5, docs/rules.md#compaction).
func (l *Loop) gate(ctx context.Context, turn, step int64, system string) error {
	g := l.opts.Compaction
	if g == nil {
		return nil
	}
	res, err := g.Run(ctx, (*gateSession)(l), turn, system, l.prefix)
	outcome := ""
	switch {
	case errors.Is(err, compact.ErrGaveUp):
		outcome = "gave_up"
	case err != nil:
		outcome = "error"
	}
	l.obs.compaction(ctx, res.Compactions, res.Failures, outcome)
	if outcome == "gave_up" {
		l.obs.log.Warn("loop: compaction gate gave up", "session", l.hdr.ID, "turn", turn, "step", step,
			"before", res.Before, "after", res.After)
		if l.opts.OnGaveUp != nil {
			l.opts.OnGaveUp(turn, step, err)
		}
		return nil
	}
	if err != nil && l.cancelled(ctx) != nil {
		return nil // the step notices the cancellation next
	}
	return err
}

// boundary takes the step's boundary and writes the header it owes (docs/loop.md
// steps 6–7), committed together: [step/start, header?].
func (l *Loop) boundary(ctx context.Context, turn, step int64, snap header.Snapshot) error {
	b := l.batch()
	b.add(codec.TypeStepStart, turnStep(turn, step), codec.SurfaceOp{}, nil)
	prev, has := l.own.Fold().Header()
	switch {
	case !l.anchored && !has:
		b.add(codec.TypeRequestHeader, requestHeader(snap.Encode(), "initial"), codec.SurfaceOp{}, nil)
	case !l.anchored:
		b.add(codec.TypeRequestHeader, requestHeader(snap.Encode(), "resume"), codec.SurfaceOp{}, nil)
	case prev.Equal(snap):
	default:
		if d, ok := header.Diff(prev, snap); ok {
			b.add(codec.TypeHeaderDelta, d.Encode(), codec.SurfaceOp{}, nil)
		} else {
			b.add(codec.TypeRequestHeader, requestHeader(snap.Encode(), "fallback"), codec.SurfaceOp{}, nil)
		}
	}
	if err := b.commit(ctx); err != nil {
		return err
	}
	l.anchored = true
	return nil
}

// dispatch builds the request, checks it, records its digest, streams the
// answer and runs the tools (docs/loop.md#steps, steps 8–11).
func (l *Loop) dispatch(ctx context.Context, turn, step int64, spec StepSpec) (*ending, error) {
	mine, ok := l.own.PeekRequestTo(l.reqBuf)
	if !ok || mine.Null {
		return nil, errors.AssertionFailedf("loop: no request for step %d.%d after its header", errors.Safe(turn), errors.Safe(step))
	}
	// The check reads the store to the end even when ctx is cancelled
	// meanwhile; a cancellation then ends the step before anything is sent.
	t := l.obs.Start()
	err := l.invariant(ctx, mine)
	l.obs.checked(ctx, t)
	if e := l.cancelled(ctx); e != nil {
		b := l.batch()
		b.add(codec.TypeStepEnd, turnStep(turn, step), codec.SurfaceOp{}, nil)
		return e, b.commit(ctx)
	}
	if err != nil {
		if !errors.Is(err, ErrInvariant) {
			return nil, err
		}
		b := l.batch()
		b.add(codec.TypeStepEnd, turnStep(turn, step), codec.SurfaceOp{}, nil)
		if cerr := b.commit(ctx); cerr != nil {
			return nil, cerr
		}
		return failed(step, "INVARIANT", err), nil
	}
	b := l.batch()
	b.add(codec.TypeRequestDigest, requestDigest(turn, step, hex.EncodeToString(mine.Digest[:])), codec.SurfaceOp{}, nil)
	if err := b.commit(ctx); err != nil {
		return nil, err
	}
	l.reqBuf = mine.Request // reused by the next step's request
	req := &Request{Turn: turn, Step: step, JSON: mine.Request, Digest: mine.Digest, Header: mine.Header}
	calls, e, err := l.stream(ctx, req)
	if e != nil || err != nil {
		return e, err
	}
	e, err = l.runTools(ctx, turn, step, spec.Tools, calls)
	if e != nil || err != nil {
		return e, err
	}
	b = l.batch()
	for _, q := range l.takeInjected(0) {
		b.add(codec.TypeContextMessage, userMessage(q.content, q.source), codec.SurfaceOp{Kind: codec.OpAppend}, nil)
	}
	b.add(codec.TypeStepEnd, turnStep(turn, step), codec.SurfaceOp{}, nil)
	if err := b.commit(ctx); err != nil {
		return nil, err
	}
	if len(calls) == 0 {
		return &ending{kind: "completed"}, nil
	}
	return nil, nil
}

// spillBytes is how much memory the loop's uncommitted chunks may take
// before it commits them ahead of the assistant message (docs/loop.md: a long
// answer's chunks are committed in groups).
const spillBytes = 1 << 20

// chunkCost is what an uncommitted chunk takes beyond its stored bytes:
// its event (envelope, payload, typed view) in the batch, and the store's
// own decoded copy while it commits. A model that streams a few words
// per event sends tens of thousands of them per MiB of chunk bytes.
const chunkCost = 256

// call is a tool call of the assistant message.
type call struct{ id, name, args string }

// stream streams the provider's answer: every chunk as assistant/chunk,
// then the assistant/message citing them, committed together; a long
// answer's chunks are committed ahead in groups of spillBytes. On a
// provider error or a cancellation it commits the chunks so far and
// step/end, and ends the turn (docs/loop.md#how-turns-end).
func (l *Loop) stream(ctx context.Context, req *Request) ([]call, *ending, error) {
	turn, step := req.Turn, req.Step
	b := l.batch()
	var asm assembler
	// The chunks' seqs are consecutive: seq0 and n stand for them (a
	// slice grown by append would hold twice their count at its peak).
	var seq0 int64
	n, held, first := 0, 0, 0 // chunks, chunk bytes in b, and the first chunk b holds
	fail := func(e *ending) ([]call, *ending, error) {
		b.add(codec.TypeStepEnd, turnStep(turn, step), codec.SurfaceOp{}, nil)
		return nil, e, b.commit(ctx)
	}
	provErr := func(err error) ([]call, *ending, error) {
		e := providerFailed(step, err)
		l.obs.providerError(ctx, e.code)
		l.obs.log.Warn("loop: provider error ends the turn", "session", l.hdr.ID, "turn", turn, "step", step, "code", e.code)
		return fail(e)
	}
	t := l.obs.Start()
	st, err := l.opts.Provider.Stream(ctx, req)
	if err != nil {
		if e := l.cancelled(ctx); e != nil {
			return fail(e)
		}
		return provErr(err)
	}
	streaming := true
	defer func() {
		if streaming {
			st.Close()
		}
	}()
	for {
		c, err := st.Next()
		if err == io.EOF {
			// Closed before the last commit, so that what the stream
			// holds (a translator's blocks) is not held through it.
			streaming = false
			st.Close()
			break
		}
		if err != nil {
			if e := l.cancelled(ctx); e != nil {
				return fail(e)
			}
			return provErr(err)
		}
		if n == 0 {
			l.obs.firstChunkAfter(ctx, t)
		}
		stored, err := chunkStorage(&c)
		if err != nil {
			return fail(failed(step, "PROVIDER", err))
		}
		if seq := b.add(codec.TypeAssistantChunk, chunkEvent(turn, step, stored), codec.SurfaceOp{}, nil); n == 0 {
			seq0 = seq
		}
		n++
		asm.add(&c, stored)
		if held += len(stored) + chunkCost; held >= spillBytes && b.err == nil {
			// A long answer's chunks are committed as they come, in groups:
			// memory holds the blocks being built, not the whole stream.
			if err := b.commit(ctx); err != nil {
				return nil, nil, err
			}
			b, held, first = l.batch(), 0, n
		}
	}
	seqs := make([]int64, n) // empty, not nil, for a known empty stream
	for i := range seqs {
		seqs[i] = seq0 + int64(i)
	}
	b.add(codec.TypeAssistantMessage, asm.message(turn, step, req.Header.Config), codec.SurfaceOp{Kind: codec.OpAppend}, seqs)
	failure := asm.failure
	asm = assembler{} // its blocks are in the message now
	if b.err != nil {
		// The provider sent something the log cannot hold (say, a block
		// without a type): the step fails, with what was streamed.
		b.evs = b.evs[:min(len(b.evs), n-first)]
		e := failed(step, "PROVIDER", b.err)
		b.err = nil
		return fail(e)
	}
	if err := b.commit(ctx); err != nil {
		return nil, nil, err
	}
	if f := failure; f != nil {
		// The server ended the stream with an error: the answer so far is
		// the step's message, and the turn ends as on any provider error.
		e := &ending{kind: "error", step: step, code: f.code, message: f.message}
		l.obs.providerError(ctx, e.code)
		l.obs.log.Warn("loop: an error in the stream ends the turn", "session", l.hdr.ID, "turn", turn, "step", step, "code", e.code)
		b = l.batch()
		return fail(e)
	}
	msg := b.evs[len(b.evs)-1].Data.(*codec.AssistantMessage)
	var calls []call
	for _, blk := range msg.Content.Blocks {
		if blk.Type == codec.BlockToolCall {
			calls = append(calls, call{id: blk.ID, name: blk.Name, args: blk.Arguments})
		}
	}
	return calls, nil, nil
}
