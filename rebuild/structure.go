package rebuild

import (
	"fmt"

	"github.com/sessionlog/sessionlog/codec"
)

// Break is a break of the turn and step structure of docs/rules.md#turns-and-steps. Import
// accepts such logs (DSH's own fixtures break the structure); verify
// reports breaks as warnings, and the loop checks its own appends.
type Break struct {
	Seq int64
	// What describes the break by event type and numbers only.
	What string
}

// Structure checks docs/rules.md#turns-and-steps incrementally: turns numbered 1, 2, … without
// gaps; steps numbered from 1 inside each turn; step events, chunks,
// assistant messages, tool calls and results naming the open turn and
// step; each tool/result answering a tool call of its step (a tool/call
// event, or a tool-call block of the step's assistant message, which is
// what crash and abort closers answer); every event of a type docs/format.md#event-types
// names inside a turn (events of unknown types are data and may sit
// anywhere).
// The zero value is ready to use.
type Structure struct {
	turn     int64 // last turn started
	inTurn   bool
	step     int64 // last step started in this turn
	inStep   bool
	calls    map[string]bool
	resolved map[string]bool
}

// Add checks ev and returns the breaks it causes (usually none).
func (s *Structure) Add(ev *codec.Event) []Break {
	var out []Break
	brk := func(format string, args ...interface{}) {
		out = append(out, Break{Seq: ev.Seq, What: fmt.Sprintf(format, args...)})
	}
	if _, ok := ev.Data.(*codec.Opaque); ok {
		// An event of a type this spec does not know is data and never
		// affects rebuild (docs/format.md#event-types): it has no place in the turn
		// structure, so it may sit between turns (docs/transcripts.md's source/line
		// events do: a transcript's bookkeeping lines come before its
		// first prompt and between its turns).
		return nil
	}
	if _, start := ev.Data.(*codec.TurnStart); !start && !s.inTurn {
		brk("%s outside a turn", ev.Type)
	}
	switch d := ev.Data.(type) {
	case *codec.TurnStart:
		if s.inTurn {
			brk("turn/start %d while turn %d is open", d.Turn, s.turn)
		}
		if d.Turn != s.turn+1 {
			brk("turn/start %d after turn %d", d.Turn, s.turn)
		}
		s.turn, s.inTurn, s.step, s.inStep = d.Turn, true, 0, false
		s.resetCalls()
	case *codec.TurnEnd:
		s.checkTurn(d.Turn, brk, ev.Type)
		if s.inStep {
			brk("turn/end while step %d.%d is open", s.turn, s.step)
		}
		s.inTurn, s.inStep = false, false
	case *codec.StepStart:
		s.checkTurn(d.Turn, brk, ev.Type)
		if s.inStep {
			brk("step/start while step %d.%d is open", s.turn, s.step)
		}
		if d.Step != s.step+1 {
			brk("step/start %d.%d after step %d", d.Turn, d.Step, s.step)
		}
		s.step, s.inStep = d.Step, true
		s.resetCalls()
	case *codec.StepEnd:
		s.checkStep(d.Turn, d.Step, brk, ev.Type)
		s.inStep = false
	case *codec.AssistantChunk:
		s.checkStep(d.Turn, d.Step, brk, ev.Type)
	case *codec.AssistantMessage:
		s.checkStep(d.Turn, d.Step, brk, ev.Type)
		for _, b := range d.Content.Blocks {
			if b.Type == codec.BlockToolCall {
				s.calls[b.ID] = true
			}
		}
	case *codec.ToolCall:
		s.checkStep(d.Turn, d.Step, brk, ev.Type)
		s.calls[d.CallID] = true
	case *codec.ToolResult:
		s.checkStep(d.Turn, d.Step, brk, ev.Type)
		if !s.calls[d.CallID] {
			brk("tool/result answers no tool call of step %d.%d", d.Turn, d.Step)
		} else if s.resolved[d.CallID] {
			brk("second tool/result for one tool call of step %d.%d", d.Turn, d.Step)
		}
		s.resolved[d.CallID] = true
	}
	return out
}

func (s *Structure) resetCalls() {
	s.calls = make(map[string]bool)
	s.resolved = make(map[string]bool)
}

func (s *Structure) checkTurn(turn int64, brk func(string, ...interface{}), typ string) {
	if s.inTurn && turn != s.turn {
		brk("%s names turn %d, open turn is %d", typ, turn, s.turn)
	}
}

func (s *Structure) checkStep(turn, step int64, brk func(string, ...interface{}), typ string) {
	s.checkTurn(turn, brk, typ)
	if s.calls == nil {
		s.resetCalls()
	}
	switch {
	case !s.inStep:
		brk("%s %d.%d outside a step", typ, turn, step)
	case step != s.step:
		brk("%s names step %d.%d, open step is %d.%d", typ, turn, step, s.turn, s.step)
	}
}

// Clone returns an independent copy of s.
func (s *Structure) Clone() Structure {
	c := *s
	c.calls = make(map[string]bool, len(s.calls))
	for k, v := range s.calls {
		c.calls[k] = v
	}
	c.resolved = make(map[string]bool, len(s.resolved))
	for k, v := range s.resolved {
		c.resolved[k] = v
	}
	return c
}
