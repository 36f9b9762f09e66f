package wire_test

import (
	"fmt"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/wire"
)

// The body a provider receives for a request, under the header in force:
// what logtool replay --wire prints.
func ExampleRenderer_Render() {
	mp, _ := codec.FromJSON(nil, []byte(`{"config":{"provider":"deepseek","model":"deepseek-chat","wire":"openai-chat","reasoningEffort":"high"}}`), codec.Limits{})
	h, _ := header.Decode(mp)
	request := []byte(`{"provider":"deepseek","model":"deepseek-chat","messages":[{"role":"user","content":[{"type":"text","text":"hi <&>"}]}],"system":"Be brief.","sessionId":"s1"}`)

	r, err := wire.Lookup(h.Config.Wire)
	if err != nil {
		panic(err)
	}
	req, err := r.Render(request, &h)
	if err != nil {
		panic(err)
	}
	fmt.Println(req.Method, req.Path)
	fmt.Printf("%s: %s…\n", req.KeyHeader, req.KeyPrefix)
	fmt.Println(string(req.Body))
	// Output:
	// POST /chat/completions
	// authorization: Bearer …
	// {"model":"deepseek-chat","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi <&>"}],"stream":true,"stream_options":{"include_usage":true},"reasoning_effort":"high"}
}

// A stream translator fed a Chat Completions answer in two arbitrary
// pieces.
func ExampleTranslator() {
	r, _ := wire.Lookup(wire.OpenAIChat)
	t := r.NewTranslator()
	chunks, _ := t.Feed(nil, []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel"))
	chunks, _ = t.Feed(chunks, []byte("lo\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"))
	chunks, err := t.End(chunks)
	for _, c := range chunks {
		switch c.Type {
		case wire.ChunkTextDelta:
			fmt.Printf("%s %d %q\n", c.Type, c.Index, c.Text)
		case wire.ChunkBlockEnd:
			fmt.Printf("%s %d %s\n", c.Type, c.Index, c.Block)
		case wire.ChunkFinish:
			fmt.Printf("%s %s\n", c.Type, c.Reason)
		default:
			fmt.Printf("%s %d %s\n", c.Type, c.Index, c.BlockType)
		}
	}
	fmt.Println(err)
	// Output:
	// block-start 0 text
	// text-delta 0 "Hello"
	// block-end 0 {"type":"text","text":"Hello"}
	// finish {"kind":"stop"}
	// <nil>
}

// A Responses API answer, as the recording gateway translates it: a
// function call whose id is its call_id, fed in two pieces split inside
// an event.
func ExampleNewResponsesTranslator() {
	t := wire.NewResponsesTranslator()
	chunks, _ := t.Feed(nil, []byte("event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"fc_1\",\"type\":\"function_call\",\"call_id\":\"call_1\",\"name\":\"ls\",\"arguments\":\"\"}}\n\n"+
		"event: response.function_call_arguments.delta\ndata: {\"type\":\"response.function_call_arguments.delta\",\"output_index\":0,\"delta\":\"{\\\"dir\\\":"))
	chunks, _ = t.Feed(chunks, []byte("\\\".\\\"}\"}\n\n"+
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"usage\":{\"input_tokens\":90,\"input_tokens_details\":{\"cached_tokens\":64},\"output_tokens\":7}}}\n\n"))
	chunks, err := t.End(chunks)
	for _, c := range chunks {
		switch c.Type {
		case wire.ChunkToolCallDelta:
			fmt.Printf("%s %d %s %s %q\n", c.Type, c.Index, c.ID, c.Name, c.ArgumentsDelta)
		case wire.ChunkBlockEnd:
			fmt.Printf("%s %d %s\n", c.Type, c.Index, c.Block)
		case wire.ChunkUsage:
			fmt.Printf("%s %+v\n", c.Type, c.Usage)
		case wire.ChunkFinish:
			fmt.Printf("%s %s\n", c.Type, c.Reason)
		default:
			fmt.Printf("%s %d %s\n", c.Type, c.Index, c.BlockType)
		}
	}
	fmt.Println(err)
	// Output:
	// block-start 0 tool-call
	// tool-call-delta 0 call_1 ls "{\"dir\":\".\"}"
	// block-end 0 {"type":"tool-call","id":"call_1","name":"ls","arguments":"{\"dir\":\".\"}"}
	// usage {InputTokens:26 OutputTokens:7 CacheReadTokens:64 CacheWriteTokens:0 ReasoningTokens:0}
	// finish {"kind":"tool-calls"}
	// <nil>
}
