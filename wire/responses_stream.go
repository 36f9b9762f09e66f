package wire

import (
	"strconv"
	"strings"

	"github.com/sessionlog/sessionlog/codec"
)

// responsesStream translates an OpenAI Responses API answer (docs/gateway.md#what-is-recorded):
// the events of a streamed answer, or the response object of one that
// was not streamed. Output items are keyed by their output_index. A
// message's content parts (output_text, refusal) are a text block each;
// a reasoning item's summary parts are one reasoning block, joined by a
// blank line as the Codex importer joins them (docs/transcripts.md), and its
// reasoning_text parts another; a function_call or custom_tool_call is a
// tool-call block whose id is the call_id. Blocks open at their first
// text and close when their item is done; the finished text is dropped
// at block-end, so the translator holds only the open blocks' text and a
// few words per block.
type responsesStream struct {
	set     blockSet
	blocks  []respBlock        // per block of set
	keys    map[respKey]int64  // (item, kind, part) → block
	items   map[int64]respItem // output_index → its blocks
	calls   int                // tool-call blocks opened
	scratch []byte
}

// Block kinds of an output item.
const (
	kindText      = 't' // a message's content part; part is its content_index
	kindSummary   = 's' // a reasoning item's summary parts, joined
	kindReasoning = 'r' // a reasoning item's reasoning_text parts, joined
	kindCall      = 'c' // a function_call or custom_tool_call
)

type respKey struct {
	item int64
	kind byte
	part int64
}

// respBlock is what the translator knows of one block: for the joined
// kinds, the part being written and whether it has text yet.
type respBlock struct {
	part   int64
	has    bool
	closed bool
}

type respItem struct {
	blocks []int64
	done   bool
}

// NewResponsesTranslator returns a translator for one streamed answer of
// the OpenAI Responses API (POST …/responses with stream:true). No
// renderer sends this API (the gateway only records it), so it is not a
// name Lookup knows.
func NewResponsesTranslator() *Translator { return &Translator{t: newResponsesStream()} }

func newResponsesStream() *responsesStream {
	return &responsesStream{keys: map[respKey]int64{}, items: map[int64]respItem{}}
}

// TranslateResponsesJSON appends the chunks of a Responses API answer
// that was not streamed (one response object with an output array) to
// dst: the chunks its stream would have given, one delta per block, a
// failed response's ending in an error finish. An empty body is
// EMPTY_RESPONSE, one that is not a JSON object (or is over 64 MiB, like
// an SSE event) MALFORMED_RESPONSE.
func TranslateResponsesJSON(dst []Chunk, body []byte) ([]Chunk, error) {
	if len(body) == 0 {
		return dst, &Error{Code: CodeEmpty, Message: "the response has no body"}
	}
	mp, err := codec.FromJSON(nil, body, codec.Limits{})
	if err != nil || token(mp).Kind != codec.KindObject {
		return dst, &Error{Code: CodeMalformed, Message: "the response is not a JSON object (" + strconv.Itoa(len(body)) + " bytes)"}
	}
	newResponsesStream().answer(mp, "", func(c Chunk) { dst = append(dst, c) })
	return dst, nil
}

// respEvent is what one event's data says, read in one pass.
type respEvent struct {
	typ                []byte
	item               int64 // output_index
	content, summary   int64 // content_index, summary_index
	delta, text, args  []byte
	obj, response, err []byte // item; response; error object
}

