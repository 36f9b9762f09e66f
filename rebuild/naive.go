package rebuild

import (
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/header"
)

// Request rebuilds from scratch the request of the step whose step/start
// is events[start] (docs/rules.md#the-request-of-a-step): history from the surface folded over
// events[:start], header folded up to the step's first chunk, else its
// step/end, else the end of the log. It is the reference the Builder is
// checked against; its cost is linear in the log for every step.
//
// events must be the session's events from seq 0, in order.
func Request(h codec.SessionHeader, events []codec.Event, start int64) (Step, error) {
	if start < 0 || start >= int64(len(events)) {
		return Step{}, invalidf("rebuild: no event at seq %d", start)
	}
	ss, ok := events[start].Data.(*codec.StepStart)
	if !ok {
		return Step{}, invalidf("rebuild: seq %d is not a step/start", start)
	}
	f := NewFold(true)
	for i := range events[:start] {
		if err := f.Add(&events[i]); err != nil {
			return Step{}, err
		}
	}
	hist := messages(f.surface)
	var hf header.Fold
	settle := settleIndex(events, start, ss)
	for i := range events[:settle] {
		if err := hf.Add(&events[i]); err != nil {
			return Step{}, err
		}
	}
	out := Step{Turn: ss.Turn, Step: ss.Step, Start: start}
	for i := start + 1; i < settle; i++ {
		if d, ok := events[i].Data.(*codec.RequestDigest); ok && d.Turn == ss.Turn && d.Step == ss.Step {
			out.Recorded = append(out.Recorded, Recorded{Seq: i, SHA256: d.SHA256})
		}
	}
	hd, ok := hf.Current()
	if !ok {
		out.Null = true
		return out, nil
	}
	out.Header = hd
	out.Request = AppendRequest(nil, &hd, hist, h.ID)
	out.Digest = Digest(out.Request)
	return out, nil
}

// settleIndex returns the index of the event that settles the step's
// header: its first chunk or its step/end, whichever comes first (a step
// spans step/start to step/end, so a chunk after its step/end is not its
// own), else len(events).
func settleIndex(events []codec.Event, start int64, ss *codec.StepStart) int64 {
	for i := start + 1; i < int64(len(events)); i++ {
		switch d := events[i].Data.(type) {
		case *codec.AssistantChunk:
			if d.Turn == ss.Turn && d.Step == ss.Step {
				return i
			}
		case *codec.StepEnd:
			if d.Turn == ss.Turn && d.Step == ss.Step {
				return i
			}
		}
	}
	return int64(len(events))
}

// Steps rebuilds every step of a session from scratch with Request, in
// log order. Its cost is quadratic; use a Builder outside tests.
func Steps(h codec.SessionHeader, events []codec.Event) ([]Step, error) {
	var out []Step
	for i := range events {
		if _, ok := events[i].Data.(*codec.StepStart); !ok {
			continue
		}
		s, err := Request(h, events, int64(i))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
