package ssegen

import (
	"fmt"
	"strconv"
	"strings"
)

// words are the fragments answers are made of: ASCII, escapes, markup and
// multi-byte text, as model output mixes them.
var words = []string{"The ", "function ", "returns ", "an ", "error ", "when ", "\"path\" ", "is ",
	"empty.\n", "<b>", "a&b ", "日本語 ", "δ ", "ok, ", "then ", "we ", "fix ", "it.\n\n"}

func quote(s string) string { return strconv.Quote(s) } // ASCII-safe JSON for these words

// OpenAI returns a Chat Completions stream of at least size bytes: one
// answer of reasoning, text and tool calls, a few words per chunk, then
// usage and [DONE].
func OpenAI(size int) []byte {
	var b strings.Builder
	delta := func(d string) {
		b.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":`)
		b.WriteString(d)
		b.WriteString(",\"finish_reason\":null}]}\n\n")
	}
	delta(`{"role":"assistant","content":""}`)
	for i := 0; b.Len() < size/3; i++ {
		delta(`{"reasoning_content":` + quote(words[i%len(words)]+words[(i+3)%len(words)]) + `}`)
	}
	for i := 0; b.Len() < 2*size/3; i++ {
		delta(`{"content":` + quote(words[i%len(words)]+words[(i+5)%len(words)]) + `}`)
	}
	for c := 0; b.Len() < size; c++ {
		delta(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":"call_%d","type":"function","function":{"name":"edit","arguments":""}}]}`, c, c))
		for i := 0; i < 40; i++ {
			delta(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}`, c, quote(`"line `+strconv.Itoa(i)+`": "x = y + 1", `)))
		}
	}
	b.WriteString(`data: {"id":"chatcmpl-1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n")
	b.WriteString(`data: {"id":"chatcmpl-1","choices":[],"usage":{"prompt_tokens":12000,"completion_tokens":900,"prompt_tokens_details":{"cached_tokens":8000},"completion_tokens_details":{"reasoning_tokens":300}}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

// Anthropic returns a Messages stream of at least size bytes: thinking,
// text and tool_use blocks in small deltas, then message_stop.
func Anthropic(size int) []byte {
	var b strings.Builder
	ev := func(name, data string) {
		b.WriteString("event: " + name + "\ndata: " + data + "\n\n")
	}
	ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","usage":{"input_tokens":4000,"cache_read_input_tokens":8000,"cache_creation_input_tokens":100,"output_tokens":1}}}`)
	idx := 0
	block := func(start string, until int, delta func(i int) string) {
		ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, idx, start))
		for i := 0; b.Len() < until; i++ {
			ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":%s}`, idx, delta(i)))
		}
		ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, idx))
		idx++
	}
	block(`{"type":"thinking","thinking":""}`, size/3, func(i int) string {
		return `{"type":"thinking_delta","thinking":` + quote(words[i%len(words)]+words[(i+3)%len(words)]) + `}`
	})
	block(`{"type":"text","text":""}`, 2*size/3, func(i int) string {
		return `{"type":"text_delta","text":` + quote(words[i%len(words)]+words[(i+5)%len(words)]) + `}`
	})
	for c := 0; b.Len() < size; c++ {
		block(fmt.Sprintf(`{"type":"tool_use","id":"toolu_%d","name":"edit","input":{}}`, c), b.Len()+size/8, func(i int) string {
			return `{"type":"input_json_delta","partial_json":` + quote(`"line `+strconv.Itoa(i)+`": "x = y + 1", `) + `}`
		})
	}
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":900}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	return []byte(b.String())
}