func (s *responsesStream) event(name, data []byte, emit func(Chunk)) (bool, error) {
	mp, err := payload(&s.scratch, data)
	if err != nil {
		return false, err
	}
	if token(mp).Kind != codec.KindObject {
		return false, &Error{Code: CodeMalformed, Message: "an event's data is not a JSON object"}
	}
	var e respEvent
	pairs(mp, func(k, v []byte) {
		switch string(k) {
		case "type":
			e.typ, _ = str(v)
		case "output_index":
			e.item = intOf(v)
		case "content_index":
			e.content = intOf(v)
		case "summary_index":
			e.summary = intOf(v)
		case "delta":
			e.delta, _ = str(v)
		case "text", "refusal":
			e.text, _ = str(v)
		case "arguments", "input":
			e.args, _ = str(v)
		case "item":
			e.obj = v
		case "response":
			e.response = v
		case "error":
			e.err = v
		}
	})
	kind := e.typ
	if len(kind) == 0 {
		kind = name
	}
	switch string(kind) {
	case "response.output_item.added":
		s.itemAdded(e.item, e.obj, emit)
	case "response.output_item.done":
		s.itemDone(e.item, e.obj, emit)
	case "response.output_text.delta", "response.refusal.delta":
		s.add(respKey{e.item, kindText, e.content}, e.delta, emit)
	case "response.output_text.done", "response.refusal.done":
		s.fill(respKey{e.item, kindText, e.content}, e.text, emit)
	case "response.reasoning_summary_text.delta":
		s.add(respKey{e.item, kindSummary, e.summary}, e.delta, emit)
	case "response.reasoning_summary_text.done":
		s.fill(respKey{e.item, kindSummary, e.summary}, e.text, emit)
	case "response.reasoning_text.delta":
		s.add(respKey{e.item, kindReasoning, e.content}, e.delta, emit)
	case "response.reasoning_text.done":
		s.fill(respKey{e.item, kindReasoning, e.content}, e.text, emit)
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		s.add(respKey{e.item, kindCall, 0}, e.delta, emit)
	case "response.function_call_arguments.done", "response.custom_tool_call_input.done":
		s.fill(respKey{e.item, kindCall, 0}, e.args, emit)
	case "response.completed", "response.incomplete", "response.failed":
		s.answer(e.response, string(kind[len("response."):]), emit)
		return true, nil
	case "error":
		// The error nested, as the API sends it, or its fields at the
		// top, as the API reference has them (the event's own type is
		// not a code then).
		if token(e.err).Kind == codec.KindObject {
			s.end(nil, failedReason(e.err, true), emit)
		} else {
			s.end(nil, failedReason(mp, false), emit)
		}
		return true, nil
	}
	// response.created, .in_progress, .queued, content and summary parts
	// (a part begins with its first delta), annotations, server tools'
	// progress, and events not known here.
	return false, nil
}

// pairs calls fn for each pair of a stored object; anything else has none.
func pairs(mp []byte, fn func(k, v []byte)) {
	if token(mp).Kind != codec.KindObject {
		return
	}
	_ = eachKey(mp, "object", func(k, v []byte) error { fn(k, v); return nil })
}

// elems calls fn for each element of a stored array; anything else has
// none.
func elems(mp []byte, fn func(i int, v []byte)) {
	if token(mp).Kind != codec.KindArray {
		return
	}
	_ = eachElem(mp, "array", func(i int, v []byte) error { fn(i, v); return nil })
}

// norm gives the key a block is found by: the joined kinds and calls have
// one block per item.
func norm(k respKey) respKey {
	if k.kind != kindText {
		k.part = 0
	}
	return k
}

// open opens a block for k and emits its block-start.
func (s *responsesStream) open(k respKey, emit func(Chunk)) int64 {
	typ := "text"
	switch k.kind {
	case kindSummary, kindReasoning:
		typ = "reasoning"
	case kindCall:
		typ = "tool-call"
		s.calls++
	}
	bi := s.set.open(typ, emit)
	s.blocks = append(s.blocks, respBlock{part: k.part})
	s.keys[norm(k)] = bi
	it := s.items[k.item]
	it.blocks = append(it.blocks, bi)
	s.items[k.item] = it
	return bi
}

// lookup finds k's block.
func (s *responsesStream) lookup(k respKey) (int64, bool) {
	bi, ok := s.keys[norm(k)]
	return bi, ok
}

func (s *responsesStream) done(item int64) bool { return s.items[item].done }

