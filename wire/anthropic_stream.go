package wire

import (
	"strings"

	"github.com/sessionlog/sessionlog/codec"
)

// anthropicStream translates Messages API events (docs/wire.md#anthropic-messages).
type anthropicStream struct {
	set      blockSet
	wire     []anthropicBlock // wire index → block, for open blocks
	closed   []bool           // per block: block-end emitted
	usage    Usage
	hasUsage bool
	finish   []byte
	scratch  []byte
}

type anthropicBlock struct{ wire, block int64 }

// anthropicEvent is what one event's data says, read in one pass.
type anthropicEvent struct {
	typ      []byte
	index    int64
	block    struct{ typ, id, name, text, input []byte } // content_block; input in storage form
	delta    struct{ typ, text, stop []byte }            // delta: its text, partial_json or thinking; stop_reason
	hasBlock bool
	apiErr   []byte
}

func (s *anthropicStream) event(name, data []byte, emit func(Chunk)) (bool, error) {
	mp, err := payload(&s.scratch, data)
	if err != nil {
		return false, err
	}
	var e anthropicEvent
	if err := s.read(mp, &e); err != nil {
		return false, err
	}
	kind := string(name)
	if kind == "" {
		kind = string(e.typ)
	}
	switch kind {
	case "content_block_start":
		if e.hasBlock {
			s.start(e.index, &e, emit)
		}
	case "content_block_delta":
		s.delta(e.index, &e, emit)
	case "content_block_stop":
		if bi, ok := s.lookup(e.index); ok {
			s.close(bi, emit)
		}
	case "message_delta":
		if e.delta.stop != nil {
			s.finish = anthropicReason(string(e.delta.stop))
		}
	case "message_stop":
		for i := range s.set.blocks {
			s.close(int64(i), emit)
		}
		if s.hasUsage {
			emit(Chunk{Type: ChunkUsage, Usage: s.usage})
		}
		r := s.finish
		if r == nil {
			r = reasonStop
		}
		emit(Chunk{Type: ChunkFinish, Reason: r})
		return true, nil
	case "error":
		if e.apiErr != nil && token(e.apiErr).Kind == codec.KindObject {
			ae := readAPIError(e.apiErr)
			code := "SERVER"
			if ae.typ != "" {
				code = strings.ToUpper(ae.typ)
			}
			return false, &Error{Code: code, Message: ae.message}
		}
		return false, &Error{Code: "SERVER", Message: "an error event"}
	}
	return false, nil // message_start (its usage is read), ping, unknown events
}

// read reads an event's data in place into e; usage objects (top level or
// in message) go straight into s.usage.
func (s *anthropicStream) read(mp []byte, e *anthropicEvent) error {
	r := codec.NewReader(mp)
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindObject {
		return &Error{Code: CodeMalformed, Message: "an event's data is not a JSON object"}
	}
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			return malformed()
		}
		switch string(k.Str) {
		case "type":
			var v codec.Token
			if v, err = scalar(r); err == nil && v.Kind == codec.KindString {
				e.typ = v.Str
			}
		case "index":
			var v codec.Token
			if v, err = scalar(r); err == nil && v.Kind == codec.KindInt {
				e.index = v.Int
			}
		case "content_block":
			e.hasBlock, err = readContentBlock(r, e)
		case "delta":
			_, err = eachPair(r, func(k []byte, v codec.Token) {
				if v.Kind != codec.KindString {
					return
				}
				switch string(k) {
				case "type":
					e.delta.typ = v.Str
				case "text", "partial_json", "thinking":
					e.delta.text = v.Str
				case "stop_reason":
					e.delta.stop = v.Str
				}
			})
		case "usage":
			err = s.readUsage(r)
		case "message":
			err = s.readMessage(r)
		case "error":
			e.apiErr, err = r.Value(maxDepth)
		default:
			err = r.Skip(maxDepth)
		}
		if err != nil {
			return malformed()
		}
	}
	return nil
}

// readContentBlock reads a content_block in place into e: its strings, and a
// tool_use's input value. It reports whether the value was an object.
func readContentBlock(r *codec.Reader, e *anthropicEvent) (bool, error) {
	t, err := r.Next()
	if err != nil {
		return false, err
	}
	if t.Kind != codec.KindObject {
		return false, skipAfter(r, t)
	}
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			return false, err
		}
		if string(k.Str) == "input" {
			if e.block.input, err = r.Value(maxDepth); err != nil {
				return false, err
			}
			continue
		}
		v, err := scalar(r)
		if err != nil {
			return false, err
		}
		if v.Kind != codec.KindString {
			continue
		}
		switch string(k.Str) {
		case "type":
			e.block.typ = v.Str
		case "id":
			e.block.id = v.Str
		case "name":
			e.block.name = v.Str
		case "text", "thinking":
			e.block.text = v.Str
		}
	}
	return true, nil
}

