package codec

import (
	"github.com/cockroachdb/errors"
)

// Data is the typed view of an event's data object. Each view holds only
// the fields the engine reads; the event's Raw carries everything.
type Data interface{ isData() }

// Source is a message's source: {kind:"user"} or {kind:"plugin",plugin}.
type Source struct {
	Kind string
	// Plugin is set for kind "plugin".
	Plugin string
}

// TurnStart is the view of turn/start.
type TurnStart struct{ Turn int64 }

// TurnEnd is the view of turn/end; Reason is reason.kind.
type TurnEnd struct {
	Turn   int64
	Reason string
}

// StepStart is the view of step/start.
type StepStart struct{ Turn, Step int64 }

// StepEnd is the view of step/end.
type StepEnd struct{ Turn, Step int64 }

// UserMessage is the view of user/message.
type UserMessage struct {
	Content Content
	Source  Source
}

// PromptBlocked is the view of prompt/blocked.
type PromptBlocked struct {
	Content Content
	Source  Source
}

// ContextMessage is the view of context/message. Envelope is "" when the
// key is absent (the "context" default).
type ContextMessage struct {
	Content  Content
	Source   Source
	Envelope string
}

// SteeringMessage is the view of steering/message.
type SteeringMessage struct {
	Turn    int64
	Content Content
	Source  Source
}

// AssistantChunk is the view of assistant/chunk; Kind is chunk.type.
type AssistantChunk struct {
	Turn, Step int64
	Kind       string
	// Text is the text of a text-delta or reasoning-delta chunk.
	Text string
}

// AssistantMessage is the view of assistant/message. Provenance is the
// stored provenance object, nil when absent.
type AssistantMessage struct {
	Turn, Step int64
	Content    Content
	Provenance []byte
}

// ToolCall is the view of tool/call.
type ToolCall struct {
	Turn, Step int64
	CallID     string
	Name       string
	Arguments  string
}

// ToolResult is the view of tool/result.
type ToolResult struct {
	Turn, Step int64
	CallID     string
	Content    Content
	IsError    bool
}

// RequestHeader is the view of request/header. Header is the stored
// EpochHeader object, decoded by package header.
type RequestHeader struct {
	Header []byte
	Reason string
}

// HeaderDelta is the view of request/header-delta: the stored data object,
// decoded by package header.
type HeaderDelta struct{ Raw []byte }

// RequestDigest is the view of request/digest.
type RequestDigest struct {
	Turn, Step int64
	SHA256     string
}

// CompactStart is the view of compact/start.
type CompactStart struct{ Turn int64 }

// CompactSummary is the view of compact/summary.
type CompactSummary struct {
	Summary Content
}

// CompactEnd is the view of compact/end; HasError tells whether error is set.
type CompactEnd struct {
	Turn     int64
	HasError bool
}

// Opaque is the view of an event type the engine does not know.
type Opaque struct{}

func (*TurnStart) isData()        {}
func (*TurnEnd) isData()          {}
func (*StepStart) isData()        {}
func (*StepEnd) isData()          {}
func (*UserMessage) isData()      {}
func (*PromptBlocked) isData()    {}
func (*ContextMessage) isData()   {}
func (*SteeringMessage) isData()  {}
func (*AssistantChunk) isData()   {}
func (*AssistantMessage) isData() {}
func (*ToolCall) isData()         {}
func (*ToolResult) isData()       {}
func (*RequestHeader) isData()    {}
func (*HeaderDelta) isData()      {}
func (*RequestDigest) isData()    {}
func (*CompactStart) isData()     {}
func (*CompactSummary) isData()   {}
func (*CompactEnd) isData()       {}
func (*Opaque) isData()           {}

// keys tracks which required keys of an object were seen.
type keys uint16

func (k *keys) need(required keys, names ...string) error {
	for i, n := range names {
		if required&(1<<i) != 0 && *k&(1<<i) == 0 {
			return invalidf("codec: missing key %s", errors.Safe(n))
		}
	}
	return nil
}

// decodeData decodes the data object at f's position for an event of type
// typ, consuming it whole.
func decodeData(typ string, f Fields) (Data, error) {
	switch typ {
	case TypeTurnStart:
		d := &TurnStart{}
		return d, turnOnly(f, &d.Turn)
	case TypeCompactStart:
		d := &CompactStart{}
		return d, turnOnly(f, &d.Turn)
	case TypeStepStart:
		d := &StepStart{}
		return d, turnStep(f, &d.Turn, &d.Step)
	case TypeStepEnd:
		d := &StepEnd{}
		return d, turnStep(f, &d.Turn, &d.Step)
	case TypeTurnEnd:
		return decodeTurnEnd(f)
	case TypeUserMessage, TypePromptBlocked, TypeContextMessage, TypeSteeringMessage:
		return decodeMessage(typ, f)
	case TypeAssistantChunk:
		return decodeChunk(f)
	case TypeAssistantMessage:
		return decodeAssistant(f)
	case TypeToolCall:
		return decodeToolCall(f)
	case TypeToolResult:
		return decodeToolResult(f)
	case TypeRequestHeader:
		return decodeRequestHeader(f)
	case TypeHeaderDelta:
		raw, err := f.RawObject("data")
		return &HeaderDelta{Raw: raw}, err
	case TypeRequestDigest:
		return decodeDigest(f)
	case TypeCompactSummary:
		return decodeSummary(f)
	case TypeCompactEnd:
		return decodeCompactEnd(f)
	}
	_, err := f.RawObject("data")
	return &Opaque{}, err
}

