package rebuild

import "github.com/sessionlog/sessionlog/codec"

// Project returns the JSON of the message a surface event projects to
// (docs/rules.md#derived-history), or nil when it projects to nothing (an assistant message with
// empty content, or an event that is not a surface type). Content blocks
// and provenance are written exactly as stored, unknown keys included.
func Project(ev *codec.Event) []byte {
	switch d := ev.Data.(type) {
	case *codec.UserMessage:
		return userMessage(d.Content)
	case *codec.AssistantMessage:
		if len(d.Content.Blocks) == 0 {
			return nil
		}
		b := append([]byte(nil), `{"role":"assistant","content":`...)
		b = d.Content.AppendJSON(b)
		if d.Provenance != nil {
			b = append(b, `,"provenance":`...)
			b, _, _ = codec.ToJSON(b, d.Provenance)
		}
		return append(b, '}')
	case *codec.ToolResult:
		b := append([]byte(nil), `{"role":"user","content":[{"type":"tool-result","toolCallId":`...)
		b = codec.AppendJSONString(b, []byte(d.CallID))
		b = append(b, `,"content":`...)
		b = d.Content.AppendJSON(b)
		if d.IsError {
			b = append(b, `,"isError":true}]}`...)
		} else {
			b = append(b, `,"isError":false}]}`...)
		}
		return b
	case *codec.ContextMessage:
		if d.Envelope == "raw" {
			return userMessage(d.Content)
		}
		return wrapped("context", d.Source.Kind, d.Content)
	case *codec.SteeringMessage:
		return wrapped("steering", d.Source.Kind, d.Content)
	}
	return nil
}

func userMessage(c codec.Content) []byte {
	b := append([]byte(nil), `{"role":"user","content":`...)
	b = c.AppendJSON(b)
	return append(b, '}')
}

// wrapped is the tagged projection of context and steering messages:
// <tag source="K"> … </tag>, K being source.kind as a JSON string.
func wrapped(tag, kind string, c codec.Content) []byte {
	open := append([]byte("<"+tag+" source="), codec.AppendJSONString(nil, []byte(kind))...)
	open = append(open, '>')
	b := append([]byte(nil), `{"role":"user","content":[{"type":"text","text":`...)
	b = codec.AppendJSONString(b, open)
	b = append(b, '}')
	if len(c.Blocks) > 0 {
		b = append(b, ',')
		b = c.AppendElements(b)
	}
	b = append(b, `,{"type":"text","text":"</`...)
	b = append(b, tag...)
	return append(b, `>"}]}`...)
}
