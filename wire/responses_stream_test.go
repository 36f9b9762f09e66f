package wire_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/internal/ssegen"
	"github.com/sessionlog/sessionlog/wire"
)

// The golden streams of the Responses translator are in
// testdata/sse/openai-responses (TestSSE).

// TestTranslateResponsesJSON translates answers that were not streamed:
// the chunks a stream of the same response gives, one delta per block;
// and a completed response's JSON translates as the stream that sends
// only its response.completed event.
func TestTranslateResponsesJSON(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{
			name: "reasoning, text and a call",
			body: `{"id":"resp_1","object":"response","status":"completed","error":null,"incomplete_details":null,"output":[` +
				`{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Look."},{"type":"summary_text","text":"Then act."}]},` +
				`{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":"Listing \ud83d\ude00."}]},` +
				`{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"ls","arguments":"{\"dir\":\".\"}"}],` +
				`"usage":{"input_tokens":1500,"input_tokens_details":{"cached_tokens":1408},"output_tokens":90,"output_tokens_details":{"reasoning_tokens":64},"total_tokens":1590}}`,
			want: `block-start 0 reasoning
reasoning-delta 0 "Look."
reasoning-delta 0 "\n\nThen act."
block-end 0 {"type":"reasoning","text":"Look.\n\nThen act."}
block-start 1 text
text-delta 1 "Listing 😀."
block-end 1 {"type":"text","text":"Listing 😀."}
block-start 2 tool-call
tool-call-delta 2 id=call_1 name=ls args="{\"dir\":\".\"}"
block-end 2 {"type":"tool-call","id":"call_1","name":"ls","arguments":"{\"dir\":\".\"}"}
usage in=92 out=90 cacheRead=1408 cacheWrite=0 reasoning=64
finish {"kind":"tool-calls"}
end
`,
		},
		{
			name: "no status, no usage: stop",
			body: `{"output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"},{"type":"refusal","refusal":"no"}]},{"type":"web_search_call","id":"ws"}]}`,
			want: `block-start 0 text
text-delta 0 "ok"
block-start 1 text
text-delta 1 "no"
block-end 0 {"type":"text","text":"ok"}
block-end 1 {"type":"text","text":"no"}
finish {"kind":"stop"}
end
`,
		},
		{
			name: "indented, as the API sends it",
			body: "{\n  \"id\": \"resp_2\",\n  \"object\": \"response\",\n  \"status\": \"completed\",\n  \"output\": [\n    {\n      \"type\": \"message\",\n      \"content\": [\n        {\n          \"type\": \"output_text\",\n          \"text\": \"Hi.\"\n        }\n      ]\n    }\n  ]\n}\n",
			want: `block-start 0 text
text-delta 0 "Hi."
block-end 0 {"type":"text","text":"Hi."}
finish {"kind":"stop"}
end
`,
		},
		{
			name: "incomplete",
			body: `{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"message","content":[{"type":"output_text","text":"Cut"}]}],"usage":{"input_tokens":3,"output_tokens":5}}`,
			want: `block-start 0 text
text-delta 0 "Cut"
block-end 0 {"type":"text","text":"Cut"}
usage in=3 out=5 cacheRead=0 cacheWrite=0 reasoning=0
finish {"kind":"max-tokens"}
end
`,
		},
		{
			name: "another status",
			body: `{"status":"cancelled","output":[]}`,
			want: `finish {"kind":"error","message":"model stopped: cancelled","code":"CANCELLED"}
end
`,
		},
		{
			name: "failed",
			body: `{"status":"failed","error":{"code":"invalid_prompt","message":"Invalid prompt."},"output":[],"usage":{"input_tokens":7,"output_tokens":0}}`,
			want: `usage in=7 out=0 cacheRead=0 cacheWrite=0 reasoning=0
finish {"kind":"error","message":"Invalid prompt.","code":"INVALID_PROMPT"}
end
`,
		},
		{
			name: "failed without an error",
			body: `{"status":"failed"}`,
			want: `finish {"kind":"error","message":"the response failed","code":"SERVER"}
end
`,
		},
		{name: "empty", body: ``, want: "error wire: EMPTY_RESPONSE: the response has no body\n"},
		{name: "not JSON", body: `{"output":[`, want: "error wire: MALFORMED_RESPONSE: the response is not a JSON object (11 bytes)\n"},
		{name: "not an object", body: `[]`, want: "error wire: MALFORMED_RESPONSE: the response is not a JSON object (2 bytes)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks, err := wire.TranslateResponsesJSON([]wire.Chunk{{Type: "kept"}}, []byte(tt.body))
			if len(chunks) == 0 || chunks[0].Type != "kept" {
				t.Fatalf("dst was not appended to: %v", chunks)
			}
			if got := printChunks(chunks[1:], err); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
			if !strings.Contains(tt.body, `"status":"completed"`) {
				return
			}
			stream := "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":" + tt.body + "}\n\n"
			if got := translate(wire.NewResponsesTranslator, [][]byte{[]byte(stream)}); got != tt.want {
				t.Errorf("as a stream:\n%s\nas JSON:\n%s", got, tt.want)
			}
		})
	}
}

// TestResponsesMemory streams 64 MiB of answer in 1024 message items of
// 64 KiB each: the translator keeps the text of the open item only, so
// the heap it holds stays near one item's text whatever the stream's
// length.
func TestResponsesMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 64 MiB")
	}
	delta := strings.Repeat("x", 4<<10)
	var event strings.Builder
	tr := wire.NewResponsesTranslator()
	var chunks []wire.Chunk
	feed := func(s string) {
		var err error
		if chunks, err = tr.Feed(chunks[:0], []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	var base runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&base)
	var peak uint64
	const items = 1024
	for i := range items {
		for range 16 {
			event.Reset()
			fmt.Fprintf(&event, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":%d,\"content_index\":0,\"delta\":%q}\n\n", i, delta)
			feed(event.String())
		}
		feed(fmt.Sprintf("event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":%d,\"item\":{\"type\":\"message\",\"content\":[]}}\n\n", i))
		if i%128 == 127 {
			var m runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
		}
	}
	feed("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n")
	if !tr.Done() {
		t.Fatal("the stream did not end")
	}
	runtime.KeepAlive(tr)
	held := int64(peak) - int64(base.HeapAlloc)
	t.Logf("streamed %d MiB; heap held at most %d KiB over the start", items*16*len(delta)>>20, held>>10)
	if held > 4<<20 {
		t.Errorf("the translator held %d KiB of a 64 MiB stream; want under 4 MiB", held>>10)
	}
}

// BenchmarkTranslateResponses feeds a 4 MB Responses stream in 32 KB
// reads, as BenchmarkTranslate does for the renderers' APIs.
func BenchmarkTranslateResponses(b *testing.B) {
	stream := ssegen.Responses(4 << 20)
	b.SetBytes(int64(len(stream)))
	var chunks []wire.Chunk
	for b.Loop() {
		t := wire.NewResponsesTranslator()
		var err error
		for p := stream; len(p) > 0; {
			n := min(len(p), 32<<10)
			if chunks, err = t.Feed(chunks[:0], p[:n]); err != nil {
				b.Fatal(err)
			}
			p = p[n:]
		}
		if chunks, err = t.End(chunks[:0]); err != nil || !t.Done() {
			b.Fatalf("the stream did not end: %v", err)
		}
	}
}
