package wire

import (
	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/header"
)

// openAIChat is Chat Completions (SPEC §12.2), byte-exact with DSH's own
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
	errors:    openAIErrorCode,
	stream:    func() translator { return &openAIStream{} },
}

// openAIBody writes the body keys in SPEC §12.2's order.
func openAIBody(w *writer, req *request, h *header.Snapshot) error {
	w.raw(`{"model":`)
	if err := w.value(req.model); err != nil {
		return err
	}
	w.raw(`,"messages":[`)
	first := true
	sep := func() {
		if !first {
			w.b = append(w.b, ',')
		}
		first = false
	}
	if req.system != nil {
		sep()
		w.raw(`{"role":"system","content":`)
		if err := w.value(req.system); err != nil {
			return err
		}
		w.b = append(w.b, '}')
	}
	var blk block
	for i, m := range req.messages {
		if err := openAIMessage(w, m, i, sep, &blk); err != nil {
			return err
		}
	}
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
		if err := openAITools(w, req.tools); err != nil {
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

// openAITools writes "tools" when the request has one or more.
func openAITools(w *writer, tools []byte) error {
	n := 0
	err := eachElem(tools, "request.tools", func(_ int, t []byte) error {
		var name, desc, params []byte
		err := eachKey(t, "tool", func(key, val []byte) error {
			switch string(key) {
			case "name":
				name = val
			case "description":
				desc = val
			case "parameters":
				params = val
			}
			return nil
		})
		if err != nil {
			return err
		}
		if n == 0 {
			w.raw(`,"tools":[`)
		} else {
			w.b = append(w.b, ',')
		}
		n++
		w.raw(`{"type":"function","function":{`)
		comma := false
		for _, f := range []struct {
			key string
			val []byte
		}{{`"name":`, name}, {`"description":`, desc}, {`"parameters":`, params}} {
			if err := w.field(&comma, f.key, f.val); err != nil {
				return err
			}
		}
		w.raw(`}}`)
		return nil
	})
	if n > 0 {
		w.b = append(w.b, ']')
	}
	return err
}

// appendText appends TEXT(blocks) of a content array to w.text: the text
// of every text block, concatenated as strings (SPEC §12.2). It reports
// whether any tool-call or tool-result block was seen.
func (w *writer) appendText(content []byte, what func() string, blk *block, visit func(*block) error) error {
	if content == nil {
		return nil
	}
	return eachElem(content, "content", func(j int, b []byte) error {
		if err := readBlock(b, blk, what); err != nil {
			return err
		}
		if string(blk.typ) == "text" {
			if !blk.textOK {
				return invalidf("%s block %d: text is not a string", errors.Safe(what()), errors.Safe(j))
			}
			w.text = joinWTF8(w.text, blk.text)
		}
		if visit != nil {
			return visit(blk)
		}
		return nil
	})
}

// openAIMessage writes the wire messages of one request message.
func openAIMessage(w *writer, m []byte, i int, sep func(), blk *block) error {
	what := func() string { return "message " + itoa(i) }
	var role, content []byte
	err := eachKey(m, "message", func(key, val []byte) error {
		switch string(key) {
		case "role":
			role, _ = str(val)
		case "content":
			content = val
		}
		return nil
	})
	if err != nil {
		return err
	}
	w.text = w.text[:0]
	switch string(role) {
	case "system":
		if err := w.appendText(content, what, blk, nil); err != nil {
			return err
		}
		sep()
		w.raw(`{"role":"system","content":`)
		w.str(w.text)
		w.b = append(w.b, '}')
		return nil
	case "assistant":
		return openAIAssistant(w, content, what, sep, blk)
	}
	results := 0
	if err := w.appendText(content, what, blk, func(b *block) error {
		if string(b.typ) == "tool-result" {
			results++
		}
		return nil
	}); err != nil {
		return err
	}
	if len(w.text) > 0 || results == 0 {
		sep()
		w.raw(`{"role":"user","content":`)
		w.str(w.text)
		w.b = append(w.b, '}')
	}
	if results == 0 {
		return nil
	}
	return eachElem(content, "content", func(j int, b []byte) error {
		if err := readBlock(b, blk, what); err != nil {
			return err
		}
		if string(blk.typ) != "tool-result" {
			return nil
		}
		id, inner := blk.toolCallID, blk.content
		if id == nil {
			return invalidf("%s block %d: tool-result without toolCallId", errors.Safe(what()), errors.Safe(j))
		}
		sep()
		w.raw(`{"role":"tool","tool_call_id":`)
		if err := w.value(id); err != nil {
			return err
		}
		w.raw(`,"content":`)
		w.text = w.text[:0]
		var ib block
		if err := w.appendText(inner, what, &ib, nil); err != nil {
			return err
		}
		if len(w.text) == 0 {
			w.raw(`"(no output)"`)
		} else {
			w.str(w.text)
		}
		w.b = append(w.b, '}')
		return nil
	})
}

// openAIAssistant writes an assistant message: content, reasoning_content
// (with tool calls only), tool_calls.
func openAIAssistant(w *writer, content []byte, what func() string, sep func(), blk *block) error {
	calls := 0
	if err := w.appendText(content, what, blk, func(b *block) error {
		if string(b.typ) == "tool-call" {
			calls++
		}
		return nil
	}); err != nil {
		return err
	}
	sep()
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
	// reasoning_content: the text of the reasoning blocks, when non-empty.
	w.text = w.text[:0]
	err := eachElem(content, "content", func(j int, b []byte) error {
		if err := readBlock(b, blk, what); err != nil {
			return err
		}
		if string(blk.typ) == "reasoning" {
			if !blk.textOK {
				return invalidf("%s block %d: text is not a string", errors.Safe(what()), errors.Safe(j))
			}
			w.text = joinWTF8(w.text, blk.text)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(w.text) > 0 {
		w.raw(`,"reasoning_content":`)
		w.str(w.text)
	}
	w.raw(`,"tool_calls":[`)
	n := 0
	err = eachElem(content, "content", func(j int, b []byte) error {
		if err := readBlock(b, blk, what); err != nil {
			return err
		}
		if string(blk.typ) != "tool-call" {
			return nil
		}
		if n > 0 {
			w.b = append(w.b, ',')
		}
		n++
		w.b = append(w.b, '{')
		if blk.id != nil {
			w.raw(`"id":`)
			if err := w.value(blk.id); err != nil {
				return err
			}
			w.b = append(w.b, ',')
		}
		w.raw(`"type":"function","function":{`)
		comma := false
		if err := w.field(&comma, `"name":`, blk.name); err != nil {
			return err
		}
		if err := w.field(&comma, `"arguments":`, blk.args); err != nil {
			return err
		}
		w.raw(`}}`)
		return nil
	})
	w.raw(`]}`)
	return err
}