// readMessage reads message_start's message in place, for its usage.
func (s *anthropicStream) readMessage(r *codec.Reader) error {
	m, err := r.Next()
	if err != nil {
		return err
	}
	if m.Kind != codec.KindObject {
		return skipAfter(r, m)
	}
	for j := 0; j < m.N; j++ {
		k, err := r.Next()
		if err != nil {
			return err
		}
		if string(k.Str) == "usage" {
			err = s.readUsage(r)
		} else {
			err = r.Skip(maxDepth)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// eachPair reads an object of scalars in place, calling fn with each key
// and scalar token (containers inside are skipped). It reports whether
// the value was an object.
func eachPair(r *codec.Reader, fn func(k []byte, v codec.Token)) (bool, error) {
	t, err := r.Next()
	if err != nil {
		return false, err
	}
	if t.Kind != codec.KindObject {
		return false, skipAfter(r, t)
	}
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			return false, err
		}
		v, err := scalar(r)
		if err != nil {
			return false, err
		}
		fn(k.Str, v)
	}
	return true, nil
}

// readUsage reads a usage object in place; later reports override earlier
// ones key by key (message_delta carries the output count).
func (s *anthropicStream) readUsage(r *codec.Reader) error {
	_, err := eachPair(r, func(k []byte, v codec.Token) {
		if v.Kind != codec.KindInt {
			return
		}
		switch string(k) {
		case "input_tokens":
			s.usage.InputTokens = v.Int
		case "output_tokens":
			s.usage.OutputTokens = v.Int
		case "cache_read_input_tokens":
			s.usage.CacheReadTokens = v.Int
		case "cache_creation_input_tokens":
			s.usage.CacheWriteTokens = v.Int
		default:
			return
		}
		s.hasUsage = true
	})
	return err
}

// lookup finds the block of a wire index, the latest opened with it.
func (s *anthropicStream) lookup(wire int64) (int64, bool) {
	for i := len(s.wire) - 1; i >= 0; i-- {
		if s.wire[i].wire == wire {
			return s.wire[i].block, true
		}
	}
	return 0, false
}

// start opens a block: text, tool_use (tool-call, with its id and name)
// or thinking (reasoning); other block types are not ours and are skipped.
func (s *anthropicStream) start(wire int64, e *anthropicEvent, emit func(Chunk)) {
	var ours string
	switch string(e.block.typ) {
	case "text":
		ours = "text"
	case "tool_use":
		ours = "tool-call"
	case "thinking":
		ours = "reasoning"
	default:
		return
	}
	bi := s.set.open(ours, emit)
	s.wire = append(s.wire, anthropicBlock{wire: wire, block: bi})
	s.closed = append(s.closed, false)
	b := s.set.blocks[bi]
	text := e.block.text
	switch ours {
	case "tool-call":
		b.id, b.name = string(e.block.id), string(e.block.name)
		// A non-empty input (a call made by server-side code, streamed
		// with no deltas) is the first arguments fragment.
		if t := token(e.block.input); t.Kind == codec.KindObject && t.N > 0 {
			if js := codec.JSONOrNil(e.block.input); js != nil {
				b.text = append(b.text, js...)
				emit(Chunk{Type: ChunkToolCallDelta, Index: bi, ID: b.id, Name: b.name, ArgumentsDelta: string(js)})
			}
		}
	case "text":
		if len(text) > 0 {
			s.text(bi, ChunkTextDelta, text, emit)
		}
	case "reasoning":
		if len(text) > 0 {
			s.text(bi, ChunkReasoningDelta, text, emit)
		}
	}
}

func (s *anthropicStream) text(bi int64, typ string, text []byte, emit func(Chunk)) {
	b := s.set.blocks[bi]
	b.text = joinWTF8(b.text, text)
	emit(Chunk{Type: typ, Index: bi, Text: string(text)})
}

// delta adds a content_block_delta to its block.
func (s *anthropicStream) delta(wire int64, e *anthropicEvent, emit func(Chunk)) {
	bi, ok := s.lookup(wire)
	if !ok || s.closed[bi] {
		return
	}
	b := s.set.blocks[bi]
	text := e.delta.text
	switch string(e.delta.typ) {
	case "text_delta":
		if b.typ == "text" {
			s.text(bi, ChunkTextDelta, text, emit)
		}
	case "thinking_delta":
		if b.typ == "reasoning" {
			s.text(bi, ChunkReasoningDelta, text, emit)
		}
	case "input_json_delta":
		if b.typ == "tool-call" {
			b.text = append(b.text, text...)
			emit(Chunk{Type: ChunkToolCallDelta, Index: bi, ID: b.id, Name: b.name, ArgumentsDelta: string(text)})
		}
	}
}

// close emits block i's block-end once. A tool call that received no
// input fragment has the arguments "{}" (its input is an empty object).
func (s *anthropicStream) close(i int64, emit func(Chunk)) {
	if s.closed[i] {
		return
	}
	s.closed[i] = true
	if b := s.set.blocks[i]; b.typ == "tool-call" && len(b.text) == 0 {
		b.text = append(b.text, "{}"...)
	}
	s.set.end(i, emit)
}

func anthropicReason(r string) []byte {
	switch r {
	case "end_turn", "stop_sequence":
		return reasonStop
	case "tool_use":
		return reasonToolCalls
	case "max_tokens":
		return reasonMaxTokens
	}
	return reasonOther(r)
}
