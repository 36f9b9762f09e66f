package ssegen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// fragments cuts text into the pieces a model streams: one to four words
// each.
func fragments(r *rand.Rand, text string) []string {
	words := strings.SplitAfter(text, " ")
	var out []string
	for len(words) > 0 {
		k := min(1+r.IntN(4), len(words))
		out = append(out, strings.Join(words[:k], ""))
		words = words[k:]
	}
	return out
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// toolInput is a tool call's arguments from seed, as JSON text.
func toolInput(seed uint64) string {
	return `{"command":` + jsonString("grep -rn "+Text(seed, 30)+"src/") + `,"description":` + jsonString(Text(seed+1, 60)) + `}`
}

// AnthropicTurn returns one step's answer from seed as the Messages API
// streams it to Claude Code: message_start with usage, a text block of
// about text bytes in deltas of one to four words, a ping, a tool_use
// block whose input streams as partial JSON, message_delta and
// message_stop. Every seed's text, ids and numbers are its own, as every
// step's answer is.
func AnthropicTurn(seed uint64, text int) []byte {
	r := rand.New(rand.NewPCG(seed, 5))
	var b strings.Builder
	ev := func(name, data string) { b.WriteString("event: " + name + "\ndata: " + data + "\n\n") }
	ev("message_start", fmt.Sprintf(`{"type":"message_start","message":{"model":"claude-sonnet-4-5-20250929","id":"msg_01%016x%08x","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"cache_creation":{"ephemeral_5m_input_tokens":%d,"ephemeral_1h_input_tokens":0},"output_tokens":1,"service_tier":"standard"}}}`,
		r.Uint64(), r.Uint32(), 1+r.IntN(9), r.IntN(2000), 20000+r.IntN(40000), r.IntN(2000)))
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	for i, f := range fragments(r, Text(seed, text)) {
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+jsonString(f)+`}}`)
		if i == 0 {
			ev("ping", `{"type": "ping"}`)
		}
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01%016x","name":"Bash","input":{}}}`, r.Uint64()))
	ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}`)
	for in := toolInput(seed); len(in) > 0; {
		k := min(1+r.IntN(24), len(in))
		ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":`+jsonString(in[:k])+`}}`)
		in = in[k:]
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":1}`)
	ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":%d}}`, text/4+r.IntN(100)))
	ev("message_stop", `{"type":"message_stop"}`)
	return []byte(b.String())
}

// ResponsesTurn returns one step's answer from seed as the Responses API
// streams it to Codex: response.created and .in_progress, a message whose
// text of about text bytes streams in deltas of one to four words and is
// then repeated whole by output_text.done, content_part.done and
// output_item.done, a function call whose arguments stream the same way,
// and response.completed with the whole output and usage.
func ResponsesTurn(seed uint64, text int) []byte {
	r := rand.New(rand.NewPCG(seed, 6))
	var b strings.Builder
	seq := 0
	ev := func(typ, fields string) {
		fmt.Fprintf(&b, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d,%s}\n\n", typ, typ, seq, fields)
		seq++
	}
	id := fmt.Sprintf("resp_%016x%016x", r.Uint64(), r.Uint64())
	resp := func(status, output, usage string) string {
		return fmt.Sprintf(`"response":{"id":%q,"object":"response","created_at":%d,"status":%q,"model":"gpt-5-codex","output":[%s],"parallel_tool_calls":false,"reasoning":{"effort":"medium","summary":"auto"},"store":false,"usage":%s}`,
			id, 1764640000+seed, status, output, usage)
	}
	ev("response.created", resp("in_progress", "", "null"))
	ev("response.in_progress", resp("in_progress", "", "null"))
	msg := fmt.Sprintf("msg_%016x", r.Uint64())
	all := Text(seed, text)
	ev("response.output_item.added", `"output_index":0,"item":{"id":"`+msg+`","type":"message","status":"in_progress","content":[],"role":"assistant"}`)
	ev("response.content_part.added", `"item_id":"`+msg+`","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}`)
	for _, f := range fragments(r, all) {
		ev("response.output_text.delta", `"item_id":"`+msg+`","output_index":0,"content_index":0,"delta":`+jsonString(f))
	}
	ev("response.output_text.done", `"item_id":"`+msg+`","output_index":0,"content_index":0,"text":`+jsonString(all))
	part := `{"type":"output_text","annotations":[],"text":` + jsonString(all) + `}`
	ev("response.content_part.done", `"item_id":"`+msg+`","output_index":0,"content_index":0,"part":`+part)
	msgItem := `{"id":"` + msg + `","type":"message","status":"completed","content":[` + part + `],"role":"assistant"}`
	ev("response.output_item.done", `"output_index":0,"item":`+msgItem)
	fc, call := fmt.Sprintf("fc_%016x", r.Uint64()), fmt.Sprintf("call_%016x", r.Uint64())
	ev("response.output_item.added", `"output_index":1,"item":{"id":"`+fc+`","type":"function_call","status":"in_progress","arguments":"","call_id":"`+call+`","name":"shell"}`)
	args := toolInput(seed)
	for in := args; len(in) > 0; {
		k := min(1+r.IntN(24), len(in))
		ev("response.function_call_arguments.delta", `"item_id":"`+fc+`","output_index":1,"delta":`+jsonString(in[:k]))
		in = in[k:]
	}
	ev("response.function_call_arguments.done", `"item_id":"`+fc+`","output_index":1,"arguments":`+jsonString(args))
	fcItem := `{"id":"` + fc + `","type":"function_call","status":"completed","arguments":` + jsonString(args) + `,"call_id":"` + call + `","name":"shell"}`
	ev("response.output_item.done", `"output_index":1,"item":`+fcItem)
	in := 20000 + r.IntN(40000)
	ev("response.completed", resp("completed", msgItem+","+fcItem, fmt.Sprintf(`{"input_tokens":%d,"input_tokens_details":{"cached_tokens":%d},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":%d},"total_tokens":%d}`,
		in, in-r.IntN(3000), text/4, r.IntN(200), in+text/4)))
	return []byte(b.String())
}
