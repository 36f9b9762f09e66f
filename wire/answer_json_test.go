package wire_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/wire"
)

// show renders chunks one per line.
func showChunks(cs []wire.Chunk, err error) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%s %d %s %q %s %s %q %s %+v %s\n", c.Type, c.Index, c.BlockType, c.Text, c.ID, c.Name, c.ArgumentsDelta, c.Block, c.Usage, c.Reason)
	}
	if err != nil {
		fmt.Fprintf(&b, "error %v\n", err)
	}
	return b.String()
}

// TestTranslateJSON: an answer that was not streamed gives the chunks
// of the same answer streamed, one delta per block.
func TestTranslateJSON(t *testing.T) {
	for _, tt := range []struct {
		name, renderer, body, stream string
	}{
		{
			name: "anthropic", renderer: "anthropic-messages",
			body: `{"id":"m","type":"message","role":"assistant","model":"c","content":[{"type":"thinking","thinking":"hmm","signature":"s"},{"type":"text","text":"Looking."},{"type":"tool_use","id":"t1","name":"ls","input":{"path":"."}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":7}}`,
			stream: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":10,\"cache_read_input_tokens\":5,\"output_tokens\":1}}}\n\n" +
				"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n" +
				"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm\"}}\n\n" +
				"data: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
				"data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
				"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Looking.\"}}\n\n" +
				"data: {\"type\":\"content_block_stop\",\"index\":1}\n\n" +
				"data: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"ls\",\"input\":{}}}\n\n" +
				"data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\":\\\".\\\"}\"}}\n\n" +
				"data: {\"type\":\"content_block_stop\",\"index\":2}\n\n" +
				"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":7}}\n\n" +
				"data: {\"type\":\"message_stop\"}\n\n",
		},
		{
			name: "openai-chat", renderer: "openai-chat",
			body: `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Looking.","reasoning_content":"hmm","tool_calls":[{"id":"t1","type":"function","function":{"name":"ls","arguments":"{\"path\":\".\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":7}}`,
			stream: "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"reasoning_content\":\"hmm\"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Looking.\"}}]}\n\n" +
				"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"t1\",\"type\":\"function\",\"function\":{\"name\":\"ls\",\"arguments\":\"{\\\"path\\\":\\\".\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n" +
				"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":7}}\n\n" +
				"data: [DONE]\n\n",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := wire.Lookup(tt.renderer)
			if err != nil {
				t.Fatal(err)
			}
			got := showChunks(r.TranslateJSON(nil, []byte(tt.body)))
			tr := r.NewTranslator()
			cs, err := tr.Feed(nil, []byte(tt.stream))
			if err == nil {
				cs, err = tr.End(cs)
			}
			if want := showChunks(cs, err); got != want {
				t.Errorf("got\n%swant\n%s", got, want)
			}
		})
	}
	for _, tt := range []struct{ renderer, body, code string }{
		{"anthropic-messages", ``, wire.CodeEmpty},
		{"anthropic-messages", `[1]`, wire.CodeMalformed},
		{"openai-chat", `{"choices":[]}`, wire.CodeMalformed},
		{"anthropic-messages", `{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`, "OVERLOADED_ERROR"},
		{"openai-chat", `{"error":{"code":"server_error","message":"busy"}}`, "SERVER_ERROR"},
	} {
		r, _ := wire.Lookup(tt.renderer)
		cs, err := r.TranslateJSON(nil, []byte(tt.body))
		var we *wire.Error
		// An error object ends as its stream's error event does: an
		// error, or a finish of kind error.
		if errors.As(err, &we) && we.Code == tt.code {
			continue
		}
		if n := len(cs); err != nil || n == 0 || !strings.Contains(string(cs[n-1].Reason), tt.code) {
			t.Errorf("%s %s: %s want %s", tt.renderer, tt.body, showChunks(cs, err), tt.code)
		}
	}
}
