package wire_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/sessionlog/sessionlog/wire"

	"github.com/sessionlog/sessionlog/internal/corpus"
)

// TestAnthropicShapes renders every request of the corpus with
// anthropic-messages, which has no reference implementation, and checks
// the rules of Anthropic's Messages API on each body: roles are only user
// and assistant, no text block is empty, tool_use.input is an object,
// every tool_result answers an earlier tool_use id, max_tokens is present
// and positive, and the body is one JSON object ending in stream:true.
func TestAnthropicShapes(t *testing.T) {
	files := corpus.With(t, "requests.expected.jsonl")
	r, err := wire.Lookup(wire.AnthropicMessages)
	if err != nil {
		t.Fatal(err)
	}
	bodies, toolResults := 0, 0
	for _, file := range files {
		dir := filepath.Dir(file)
		steps, err := corpusSteps(t, filepath.Join(dir, "session.jsonl"))
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(dir), err)
		}
		for _, s := range steps {
			if s.Null {
				continue
			}
			body, err := r.AppendBody(nil, s.Request, &s.Header)
			if err != nil {
				t.Fatalf("%s step %d.%d: %v", filepath.Base(dir), s.Turn, s.Step, err)
			}
			bodies++
			for _, p := range anthropicShape(body, &toolResults) {
				t.Errorf("%s step %d.%d: %s", filepath.Base(dir), s.Turn, s.Step, p)
			}
		}
	}
	if bodies == 0 || toolResults == 0 {
		t.Fatalf("checked %d bodies holding %d tool results: the corpus exercised nothing", bodies, toolResults)
	}
	t.Logf("%d bodies, %d tool results, all within the API's rules", bodies, toolResults)
}

// anthropicShape returns the API rules body breaks.
func anthropicShape(body []byte, toolResults *int) []string {
	var req struct {
		MaxTokens *int `json:"max_tokens"`
		Stream    bool `json:"stream"`
		Messages  []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string          `json:"type"`
				Text      *string         `json:"text"`
				ID        string          `json:"id"`
				Input     json.RawMessage `json:"input"`
				ToolUseID string          `json:"tool_use_id"`
				Content   []struct {
					Type string  `json:"type"`
					Text *string `json:"text"`
				} `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return []string{"the body is not JSON: " + err.Error()}
	}
	var bad []string
	if req.MaxTokens == nil || *req.MaxTokens <= 0 {
		bad = append(bad, "max_tokens missing or not positive")
	}
	if !req.Stream {
		bad = append(bad, "stream is not true")
	}
	uses := map[string]bool{}
	for _, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			bad = append(bad, "message role "+m.Role)
		}
		if len(m.Content) == 0 {
			bad = append(bad, "a message with no blocks")
		}
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				if b.Text == nil || *b.Text == "" {
					bad = append(bad, "an empty text block")
				}
			case "tool_use":
				var obj map[string]json.RawMessage
				if json.Unmarshal(b.Input, &obj) != nil || obj == nil {
					bad = append(bad, "tool_use.input is not an object")
				}
				if m.Role != "assistant" {
					bad = append(bad, "tool_use outside an assistant message")
				}
				uses[b.ID] = true
			case "tool_result":
				*toolResults++
				if !uses[b.ToolUseID] {
					bad = append(bad, "tool_result "+b.ToolUseID+" answers no earlier tool_use")
				}
				for _, c := range b.Content {
					if c.Type != "text" || c.Text == nil || *c.Text == "" {
						bad = append(bad, "a tool_result content block that is not non-empty text")
					}
				}
			default:
				bad = append(bad, "block type "+b.Type)
			}
		}
	}
	return bad
}
