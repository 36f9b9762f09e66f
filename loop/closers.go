package loop

import (
	"context"

	"github.com/sessionlog/sessionlog/codec"
)

// InterruptedNotice is the text of the tool result a crash closer writes
// for a call that never got one (DSH's wording).
const InterruptedNotice = "Tool call interrupted by a crash; no result was recorded."

// openState tracks what a crash would leave open: the turn, the step, and
// the pending calls (tool-call blocks of the step's assistant message with
// no tool/result yet), reset at step/end, turn/start and turn/end.
type openState struct {
	inTurn, inStep bool
	turn, step     int64
	pending        []pendingCall
}

type pendingCall struct {
	id      string
	callSeq int64 // -1: no tool/call logged
}

func (o *openState) add(ev *codec.Event) {
	switch d := ev.Data.(type) {
	case *codec.TurnStart:
		o.inTurn, o.inStep, o.turn, o.pending = true, false, d.Turn, nil
	case *codec.TurnEnd:
		o.inTurn, o.inStep, o.pending = false, false, nil
	case *codec.StepStart:
		o.inStep, o.step = true, d.Step
	case *codec.StepEnd:
		o.inStep, o.pending = false, nil
	case *codec.AssistantMessage:
		for _, b := range d.Content.Blocks {
			if b.Type == codec.BlockToolCall {
				o.pending = append(o.pending, pendingCall{id: b.ID, callSeq: -1})
			}
		}
	case *codec.ToolCall:
		for i := range o.pending {
			if o.pending[i].id == d.CallID && o.pending[i].callSeq < 0 {
				o.pending[i].callSeq = ev.Seq
				break
			}
		}
	case *codec.ToolResult:
		for i := range o.pending {
			if o.pending[i].id == d.CallID {
				o.pending = append(o.pending[:i:i], o.pending[i+1:]...)
				break
			}
		}
	}
}

// closeCrashedTurn appends the crash closers of docs/loop.md when the log's
// last turn is still open: a tool/result per pending call, step/end if a
// step is open, turn/end{interrupted}; each with the last event's time.
func (l *Loop) closeCrashedTurn(ctx context.Context) error {
	o := l.open
	if !o.inTurn {
		return nil
	}
	b := l.batch()
	t := l.lastTime
	for _, p := range o.pending {
		var sources []int64
		if p.callSeq >= 0 {
			sources = []int64{p.callSeq}
		}
		data := toolResultData(o.turn, o.step, p.id, textContent(InterruptedNotice), true, "InterruptedError", "interrupted")
		b.addAt(codec.TypeToolResult, data, codec.SurfaceOp{Kind: codec.OpAppend}, sources, t)
	}
	if o.inStep {
		b.addAt(codec.TypeStepEnd, turnStep(o.turn, o.step), codec.SurfaceOp{}, nil, t)
	}
	b.addAt(codec.TypeTurnEnd, turnEnd(o.turn, reasonInterrupted()), codec.SurfaceOp{}, nil, t)
	if b.err != nil {
		return b.err
	}
	// Closers repair history that may already break the turn structure;
	// they are written as DSH writes them, without the structure probe.
	if err := l.append(ctx, b.evs); err != nil {
		return err
	}
	for i := range b.evs {
		l.structure.Add(&b.evs[i])
		if err := l.absorb(&b.evs[i]); err != nil {
			return err
		}
	}
	return nil
}
