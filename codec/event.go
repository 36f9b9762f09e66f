package codec

import (
	"github.com/cockroachdb/errors"
)

// Event type names (docs/format.md#event-types). Part of the interchange and storage format.
const (
	TypeTurnStart        = "turn/start"
	TypeTurnEnd          = "turn/end"
	TypeStepStart        = "step/start"
	TypeStepEnd          = "step/end"
	TypeUserMessage      = "user/message"
	TypePromptBlocked    = "prompt/blocked"
	TypeContextMessage   = "context/message"
	TypeSteeringMessage  = "steering/message"
	TypeAssistantChunk   = "assistant/chunk"
	TypeAssistantMessage = "assistant/message"
	TypeToolCall         = "tool/call"
	TypeToolResult       = "tool/result"
	TypeRequestHeader    = "request/header"
	TypeHeaderDelta      = "request/header-delta"
	TypeRequestDigest    = "request/digest"
	TypeCompactStart     = "compact/start"
	TypeCompactSummary   = "compact/summary"
	TypeCompactEnd       = "compact/end"
)

// IsSurfaceType reports whether events of type t carry surface markers and
// take part in the surface (docs/rules.md#surface).
func IsSurfaceType(t string) bool {
	switch t {
	case TypeUserMessage, TypeAssistantMessage, TypeToolResult, TypeContextMessage, TypeSteeringMessage:
		return true
	}
	return false
}

// OpKind says how a surface event changes the surface.
type OpKind uint8

const (
	// OpNone: the event carries no surfaceOp (non-surface types).
	OpNone OpKind = iota
	// OpAppend pushes the event's seq onto the surface.
	OpAppend
	// OpReplace replaces the surface nodes from Start to End (by position).
	OpReplace
)

// SurfaceOp is an event's surfaceOp (docs/format.md#envelope, docs/rules.md#surface).
type SurfaceOp struct {
	Kind       OpKind
	Start, End int64 // OpReplace only
}

// Event is one decoded event: its storage form and a typed view of the
// fields the engine reads (docs/format.md#events).
//
// INVARIANTS: Raw is the exact stored payload; every other field is a view
// decoded from it, so re-encoding an Event means writing Raw.
type Event struct {
	// Raw is the order-preserving msgpack image of the whole event object.
	// It aliases the buffer it was decoded from.
	Raw  []byte
	Type string
	Seq  int64
	// Time is informational; rebuild never reads it.
	Time float64
	Op   SurfaceOp
	// Sources is sourceEventSeqs; HasSources tells absent from empty.
	Sources    []int64
	HasSources bool
	// Data is the typed view of data: one of the *TurnStart … *CompactEnd
	// types of this package, or *Opaque for a type the engine does not know.
	Data Data
}

// AppendJSON appends the event's canonical JSON line (without newline).
func (e *Event) AppendJSON(dst []byte) ([]byte, error) {
	out, n, err := ToJSON(dst, e.Raw)
	if err == nil && n != len(e.Raw) {
		err = corruptf("codec: %d trailing bytes after the event", errors.Safe(len(e.Raw)-n))
	}
	return out, err
}

// ParseEvent decodes one JSON event line (without its newline) strictly:
// FromJSON, then DecodeEvent. The returned Event's Raw is newly allocated.
func ParseEvent(line []byte, lim Limits) (Event, error) {
	raw, err := FromJSON(nil, line, lim)
	if err != nil {
		return Event{}, err
	}
	return DecodeEvent(raw)
}

// DecodeEvent decodes the typed view of a stored event payload and checks
// the envelope rules of docs/format.md#envelope and the surface-marker rules of docs/rules.md#surface that
// need no other event: allowed keys, types, surfaceOp required exactly on
// surface types, sourceEventSeqs only there, without duplicates, every
// entry below seq, and non-empty except on assistant/message. Errors name
// the seq when it is known and are marked ErrInvalid or ErrCorrupt.
func DecodeEvent(raw []byte) (Event, error) {
	e := Event{Raw: raw, Seq: -1}
	err := e.decode(false)
	if err != nil && e.Seq >= 0 {
		err = AtSeq(err, e.Seq)
	}
	return e, err
}

