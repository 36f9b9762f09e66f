package wire

import (
	"strconv"

	"github.com/sessionlog/sessionlog/codec"
)

// TranslateJSON appends the chunks of an answer of r's API that was not
// streamed (one JSON object: Anthropic's message, or a Chat Completions
// completion) to dst: the chunks its stream would have given, one delta
// per block, as TranslateResponsesJSON does for the Responses API. The
// object is read as the stream translator reads the events a server
// would have sent for it, so both forms of one answer give the same
// chunks. An empty body is EMPTY_RESPONSE, one that is not a JSON object
// (or is over 64 MiB, like an SSE event) MALFORMED_RESPONSE; an error
// object ends with the error an error event gives.
func (r *Renderer) TranslateJSON(dst []Chunk, body []byte) ([]Chunk, error) {
	if len(body) == 0 {
		return dst, &Error{Code: CodeEmpty, Message: "the response has no body"}
	}
	mp, err := codec.FromJSON(nil, body, codec.Limits{})
	if err != nil || token(mp).Kind != codec.KindObject || len(body) > maxEvent {
		return dst, &Error{Code: CodeMalformed, Message: "the response is not a JSON object (" + strconv.Itoa(len(body)) + " bytes)"}
	}
	var sse []byte
	event := func(name string, data []byte) {
		if name != "" {
			sse = append(sse, "event: "+name+"\n"...)
		}
		sse = append(sse, "data: "...)
		sse = append(sse, data...)
		sse = append(sse, "\n\n"...)
	}
	members := map[string][]byte{}
	pairs(mp, func(k, v []byte) { members[string(k)] = v })
	asJSON := func(v []byte) []byte {
		out, _, err := codec.ToJSON(nil, v)
		if err != nil {
			return []byte("null")
		}
		return out
	}
	switch r.name {
	case AnthropicMessages:
		if e, ok := members["error"]; ok {
			event("error", append(append([]byte(`{"type":"error","error":`), asJSON(e)...), '}'))
			break
		}
		start := []byte(`{"type":"message_start","message":{`)
		if u, ok := members["usage"]; ok {
			start = append(append(start, `"usage":`...), asJSON(u)...)
		}
		event("message_start", append(start, "}}"...))
		elems(members["content"], func(i int, b []byte) {
			at := strconv.Itoa(i)
			// A block's start carries it whole: a tool_use's input is its
			// first (here only) arguments fragment (docs/wire.md#anthropic-messages).
			event("content_block_start", append(append([]byte(`{"type":"content_block_start","index":`+at+`,"content_block":`), asJSON(b)...), '}'))
			event("content_block_stop", []byte(`{"type":"content_block_stop","index":`+at+`}`))
		})
		delta := []byte(`{"type":"message_delta","delta":{`)
		if s, ok := members["stop_reason"]; ok && token(s).Kind == codec.KindString {
			delta = append(append(delta, `"stop_reason":`...), asJSON(s)...)
		}
		event("message_delta", append(delta, "}}"...))
		event("message_stop", []byte(`{"type":"message_stop"}`))
	default:
		if _, ok := members["error"]; ok {
			event("", asJSON(mp))
			break
		}
		var msg, finish []byte
		elems(members["choices"], func(i int, c []byte) {
			if i == 0 {
				pairs(c, func(k, v []byte) {
					switch string(k) {
					case "message":
						msg = v
					case "finish_reason":
						finish = v
					}
				})
			}
		})
		if msg == nil {
			return dst, &Error{Code: CodeMalformed, Message: "the completion has no message"}
		}
		chunk := append([]byte(`{"choices":[{"index":0,"delta":`), asJSON(msg)...)
		if finish != nil {
			chunk = append(append(chunk, `,"finish_reason":`...), asJSON(finish)...)
		}
		chunk = append(chunk, "}]"...)
		if u, ok := members["usage"]; ok {
			chunk = append(append(chunk, `,"usage":`...), asJSON(u)...)
		}
		event("", append(chunk, '}'))
		event("", []byte("[DONE]"))
	}
	t := r.NewTranslator()
	dst, err = t.Feed(dst, sse)
	if err != nil {
		return dst, err
	}
	return t.End(dst)
}