// add adds a delta to k's block, opening it at its first text. A delta
// of a later part of a joined block starts that part, after a blank line
// when the block has text; one of an earlier part, or of an item already
// done, is ignored.
func (s *responsesStream) add(k respKey, delta []byte, emit func(Chunk)) {
	if len(delta) == 0 || s.done(k.item) {
		return
	}
	bi, ok := s.lookup(k)
	if !ok {
		bi = s.open(k, emit)
	}
	rb, b := &s.blocks[bi], s.set.blocks[bi]
	switch k.kind {
	case kindCall:
		b.text = append(b.text, delta...)
		emit(Chunk{Type: ChunkToolCallDelta, Index: bi, ID: b.id, Name: b.name, ArgumentsDelta: string(delta)})
		return
	case kindSummary, kindReasoning:
		if k.part < rb.part {
			return // a part already left behind
		}
		if k.part > rb.part {
			rb.part, rb.has = k.part, false
			if len(b.text) > 0 {
				delta = append([]byte("\n\n"), delta...)
			}
		}
	}
	rb.has = true
	b.text = joinWTF8(b.text, delta)
	typ := ChunkTextDelta
	if b.typ == "reasoning" {
		typ = ChunkReasoningDelta
	}
	emit(Chunk{Type: typ, Index: bi, Text: string(delta)})
}

// fill gives k's part its whole text when no delta gave it any (a .done
// event, a finished item): a server may send only those.
func (s *responsesStream) fill(k respKey, text []byte, emit func(Chunk)) {
	if bi, ok := s.lookup(k); ok {
		rb, b := &s.blocks[bi], s.set.blocks[bi]
		switch {
		case rb.closed:
			return
		case k.kind == kindCall:
			if len(b.text) > 0 {
				return
			}
		case k.part < rb.part, k.part == rb.part && rb.has:
			return
		}
	}
	s.add(k, text, emit)
}

// call opens or completes item's tool-call block with its id and name.
func (s *responsesStream) call(item int64, obj []byte, emit func(Chunk)) {
	var id, callID, name, args []byte
	pairs(obj, func(k, v []byte) {
		switch string(k) {
		case "id":
			id, _ = str(v)
		case "call_id":
			callID, _ = str(v)
		case "name":
			name, _ = str(v)
		case "arguments", "input":
			args, _ = str(v)
		}
	})
	if len(callID) > 0 {
		id = callID
	}
	k := respKey{item, kindCall, 0}
	bi, ok := s.lookup(k)
	if !ok {
		bi = s.open(k, emit)
	}
	if b := s.set.blocks[bi]; !s.blocks[bi].closed {
		if b.id == "" {
			b.id = string(id)
		}
		if b.name == "" {
			b.name = string(name)
		}
	}
	s.fill(k, args, emit)
}

// itemType reads an output item's type.
func itemType(obj []byte) string {
	var typ []byte
	pairs(obj, func(k, v []byte) {
		if string(k) == "type" {
			typ, _ = str(v)
		}
	})
	return string(typ)
}

// itemAdded opens the block of a tool call as its item is added; other
// items' blocks open at their first text.
func (s *responsesStream) itemAdded(item int64, obj []byte, emit func(Chunk)) {
	if s.done(item) {
		return
	}
	switch itemType(obj) {
	case "function_call", "custom_tool_call":
		s.call(item, obj, emit)
	}
}

// itemDone completes a finished item's blocks from its whole form (the
// parts no delta gave) and closes them. Items of types other than
// message, reasoning, function_call and custom_tool_call (server-side
// tools, local_shell_call, mcp_call, …) are not ours and give nothing.
func (s *responsesStream) itemDone(item int64, obj []byte, emit func(Chunk)) {
	if s.done(item) {
		return
	}
	parts := func(key string, kind byte) {
		pairs(obj, func(k, v []byte) {
			if string(k) != key {
				return
			}
			elems(v, func(i int, part []byte) {
				var text []byte
				pairs(part, func(k, v []byte) {
					if string(k) == "text" || string(k) == "refusal" {
						text, _ = str(v)
					}
				})
				s.fill(respKey{item, kind, int64(i)}, text, emit)
			})
		})
	}
	switch itemType(obj) {
	case "message":
		parts("content", kindText)
	case "reasoning":
		parts("summary", kindSummary)
		parts("content", kindReasoning)
	case "function_call", "custom_tool_call":
		s.call(item, obj, emit)
	}
	s.closeItem(item, emit)
}

