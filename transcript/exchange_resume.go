package transcript

import "github.com/sessionlog/sessionlog/codec"

// LaneFrom rebuilds a lane's state from its session's events, in order
// (all of them, or those from the first: a store scan feeds them one at a
// time through Resume): what a gateway needs after a restart to map the
// lane's next exchange as the lane that wrote the events would have. The
// state comes from the mapped events alone: the surface and the normal
// form of each of its nodes, the header in force, the open turn and step
// and the calls still waiting for results. What the events do not hold
// (the previous request's cache markers) is unknown, so the first Break
// after a restart never says markers.
func LaneFrom(api string, events []codec.Event) (*Lane, error) {
	l, err := NewLane(api)
	if err != nil {
		return nil, err
	}
	for i := range events {
		if err := l.Resume(&events[i]); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Resume folds one event of the lane's session into its state (see
// LaneFrom). Events of other types (wire/*, source lines) are skipped.
func (l *Lane) Resume(ev *codec.Event) error {
	if ev.Data == nil {
		d, err := codec.DecodeEvent(ev.Raw)
		if err != nil {
			return err
		}
		ev = &d
	}
	b := &l.b
	switch d := ev.Data.(type) {
	case *codec.TurnStart:
		b.turn, b.inTurn, b.steps = d.Turn, true, 0
	case *codec.TurnEnd:
		b.inTurn, l.stepOpen, l.pending = false, false, nil
	case *codec.StepStart:
		b.steps, l.stepOpen, l.answered, l.pending = d.Step, true, false, nil
		l.open = originSeq(ev)
		l.requests++
	case *codec.StepEnd:
		l.stepOpen, l.pending = false, nil
	case *codec.ToolCall:
		if l.stepOpen {
			l.pending = append(l.pending, d.CallID)
		}
	case *codec.ToolResult:
		l.answers(d.CallID)
	case *codec.RequestHeader:
		h := value(d.Header)
		f := h.fields("config", "system", "tools")
		l.header = append([]byte(nil), d.Header...)
		l.config = append([]byte(nil), f[0]...)
		l.sys = f[1].text()
		l.tools = nil
		for _, t := range f[2].elems() {
			l.tools = append(l.tools, append([]byte(nil), t...))
		}
		l.model = f[0].get("model").text()
		l.rawKnown = false
	}
	if ev.Op.Kind == codec.OpNone {
		return nil
	}
	if a, ok := ev.Data.(*codec.AssistantMessage); ok && l.stepOpen && a.Step == b.steps {
		l.answered = true
	}
	key, visible := nodeKey(ev)
	switch ev.Op.Kind {
	case codec.OpAppend:
		b.surface = append(b.surface, ev.Seq)
	case codec.OpReplace:
		gone := make(map[int64]bool, len(ev.Sources))
		for _, s := range ev.Sources {
			gone[s] = true
		}
		kept := l.items[:0:0]
		for _, it := range l.items {
			if !gone[it.seq] {
				kept = append(kept, it)
			}
		}
		l.items = kept
		b.surface = replaceSpan(b.surface, ev.Op.Start, ev.Op.End, ev.Seq)
	}
	if visible {
		l.items = append(l.items, laneItem{seq: ev.Seq, key: key})
	}
	return nil
}

// nodeKey is the normal form of a surface event, as MapRequest keys the
// unit it wrote; false for one that projects to nothing.
func nodeKey(ev *codec.Event) (digest, bool) {
	raws := func(c codec.Content) [][]byte {
		out := make([][]byte, len(c.Blocks))
		for i, bl := range c.Blocks {
			out[i] = bl.Raw
		}
		return out
	}
	switch d := ev.Data.(type) {
	case *codec.UserMessage:
		if bs := d.Content.Blocks; len(bs) == 1 && bs[0].Type == codec.BlockToolResult {
			return resultKey(bs[0].ToolCallID, bs[0].IsError, raws(bs[0].Inner)), true
		}
		return contentKey(unitUser, "", raws(d.Content)), true
	case *codec.ContextMessage:
		return contentKey(unitContext, d.Source.Kind, raws(d.Content)), true
	case *codec.ToolResult:
		return resultKey(d.CallID, d.IsError, raws(d.Content)), true
	case *codec.AssistantMessage:
		k := assistantKey(raws(d.Content))
		return k, k != emptyAssistant
	}
	return digest{}, false
}

// originSeq is the seq a gateway event's origin names (-1: none).
func originSeq(ev *codec.Event) int64 {
	n, ok := value(ev.Raw).path("data", "origin", "seq").num()
	if !ok {
		return -1
	}
	return int64(n)
}