// scope reads the turn and step keys that step-scoped events share,
// marking bits 1 and 2 of seen.
type scope struct {
	turn, step *int64
	seen       *keys
}

// field reads key k when it is turn or step, and reports whether it was.
func (sc scope) field(f Fields, k []byte) (bool, error) {
	var err error
	switch string(k) {
	case "turn":
		*sc.seen |= 1
		*sc.turn, err = f.Count("turn")
	case "step":
		*sc.seen |= 2
		*sc.step, err = f.Count("step")
	default:
		return false, nil
	}
	return true, err
}

func turnOnly(f Fields, turn *int64) error {
	var seen keys
	err := f.Object("data", func(k []byte) error {
		if string(k) == "turn" {
			seen |= 1
			v, err := f.Count("turn")
			*turn = v
			return err
		}
		return f.Skip()
	})
	if err != nil {
		return err
	}
	return seen.need(1, "turn")
}

func turnStep(f Fields, turn, step *int64) error {
	var seen keys
	sc := scope{turn: turn, step: step, seen: &seen}
	err := f.Object("data", func(k []byte) error {
		if ok, err := sc.field(f, k); ok {
			return err
		}
		var err error
		switch string(k) {
		default:
			err = f.Skip()
		}
		return err
	})
	if err != nil {
		return err
	}
	return seen.need(3, "turn", "step")
}

func decodeTurnEnd(f Fields) (Data, error) {
	d := &TurnEnd{}
	var seen keys
	err := f.Object("data", func(k []byte) error {
		var err error
		switch string(k) {
		case "turn":
			seen |= 1
			d.Turn, err = f.Count("turn")
		case "reason":
			seen |= 2
			var kind bool
			err = f.Object("reason", func(k []byte) error {
				if string(k) == "kind" {
					kind = true
					var err error
					d.Reason, err = f.Name("reason.kind")
					return err
				}
				return f.Skip()
			})
			if err == nil && !kind {
				err = invalidf("codec: missing key reason.kind")
			}
		default:
			err = f.Skip()
		}
		return err
	})
	if err != nil {
		return d, err
	}
	return d, seen.need(3, "turn", "reason")
}

func decodeSource(f Fields) (Source, error) {
	var s Source
	var kind bool
	err := f.Object("source", func(k []byte) error {
		var err error
		switch string(k) {
		case "kind":
			kind = true
			s.Kind, err = f.Name("source.kind")
		case "plugin":
			s.Plugin, err = f.Str("source.plugin")
		default:
			err = f.Skip()
		}
		return err
	})
	if err == nil && !kind {
		err = invalidf("codec: missing key source.kind")
	}
	return s, err
}

