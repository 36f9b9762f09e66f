package wire

import (
	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/header"
)

// anthropicMessages is Anthropic's Messages API (docs/wire.md#anthropic-messages).
var anthropicMessages = &Renderer{
	name: AnthropicMessages,
	path: "/v1/messages",
	header: []Field{
		{"anthropic-version", "2023-06-01"},
		{"content-type", "application/json"},
		{"accept", "text/event-stream"},
	},
	keyHeader: "x-api-key",
	body:      anthropicBody,
	message:   anthropicMessage,
	errors:    anthropicErrorCode,
	stream:    func() translator { return &anthropicStream{} },
}

// defaultMaxTokens is max_tokens when the request has no maxTokens.
const defaultMaxTokens = 4096

// anthropicBody writes the body keys in docs/wire.md#anthropic-messages's order.
func anthropicBody(w *writer, req *request, h *header.Snapshot) error {
	w.raw(`{"model":`)
	if err := w.value(req.model); err != nil {
		return err
	}
	maxTokens := int64(defaultMaxTokens)
	w.raw(`,"max_tokens":`)
	if req.maxTokens != nil {
		t := token(req.maxTokens)
		if t.Kind != codec.KindInt {
			return invalidf("request maxTokens is not an integer")
		}
		maxTokens = t.Int
	}
	w.b = codec.AppendJSONInt(w.b, maxTokens)
	if s, ok := str(req.system); ok && len(s) > 0 {
		w.raw(`,"system":`)
		w.str(s)
	}
	w.raw(`,"messages":[`)
	if len(w.msgs) > 0 {
		w.b = append(w.b, w.msgs[1:]...) // each wire message starts with a comma
	}
	w.b = append(w.b, ']')
	if req.tools != nil {
		if err := w.tools(req.tools, `{`, `"input_schema":`, `}`); err != nil {
			return err
		}
	}
	if req.temperature != nil {
		w.raw(`,"temperature":`)
		if err := w.value(req.temperature); err != nil {
			return err
		}
	}
	if req.stop != nil {
		w.raw(`,"stop_sequences":`)
		if err := w.value(req.stop); err != nil {
			return err
		}
	}
	if h.Config.HasThinking && h.Config.Thinking == "enabled" {
		w.raw(`,"thinking":{"type":"enabled","budget_tokens":`)
		w.b = codec.AppendJSONInt(w.b, maxTokens/2)
		w.b = append(w.b, '}')
	}
	w.raw(`,"stream":true}`)
	return nil
}

// anthropicMessage writes one request message; a message left with no
// blocks is dropped.
func anthropicMessage(w *writer, m *message) error {
	assistant := string(m.role) == "assistant"
	mark := len(w.b)
	w.b = append(w.b, ',')
	if assistant {
		w.raw(`{"role":"assistant","content":[`)
	} else {
		w.raw(`{"role":"user","content":[`)
	}
	n := 0
	sep := func() {
		if n > 0 {
			w.b = append(w.b, ',')
		}
		n++
	}
	for j := range m.blocks {
		b := &m.blocks[j]
		switch string(b.typ) {
		case "text":
			if !b.textOK {
				return invalidf("message %d block %d: text is not a string", errors.Safe(m.index), errors.Safe(j))
			}
			if len(b.text) > 0 {
				sep()
				w.raw(`{"type":"text","text":`)
				w.str(b.text)
				w.b = append(w.b, '}')
			}
		case "tool-call":
			if assistant {
				sep()
				if err := anthropicToolUse(w, b); err != nil {
					return err
				}
			}
		case "tool-result":
			if !assistant {
				sep()
				if err := anthropicToolResult(w, m, j); err != nil {
					return err
				}
			}
		}
	}
	if n == 0 {
		w.b = w.b[:mark]
		return nil
	}
	w.raw(`]}`)
	return nil
}

// anthropicToolUse writes a tool-call block as tool_use; input is the
// arguments' JSON value, inserted as its bytes, when it is an object, else
// {}.
func anthropicToolUse(w *writer, blk *block) error {
	w.raw(`{"type":"tool_use"`)
	if blk.id != nil {
		w.raw(`,"id":`)
		if err := w.value(blk.id); err != nil {
			return err
		}
	}
	if blk.name != nil {
		w.raw(`,"name":`)
		if err := w.value(blk.name); err != nil {
			return err
		}
	}
	w.raw(`,"input":`)
	args, _ := str(blk.args)
	if isObject(args) {
		w.b = append(w.b, args...)
	} else {
		w.raw(`{}`)
	}
	w.b = append(w.b, '}')
	return nil
}

// isObject reports whether text is one JSON object (by codec's strict
// rules: no duplicate keys, valid UTF-8).
func isObject(text []byte) bool {
	mp, err := codec.FromJSON(nil, text, codec.Limits{})
	return err == nil && token(mp).Kind == codec.KindObject
}

// anthropicToolResult writes a tool-result block as tool_result: its
// content's non-empty text blocks, and is_error only when true.
func anthropicToolResult(w *writer, m *message, j int) error {
	blk := &m.blocks[j]
	w.raw(`{"type":"tool_result","tool_use_id":`)
	if blk.toolCallID == nil {
		return invalidf("message %d block %d: tool-result without toolCallId", errors.Safe(m.index), errors.Safe(j))
	}
	if err := w.value(blk.toolCallID); err != nil {
		return err
	}
	isError := blk.isError
	w.raw(`,"content":[`)
	n := 0
	if blk.content != nil {
		var ib block
		err := eachElem(blk.content, "content", func(k int, b []byte) error {
			if err := readBlock(b, &ib); err != nil {
				return err
			}
			if string(ib.typ) != "text" {
				return nil
			}
			if !ib.textOK {
				return invalidf("message %d block %d: content block %d: text is not a string", errors.Safe(m.index), errors.Safe(j), errors.Safe(k))
			}
			if len(ib.text) == 0 {
				return nil
			}
			if n > 0 {
				w.b = append(w.b, ',')
			}
			n++
			w.raw(`{"type":"text","text":`)
			w.str(ib.text)
			w.b = append(w.b, '}')
			return nil
		})
		if err != nil {
			return err
		}
	}
	w.b = append(w.b, ']')
	if isError {
		w.raw(`,"is_error":true`)
	}
	w.b = append(w.b, '}')
	return nil
}