// closeItem emits block-end for item's open blocks and marks it done.
func (s *responsesStream) closeItem(item int64, emit func(Chunk)) {
	it := s.items[item]
	for _, bi := range it.blocks {
		s.close(bi, emit)
	}
	it.done = true
	s.items[item] = it
}

// close emits block i's block-end once and drops its text.
func (s *responsesStream) close(i int64, emit func(Chunk)) {
	if s.blocks[i].closed {
		return
	}
	s.blocks[i].closed = true
	s.set.end(i, emit)
	s.set.blocks[i].text = nil
}

// answer ends the answer with its response object: the output items not
// finished yet, then as end. status is the event's (completed,
// incomplete, failed), or "" to take the object's own.
func (s *responsesStream) answer(resp []byte, status string, emit func(Chunk)) {
	var output, usage, details, apiErr, own []byte
	pairs(resp, func(k, v []byte) {
		switch string(k) {
		case "output":
			output = v
		case "usage":
			usage = v
		case "incomplete_details":
			details = v
		case "error":
			apiErr = v
		case "status":
			own, _ = str(v)
		}
	})
	if status == "" {
		status = string(own)
	}
	elems(output, func(i int, item []byte) { s.itemDone(int64(i), item, emit) })
	var reason []byte
	switch {
	case status == "failed" || token(apiErr).Kind == codec.KindObject:
		reason = failedReason(apiErr, true)
	case status == "completed" || status == "":
		reason = reasonStop
		if s.calls > 0 {
			reason = reasonToolCalls
		}
	case status == "incomplete":
		why := []byte("incomplete")
		pairs(details, func(k, v []byte) {
			if r, ok := str(v); ok && string(k) == "reason" && len(r) > 0 {
				why = r
			}
		})
		reason = reasonMaxTokens
		if string(why) != "max_output_tokens" {
			reason = reasonOther(string(why))
		}
	default:
		reason = reasonOther(status)
	}
	s.end(usage, reason, emit)
}

// end emits block-end for every block still open in opening order, usage
// when reported, then finish with reason.
func (s *responsesStream) end(usage, reason []byte, emit func(Chunk)) {
	for i := range s.blocks {
		s.close(int64(i), emit)
	}
	if token(usage).Kind == codec.KindObject {
		emit(Chunk{Type: ChunkUsage, Usage: responsesUsage(usage)})
	}
	emit(Chunk{Type: ChunkFinish, Reason: reason})
}

// failedReason is the error finish of a failed response's error object,
// or of an error event: its code (else, when byType, its type)
// upper-cased, else SERVER, and its message.
func failedReason(obj []byte, byType bool) []byte {
	e := readAPIError(obj)
	code := "SERVER"
	switch {
	case e.code != "":
		code = strings.ToUpper(e.code)
	case byType && e.typ != "":
		code = strings.ToUpper(e.typ)
	}
	msg := e.message
	if msg == "" {
		msg = "the response failed"
	}
	return reasonError(msg, code)
}

// responsesUsage reads a Responses usage object: cached input counted
// once, as cache reads; reasoning tokens are part of the output.
func responsesUsage(mp []byte) Usage {
	var u Usage
	var input int64
	pairs(mp, func(k, v []byte) {
		switch string(k) {
		case "input_tokens":
			input = intOf(v)
		case "output_tokens":
			u.OutputTokens = intOf(v)
		case "input_tokens_details":
			pairs(v, func(k, v []byte) {
				if string(k) == "cached_tokens" {
					u.CacheReadTokens = intOf(v)
				}
			})
		case "output_tokens_details":
			pairs(v, func(k, v []byte) {
				if string(k) == "reasoning_tokens" {
					u.ReasoningTokens = intOf(v)
				}
			})
		}
	})
	u.InputTokens = max(input-u.CacheReadTokens, 0)
	return u
}
