package wire

import (
	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/header"
)

// openAIChat is Chat Completions (docs/wire.md#openai-chat), byte-exact with DSH's own
// DeepSeek adapter.
var openAIChat = &Renderer{
	name: OpenAIChat,
	path: "/chat/completions",
	header: []Field{
		{"content-type", "application/json"},
		{"accept", "text/event-stream"},
	},
	keyHeader: "authorization",
	keyPrefix: "Bearer ",
	body:      openAIBody,
	message:   openAIMessage,
	errors:    openAIErrorCode,
	stream:    func() translator { return &openAIStream{} },
}

// openAIBody writes the body keys in docs/wire.md#openai-chat's order.
func openAIBody(w *writer, req *request, h *header.Snapshot) error {
	w.raw(`{"model":`)
	if err := w.value(req.model); err != nil {
		return err
	}
	w.raw(`,"messages":[`)
	msgs := w.msgs
	if req.system != nil {
		w.raw(`{"role":"system","content":`)
		if err := w.value(req.system); err != nil {
			return err
		}
		w.b = append(w.b, '}')
	} else if len(msgs) > 0 {
		msgs = msgs[1:] // each wire message starts with a comma
	}
	w.b = append(w.b, msgs...)
	w.raw(`],"stream":true,"stream_options":{"include_usage":true}`)
	c := &h.Config
	if c.HasThinking {
		w.raw(`,"thinking":{"type":`)
		w.str([]byte(c.Thinking))
		w.b = append(w.b, '}')
	}
	if c.HasReasoningEffort {
		w.raw(`,"reasoning_effort":`)
		w.str([]byte(c.ReasoningEffort))
	}
	if req.tools != nil {
		if err := w.tools(req.tools, `{"type":"function","function":{`, `"parameters":`, `}}`); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		key string
		val []byte
	}{{`,"temperature":`, req.temperature}, {`,"max_tokens":`, req.maxTokens}, {`,"stop":`, req.stop}} {
		if f.val != nil {
			w.raw(f.key)
			if err := w.value(f.val); err != nil {
				return err
			}
		}
	}
	w.b = append(w.b, '}')
	return nil
}

// text appends to w.text the text of every block of type typ, joined as
// strings are (docs/wire.md#openai-chat TEXT).
func (w *writer) texts(m *message, typ string) error {
	for j := range m.blocks {
		b := &m.blocks[j]
		if string(b.typ) != typ {
			continue
		}
		if !b.textOK {
			return invalidf("message %d block %d: text is not a string", errors.Safe(m.index), errors.Safe(j))
		}
		w.text = joinWTF8(w.text, b.text)
	}
	return nil
}

// resultText appends TEXT of a tool-result's content to w.text.
func (w *writer) resultText(m *message, j int) error {
	b := &m.blocks[j]
	if b.content == nil {
		return nil
	}
	var ib block
	return eachElem(b.content, "content", func(k int, v []byte) error {
		if err := readBlock(v, &ib); err != nil {
			return err
		}
		if string(ib.typ) != "text" {
			return nil
		}
		if !ib.textOK {
			return invalidf("message %d block %d: content block %d: text is not a string", errors.Safe(m.index), errors.Safe(j), errors.Safe(k))
		}
		w.text = joinWTF8(w.text, ib.text)
		return nil
	})
}

// sep starts a wire message in the messages buffer.
func sep(w *writer) { w.b = append(w.b, ',') }

// openAIMessage writes the wire messages of one request message, each
// preceded by a comma.
func openAIMessage(w *writer, m *message) error {
	w.text = w.text[:0]
	if err := w.texts(m, "text"); err != nil {
		return err
	}
	switch string(m.role) {
	case "system":
		sep(w)
		w.raw(`{"role":"system","content":`)
		w.str(w.text)
		w.b = append(w.b, '}')
		return nil
	case "assistant":
		return openAIAssistant(w, m)
	}
	results := m.count("tool-result")
	if len(w.text) > 0 || results == 0 {
		sep(w)
		w.raw(`{"role":"user","content":`)
		w.str(w.text)
		w.b = append(w.b, '}')
	}
	for j := range m.blocks {
		b := &m.blocks[j]
		if string(b.typ) != "tool-result" {
			continue
		}
		if b.toolCallID == nil {
			return invalidf("message %d block %d: tool-result without toolCallId", errors.Safe(m.index), errors.Safe(j))
		}
		sep(w)
		w.raw(`{"role":"tool","tool_call_id":`)
		if err := w.value(b.toolCallID); err != nil {
			return err
		}
		w.raw(`,"content":`)
		w.text = w.text[:0]
		if err := w.resultText(m, j); err != nil {
			return err
		}
		if len(w.text) == 0 {
			w.raw(`"(no output)"`)
		} else {
			w.str(w.text)
		}
		w.b = append(w.b, '}')
	}
	return nil
}

// openAIAssistant writes an assistant message (its text is in w.text):
// content, reasoning_content (with tool calls only), tool_calls.
func openAIAssistant(w *writer, m *message) error {
	calls := m.count("tool-call")
	sep(w)
	w.raw(`{"role":"assistant","content":`)
	switch {
	case len(w.text) > 0:
		w.str(w.text)
	case calls > 0:
		w.raw(`""`)
	default:
		w.raw(`null`)
	}
	if calls == 0 {
		w.b = append(w.b, '}')
		return nil
	}
	w.text = w.text[:0]
	if err := w.texts(m, "reasoning"); err != nil {
		return err
	}
	if len(w.text) > 0 {
		w.raw(`,"reasoning_content":`)
		w.str(w.text)
	}
	w.raw(`,"tool_calls":[`)
	n := 0
	for j := range m.blocks {
		b := &m.blocks[j]
		if string(b.typ) != "tool-call" {
			continue
		}
		if n > 0 {
			w.b = append(w.b, ',')
		}
		n++
		w.b = append(w.b, '{')
		if b.id != nil {
			w.raw(`"id":`)
			if err := w.value(b.id); err != nil {
				return err
			}
			w.b = append(w.b, ',')
		}
		w.raw(`"type":"function","function":{`)
		comma := false
		if err := w.field(&comma, `"name":`, b.name); err != nil {
			return err
		}
		if err := w.field(&comma, `"arguments":`, b.args); err != nil {
			return err
		}
		w.raw(`}}`)
	}
	w.raw(`]}`)
	return nil
}
