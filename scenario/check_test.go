package scenario_test

import (
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/scenario"
)

// TestParseErrors: a scenario that cannot run is refused whole, before
// anything runs, by an ErrInvalid error that says where: line and column
// for JSON syntax, wrong types and unknown keys; scenario turn, reply and
// block for a malformed content block.
func TestParseErrors(t *testing.T) {
	tests := []struct{ name, js, want string }{
		{"syntax", "{\"turns\":[\n  {\"prompt\":\"hi\",}]}",
			`scenario: line 2, column 18: JSON syntax: invalid character '}' looking for beginning of object key string`},
		{"ends early", "{\"turns\":[\n", `scenario: line 2, column 1: the JSON ends early`},
		{"wrong type", "{\"turns\":[\n {\"prompt\":5}]}", `scenario: line 2, column 12: turns.prompt is a number where a string belongs`},
		{"reply not an array", `{"turns":[{"prompt":"hi","replies":[{"type":"text"}]}]}`,
			`scenario turn 1, reply 1: content is not an array of blocks`},
		{"unknown top key", "{\"turns\":[{\"prompt\":\"hi\"}],\n \"sistem\":\"typo\"}",
			`scenario: line 2, column 2: unknown key "sistem" in the scenario object (known: session, config, system, tools, prefix, compaction, turns)`},
		{"unknown turn key", "{\"turns\":[{\"prompt\":\"a\"},\n  {\"promt\":\"b\"}]}",
			`scenario: line 2, column 4: unknown key "promt" in turns[1] (known: prompt, system, tools, config, inject, replies, toolResults)`},
		{"unknown tool result key", `{"turns":[{"prompt":"a","toolResults":{"c1":{"contents":[]}}}]}`,
			`scenario: line 1, column 46: unknown key "contents" in turns[0].toolResults["c1"] (known: content, isError)`},
		{"block without type", `{"turns":[{"prompt":"a"},{"prompt":"b","replies":[[{"type":"text","text":"x"}],[{"type":"text","text":"y"},{"text":"z"}]]}]}`,
			`scenario turn 2, reply 2, block 2: codec: content block without a type`},
		{"tool-call without id", `{"turns":[{"prompt":"a","replies":[[{"type":"tool-call","name":"n","arguments":"{}"}]]}]}`,
			`scenario turn 1, reply 1, block 1: codec: tool-call block needs string id, name and arguments`},
		{"bad tool result block", `{"turns":[{"prompt":"a","toolResults":{"c1":{"content":[{"type":"text","text":1}]}}}]}`,
			`scenario turn 1, toolResults["c1"], block 1: codec: text block needs a string text`},
		{"trailing text", "{\"turns\":[{\"prompt\":\"hi\"}]}\n{}", `scenario: line 2, column 1: text after the scenario object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := scenario.Parse([]byte(tt.js))
			if err == nil {
				t.Fatal("Parse accepted the scenario")
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Parse error\n got %s\nwant %s", got, tt.want)
			}
			if !errors.Is(err, codec.ErrInvalid) {
				t.Errorf("Parse error is not ErrInvalid: %v", err)
			}
		})
	}
}