// decode decodes e.Raw into e. When strict, it also checks everything
// ValidateValue checks, as it reads, and any refusal may be errStrict.
func (e *Event) decode(strict bool) error {
	r := &Reader{b: e.Raw, strict: strict, depth: maxStoredDepth}
	f := Fields{r: r}
	var data, sources, op []byte
	var have uint8
	const (
		haveType = 1 << iota
		haveSeq
		haveTime
	)
	err := f.Object("event", func(k []byte) error {
		var err error
		switch string(k) {
		case "type":
			have |= haveType
			e.Type, err = f.Name("type")
		case "seq":
			have |= haveSeq
			e.Seq, err = f.Count("seq")
		case "time":
			have |= haveTime
			e.Time, err = f.Number("time")
		case "data":
			start := r.off
			if have&haveType != 0 {
				// The usual order: the type is known, decode in place.
				e.Data, err = decodeData(e.Type, f)
			} else {
				err = f.Skip()
			}
			data = r.b[start:r.off]
		case "sourceEventSeqs":
			sources, err = f.Raw("sourceEventSeqs")
		case "surfaceOp":
			op, err = f.Raw("surfaceOp")
		default:
			return invalidf("codec: envelope key not allowed")
		}
		return err
	})
	if err != nil {
		return err
	}
	if r.Len() != 0 {
		return corruptf("codec: %d trailing bytes after the event", errors.Safe(r.Len()))
	}
	switch {
	case have&haveType == 0:
		return invalidf("codec: event has no type")
	case have&haveSeq == 0:
		return invalidf("codec: event has no seq")
	case have&haveTime == 0:
		return invalidf("codec: event has no time")
	case data == nil:
		return invalidf("codec: event has no data")
	}
	if err := e.decodeMarkers(op, sources); err != nil {
		return err
	}
	if e.Data == nil {
		e.Data, err = decodeData(e.Type, Fields{r: &Reader{b: data}})
	}
	return err
}

func (e *Event) decodeMarkers(op, sources []byte) error {
	surface := IsSurfaceType(e.Type)
	if !surface {
		if op != nil || sources != nil {
			return invalidf("codec: surface marker on non-surface type %s", errors.Safe(e.Type))
		}
		return nil
	}
	if op == nil {
		return invalidf("codec: surface type %s without surfaceOp", errors.Safe(e.Type))
	}
	var err error
	if e.Op, err = decodeSurfaceOp(op); err != nil {
		return err
	}
	if sources == nil {
		return nil
	}
	e.HasSources = true
	f := Fields{r: &Reader{b: sources}}
	if n := min(arrayLen(f.r), 256+len(sources)/3); n > 0 {
		// Room for the declared entries, up to what the bytes can hold: a
		// declared count is not yet a decoded one, but the entries are
		// distinct and non-negative, and past the 256 that fit in one or
		// two bytes each takes three at least. A long answer's thousands
		// of chunk seqs are decoded without growing the slice.
		e.Sources = make([]int64, 0, n)
	}
	ascending := true
	err = f.Array("sourceEventSeqs", func(int) error {
		s, err := f.Count("sourceEventSeqs[]")
		if err != nil {
			return err
		}
		if s >= e.Seq {
			return invalidf("codec: sourceEventSeqs entry %d is not below seq", errors.Safe(s))
		}
		if n := len(e.Sources); n > 0 && s <= e.Sources[n-1] {
			ascending = false
		}
		e.Sources = append(e.Sources, s)
		return nil
	})
	if err != nil {
		return err
	}
	if !ascending {
		// Rare (sources are written in order): check for repeats.
		seen := make(map[int64]struct{}, len(e.Sources))
		for _, s := range e.Sources {
			if _, dup := seen[s]; dup {
				return invalidf("codec: sourceEventSeqs repeats %d", errors.Safe(s))
			}
			seen[s] = struct{}{}
		}
	}
	if len(e.Sources) == 0 && e.Type != TypeAssistantMessage {
		return invalidf("codec: empty sourceEventSeqs on %s", errors.Safe(e.Type))
	}
	return nil
}

func decodeSurfaceOp(op []byte) (SurfaceOp, error) {
	r := &Reader{b: op}
	f := Fields{r: r}
	if op[0] != mpNil && (op[0]&0xe0 == 0xa0 || op[0] == mpStr8 || op[0] == mpStr16 || op[0] == mpStr32) {
		s, err := f.Str("surfaceOp")
		if err != nil {
			return SurfaceOp{}, err
		}
		if s != "append" {
			return SurfaceOp{}, invalidf("codec: surfaceOp string must be \"append\"")
		}
		return SurfaceOp{Kind: OpAppend}, nil
	}
	so := SurfaceOp{Kind: OpReplace}
	var have uint8
	err := f.Object("surfaceOp", func(k []byte) error {
		var err error
		switch string(k) {
		case "op":
			have |= 1
			var s string
			if s, err = f.Str("surfaceOp.op"); err == nil && s != "replace" {
				err = invalidf("codec: surfaceOp.op must be \"replace\"")
			}
		case "start":
			have |= 2
			so.Start, err = f.Count("surfaceOp.start")
		case "end":
			have |= 4
			so.End, err = f.Count("surfaceOp.end")
		default:
			err = invalidf("codec: surfaceOp key not allowed")
		}
		return err
	})
	if err == nil && have != 7 {
		err = invalidf("codec: surfaceOp replace needs op, start and end")
	}
	return so, err
}
