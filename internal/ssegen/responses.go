package ssegen

import (
	"fmt"
	"strings"
)

// Responses returns an OpenAI Responses API stream of at least size
// bytes (docs/gateway.md#what-is-recorded): a reasoning item whose summary has two parts, a
// message, and function calls, each in small deltas between its
// output_item.added and .done, then response.completed with usage.
func Responses(size int) []byte {
	var b strings.Builder
	seq := 0
	ev := func(typ, fields string) {
		fmt.Fprintf(&b, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d,%s}\n\n", typ, typ, seq, fields)
		seq++
	}
	ev("response.created", `"response":{"id":"resp_1","object":"response","status":"in_progress","model":"m","output":[]}`)
	item := 0
	ev("response.output_item.added", `"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}`)
	for part := range 2 {
		for i := 0; b.Len() < (part+1)*size/6; i++ {
			ev("response.reasoning_summary_text.delta", fmt.Sprintf(`"item_id":"rs_1","output_index":0,"summary_index":%d,"delta":%s`, part, quote(words[i%len(words)]+words[(i+3)%len(words)])))
		}
	}
	ev("response.output_item.done", `"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}`)
	item++
	ev("response.output_item.added", `"output_index":1,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}`)
	for i := 0; b.Len() < 2*size/3; i++ {
		ev("response.output_text.delta", `"item_id":"msg_1","output_index":1,"content_index":0,"delta":`+quote(words[i%len(words)]+words[(i+5)%len(words)]))
	}
	ev("response.output_item.done", `"output_index":1,"item":{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[]}`)
	item++
	for ; b.Len() < size; item++ {
		ev("response.output_item.added", fmt.Sprintf(`"output_index":%d,"item":{"id":"fc_%d","type":"function_call","status":"in_progress","call_id":"call_%d","name":"edit","arguments":""}`, item, item, item))
		for i := 0; i < 40; i++ {
			ev("response.function_call_arguments.delta", fmt.Sprintf(`"item_id":"fc_%d","output_index":%d,"delta":%s`, item, item, quote(`"line `+fmt.Sprint(i)+`": "x = y + 1", `)))
		}
		ev("response.output_item.done", fmt.Sprintf(`"output_index":%d,"item":{"id":"fc_%d","type":"function_call","status":"completed","call_id":"call_%d","name":"edit","arguments":""}`, item, item, item))
	}
	ev("response.completed", `"response":{"id":"resp_1","object":"response","status":"completed","model":"m","output":[],"usage":{"input_tokens":12000,"input_tokens_details":{"cached_tokens":8000},"output_tokens":900,"output_tokens_details":{"reasoning_tokens":300},"total_tokens":12900}}`)
	return []byte(b.String())
}