// decodeMessage decodes user/message, prompt/blocked, context/message and
// steering/message, which share content and source.
func decodeMessage(typ string, f Fields) (Data, error) {
	var (
		content  Content
		source   Source
		envelope string
		turn     int64
		seen     keys
	)
	err := f.Object("data", func(k []byte) error {
		var err error
		switch string(k) {
		case "content":
			seen |= 1
			content, err = decodeContent(f, "content")
		case "source":
			seen |= 2
			source, err = decodeSource(f)
		case "turn":
			if typ != TypeSteeringMessage {
				return f.Skip()
			}
			seen |= 4
			turn, err = f.Count("turn")
		case "envelope":
			if typ != TypeContextMessage {
				return f.Skip()
			}
			if envelope, err = f.Str("envelope"); err == nil && envelope != "raw" && envelope != "context" {
				err = invalidf("codec: envelope must be \"raw\" or \"context\"")
			}
		default:
			err = f.Skip()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	switch typ {
	case TypeUserMessage:
		return &UserMessage{Content: content, Source: source}, seen.need(3, "content", "source")
	case TypePromptBlocked:
		return &PromptBlocked{Content: content, Source: source}, seen.need(3, "content", "source")
	case TypeContextMessage:
		return &ContextMessage{Content: content, Source: source, Envelope: envelope}, seen.need(3, "content", "source")
	}
	return &SteeringMessage{Turn: turn, Content: content, Source: source}, seen.need(7, "content", "source", "turn")
}

func decodeChunk(f Fields) (Data, error) {
	d := &AssistantChunk{}
	var seen keys
	sc := scope{turn: &d.Turn, step: &d.Step, seen: &seen}
	err := f.Object("data", func(k []byte) error {
		if ok, err := sc.field(f, k); ok {
			return err
		}
		var err error
		switch string(k) {
		case "chunk":
			seen |= 4
			err = f.Object("chunk", func(k []byte) error {
				var err error
				switch string(k) {
				case "type":
					d.Kind, err = f.Name("chunk.type")
				case "text":
					d.Text, err = f.Str("chunk.text")
				default:
					err = f.Skip()
				}
				return err
			})
			if err == nil && d.Kind == "" {
				err = invalidf("codec: missing key chunk.type")
			}
		default:
			err = f.Skip()
		}
		return err
	})
	if err != nil {
		return d, err
	}
	return d, seen.need(7, "turn", "step", "chunk")
}

func decodeAssistant(f Fields) (Data, error) {
	d := &AssistantMessage{}
	var seen keys
	sc := scope{turn: &d.Turn, step: &d.Step, seen: &seen}
	err := f.Object("data", func(k []byte) error {
		if ok, err := sc.field(f, k); ok {
			return err
		}
		var err error
		switch string(k) {
		case "content":
			seen |= 4
			d.Content, err = decodeContent(f, "content")
		case "provenance":
			d.Provenance, err = f.RawObject("provenance")
		case "usage":
			_, err = f.RawObject("usage")
		default:
			err = f.Skip()
		}
		return err
	})
	if err != nil {
		return d, err
	}
	return d, seen.need(7, "turn", "step", "content")
}

func decodeToolCall(f Fields) (Data, error) {
	d := &ToolCall{}
	var seen keys
	sc := scope{turn: &d.Turn, step: &d.Step, seen: &seen}
	err := f.Object("data", func(k []byte) error {
		if ok, err := sc.field(f, k); ok {
			return err
		}
		var err error
		switch string(k) {
		case "callId":
			seen |= 4
			d.CallID, err = f.Str("callId")
		case "name":
			seen |= 8
			d.Name, err = f.Str("name")
		case "arguments":
			seen |= 16
			d.Arguments, err = f.Str("arguments")
		default:
			err = f.Skip()
		}
		return err
	})
	if err != nil {
		return d, err
	}
	return d, seen.need(31, "turn", "step", "callId", "name", "arguments")
}

func decodeToolResult(f Fields) (Data, error) {
	d := &ToolResult{}
	var seen keys
	sc := scope{turn: &d.Turn, step: &d.Step, seen: &seen}
	err := f.Object("data", func(k []byte) error {
		if ok, err := sc.field(f, k); ok {
			return err
		}
		var err error
		switch string(k) {
		case "callId":
			seen |= 4
			d.CallID, err = f.Str("callId")
		case "content":
			seen |= 8
			d.Content, err = decodeContent(f, "content")
		case "isError":
			seen |= 16
			d.IsError, err = f.Boolean("isError")
		case "error", "meta":
			_, err = f.Raw(string(k))
		default:
			err = f.Skip()
		}
		return err
	})
	if err != nil {
		return d, err
	}
	return d, seen.need(31, "turn", "step", "callId", "content", "isError")
}

func decodeRequestHeader(f Fields) (Data, error) {
	d := &RequestHeader{}
	var seen keys
	err := f.Object("data", func(k []byte) error {
		var err error
		switch string(k) {
		case "header":
			seen |= 1
			d.Header, err = f.RawObject("header")
		case "reason":
			seen |= 2
			d.Reason, err = f.Str("reason")
			switch d.Reason {
			case "initial", "resume", "change", "fallback":
			default:
				if err == nil {
					err = invalidf("codec: unknown header reason")
				}
			}
		default:
			err = f.Skip()
		}
		return err
	})
	if err != nil {
		return d, err
	}
	return d, seen.need(3, "header", "reason")
}

func decodeDigest(f Fields) (Data, error) {
	d := &RequestDigest{}
	var seen keys
	sc := scope{turn: &d.Turn, step: &d.Step, seen: &seen}
	err := f.Object("data", func(k []byte) error {
		if ok, err := sc.field(f, k); ok {
			return err
		}
		var err error
		switch string(k) {
		case "sha256":
			seen |= 4
			d.SHA256, err = f.Str("sha256")
			if err == nil && !isHex64(d.SHA256) {
				err = invalidf("codec: sha256 must be 64 lowercase hex digits")
			}
		default:
			err = f.Skip()
		}
		return err
	})
	if err != nil {
		return d, err
	}
	return d, seen.need(7, "turn", "step", "sha256")
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func decodeSummary(f Fields) (Data, error) {
	d := &CompactSummary{}
	var seen keys
	err := f.Object("data", func(k []byte) error {
		var err error
		switch string(k) {
		case "summary":
			seen |= 1
			d.Summary, err = decodeContent(f, "summary")
		default:
			err = f.Skip()
		}
		return err
	})
	if err != nil {
		return d, err
	}
	return d, seen.need(1, "summary")
}

func decodeCompactEnd(f Fields) (Data, error) {
	d := &CompactEnd{}
	var seen keys
	err := f.Object("data", func(k []byte) error {
		var err error
		switch string(k) {
		case "turn":
			seen |= 1
			d.Turn, err = f.Count("turn")
		case "error":
			d.HasError = true
			_, err = f.Raw("error")
		default:
			err = f.Skip()
		}
		return err
	})
	if err != nil {
		return d, err
	}
	return d, seen.need(1, "turn")
}
