package fakemodel

import (
	"fmt"
	"net/http"
)

const created = 1735689600 // a fixed creation time: answers are deterministic

func callID(a answer, i int) string { return fmt.Sprintf("call_fake%04d", a.ids[2+i]) }

// chatAnswer writes a reply as OpenAI's Chat Completions API does.
func chatAnswer(w http.ResponseWriter, a answer, stream, usage bool) {
	id := fmt.Sprintf("chatcmpl-fake%04d", a.ids[0])
	finish := "stop"
	if len(a.Calls) > 0 {
		finish = "tool_calls"
	}
	u := obj{"prompt_tokens", a.in, "completion_tokens", a.out, "total_tokens", a.in + a.out}
	if !stream {
		var calls []any
		for i, c := range a.Calls {
			calls = append(calls, obj{"id", callID(a, i), "type", "function", "function", obj{"name", c.Name, "arguments", c.Arguments}})
		}
		msg := obj{"role", "assistant", "content", a.Text}
		if len(calls) > 0 {
			msg = append(msg, "tool_calls", calls)
		}
		writeJSON(w, obj{"id", id, "object", "chat.completion", "created", created, "model", a.modelName(),
			"choices", []any{obj{"index", 0, "message", msg, "finish_reason", finish}}, "usage", u})
		return
	}
	s := newSSE(w)
	chunk := func(delta obj, finish any) obj {
		return obj{"id", id, "object", "chat.completion.chunk", "created", created, "model", a.modelName(),
			"choices", []any{obj{"index", 0, "delta", delta, "finish_reason", finish}}}
	}
	s.event("", chunk(obj{"role", "assistant", "content", ""}, nil))
	for _, p := range pieces(a.Text) {
		s.event("", chunk(obj{"content", p}, nil))
	}
	for i, c := range a.Calls {
		s.event("", chunk(obj{"tool_calls", []any{obj{"index", i, "id", callID(a, i), "type", "function",
			"function", obj{"name", c.Name, "arguments", ""}}}}, nil))
		for _, p := range pieces(c.Arguments) {
			s.event("", chunk(obj{"tool_calls", []any{obj{"index", i, "function", obj{"arguments", p}}}}, nil))
		}
	}
	s.event("", chunk(obj{}, finish))
	if usage {
		s.event("", obj{"id", id, "object", "chat.completion.chunk", "created", created, "model", a.modelName(),
			"choices", []any{}, "usage", u})
	}
	s.event("", "[DONE]")
}

// responsesAnswer writes a reply as OpenAI's Responses API does.
func responsesAnswer(w http.ResponseWriter, a answer, stream bool) {
	id := fmt.Sprintf("resp_fake%04d", a.ids[0])
	msgID := fmt.Sprintf("msg_fake%04d", a.ids[1])
	usage := obj{"input_tokens", a.in, "input_tokens_details", obj{"cached_tokens", 0},
		"output_tokens", a.out, "output_tokens_details", obj{"reasoning_tokens", 0}, "total_tokens", a.in + a.out}
	response := func(status string, output []any, usage any) obj {
		return obj{"id", id, "object", "response", "created_at", created, "status", status, "model", a.modelName(),
			"output", output, "usage", usage}
	}
	textPart := obj{"type", "output_text", "text", a.Text, "annotations", []any{}}
	message := func(status string, content []any) obj {
		return obj{"id", msgID, "type", "message", "status", status, "role", "assistant", "content", content}
	}
	call := func(i int, status, args string) obj {
		c := a.Calls[i]
		return obj{"id", fmt.Sprintf("fc_fake%04d", a.ids[2+i]), "type", "function_call", "status", status,
			"arguments", args, "call_id", callID(a, i), "name", c.Name}
	}
	withText := a.Text != "" || len(a.Calls) == 0
	var output []any
	if withText {
		output = append(output, message("completed", []any{textPart}))
	}
	for i, c := range a.Calls {
		output = append(output, call(i, "completed", c.Arguments))
	}
	if !stream {
		writeJSON(w, response("completed", output, usage))
		return
	}
	s := newSSE(w)
	seq := 0
	event := func(name string, fields ...any) {
		s.event(name, append(obj{"type", name, "sequence_number", seq}, fields...))
		seq++
	}
	event("response.created", "response", response("in_progress", []any{}, nil))
	event("response.in_progress", "response", response("in_progress", []any{}, nil))
	index := 0
	if withText {
		event("response.output_item.added", "output_index", index, "item", message("in_progress", []any{}))
		event("response.content_part.added", "item_id", msgID, "output_index", index, "content_index", 0,
			"part", obj{"type", "output_text", "text", "", "annotations", []any{}})
		for _, p := range pieces(a.Text) {
			event("response.output_text.delta", "item_id", msgID, "output_index", index, "content_index", 0, "delta", p)
		}
		event("response.output_text.done", "item_id", msgID, "output_index", index, "content_index", 0, "text", a.Text)
		event("response.content_part.done", "item_id", msgID, "output_index", index, "content_index", 0, "part", textPart)
		event("response.output_item.done", "output_index", index, "item", message("completed", []any{textPart}))
		index++
	}
	for i, c := range a.Calls {
		itemID := fmt.Sprintf("fc_fake%04d", a.ids[2+i])
		event("response.output_item.added", "output_index", index, "item", call(i, "in_progress", ""))
		for _, p := range pieces(c.Arguments) {
			event("response.function_call_arguments.delta", "item_id", itemID, "output_index", index, "delta", p)
		}
		event("response.function_call_arguments.done", "item_id", itemID, "output_index", index, "arguments", c.Arguments)
		event("response.output_item.done", "output_index", index, "item", call(i, "completed", c.Arguments))
		index++
	}
	event("response.completed", "response", response("completed", output, usage))
}
