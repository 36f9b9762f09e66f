package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// anthropicAnswer writes a reply as Anthropic's Messages API does.
func anthropicAnswer(w http.ResponseWriter, a answer, stream bool) {
	id := fmt.Sprintf("msg_fake%04d", a.ids[0])
	stop := "end_turn"
	if len(a.Calls) > 0 {
		stop = "tool_use"
	}
	var blocks []any
	if a.Text != "" || len(a.Calls) == 0 {
		blocks = append(blocks, obj{"type", "text", "text", a.Text})
	}
	for i, c := range a.Calls {
		blocks = append(blocks, obj{"type", "tool_use", "id", toolUseID(a, i), "name", c.Name, "input", json.RawMessage(c.Arguments)})
	}
	usage := func(out int) obj {
		return obj{"input_tokens", a.in, "cache_creation_input_tokens", 0, "cache_read_input_tokens", 0, "output_tokens", out}
	}
	w.Header().Set("Request-Id", fmt.Sprintf("req_fake%04d", a.ids[0]))
	if !stream {
		writeJSON(w, obj{"id", id, "type", "message", "role", "assistant", "model", a.modelName(),
			"content", blocks, "stop_reason", stop, "stop_sequence", nil, "usage", usage(a.out)})
		return
	}
	s := newSSE(w)
	s.event("message_start", obj{"type", "message_start", "message", obj{"id", id, "type", "message", "role", "assistant",
		"model", a.modelName(), "content", []any{}, "stop_reason", nil, "stop_sequence", nil, "usage", usage(1)}})
	index := 0
	if a.Text != "" || len(a.Calls) == 0 {
		s.event("content_block_start", obj{"type", "content_block_start", "index", index, "content_block", obj{"type", "text", "text", ""}})
		s.event("ping", obj{"type", "ping"})
		for _, p := range pieces(a.Text) {
			s.event("content_block_delta", obj{"type", "content_block_delta", "index", index, "delta", obj{"type", "text_delta", "text", p}})
		}
		s.event("content_block_stop", obj{"type", "content_block_stop", "index", index})
		index++
	}
	for i, c := range a.Calls {
		s.event("content_block_start", obj{"type", "content_block_start", "index", index,
			"content_block", obj{"type", "tool_use", "id", toolUseID(a, i), "name", c.Name, "input", obj{}}})
		s.event("content_block_delta", obj{"type", "content_block_delta", "index", index, "delta", obj{"type", "input_json_delta", "partial_json", ""}})
		for _, p := range pieces(c.Arguments) {
			s.event("content_block_delta", obj{"type", "content_block_delta", "index", index, "delta", obj{"type", "input_json_delta", "partial_json", p}})
		}
		s.event("content_block_stop", obj{"type", "content_block_stop", "index", index})
		index++
	}
	s.event("message_delta", obj{"type", "message_delta", "delta", obj{"stop_reason", stop, "stop_sequence", nil},
		"usage", obj{"output_tokens", a.out}})
	s.event("message_stop", obj{"type", "message_stop"})
}

func toolUseID(a answer, i int) string { return fmt.Sprintf("toolu_fake%04d", a.ids[2+i]) }
