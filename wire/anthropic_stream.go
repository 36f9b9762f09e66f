package wire

import (
	"strings"

	"github.com/sessionlog/sessionlog/codec"
)

// anthropicStream translates Messages API events (SPEC §12.3).
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

func (s *anthropicStream) event(name, data []byte, emit func(Chunk)) (bool, error) {
	mp, err := payload(&s.scratch, data)
	if err != nil {
		return false, err
	}
	var typ, index, block, delta, message, usage, apiErr []byte
	if err := eachKey(mp, "event", func(key, val []byte) error {
		switch string(key) {
		case "type":
			typ, _ = str(val)
		case "index":
			index = val
		case "content_block":
			block = val
		case "delta":
			delta = val
		case "message":
			message = val
		case "usage":
			usage = val
		case "error":
			apiErr = val
		}
		return nil
	}); err != nil {
		return false, &Error{Code: CodeMalformed, Message: "an event's data is not a JSON object"}
	}
	kind := string(name)
	if kind == "" {
		kind = string(typ)
	}
	switch kind {
	case "message_start":
		if message != nil && token(message).Kind == codec.KindObject {
			_ = eachKey(message, "message", func(key, val []byte) error {
				if string(key) == "usage" {
					s.readUsage(val)
				}
				return nil
			})
		}
	case "content_block_start":
		s.start(intOf(index), block, emit)
	case "content_block_delta":
		s.delta(intOf(index), delta, emit)
	case "content_block_stop":
		if bi, ok := s.lookup(intOf(index)); ok {
			s.close(bi, emit)
		}
	case "message_delta":
		if delta != nil && token(delta).Kind == codec.KindObject {
			_ = eachKey(delta, "delta", func(key, val []byte) error {
				if r, ok := str(val); ok && string(key) == "stop_reason" {
					s.finish = anthropicReason(string(r))
				}
				return nil
			})
		}
		s.readUsage(usage)
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
		if apiErr != nil && token(apiErr).Kind == codec.KindObject {
			e := readAPIError(apiErr)
			code := "SERVER"
			if e.typ != "" {
				code = strings.ToUpper(e.typ)
			}
			return false, &Error{Code: code, Message: e.message}
		}
		return false, &Error{Code: "SERVER", Message: "an error event"}
	}
	return false, nil // ping and unknown events
}

// readUsage reads a usage object; later reports override earlier ones key
// by key (message_delta carries the output count).
func (s *anthropicStream) readUsage(mp []byte) {
	if mp == nil || token(mp).Kind != codec.KindObject {
		return
	}
	_ = eachKey(mp, "usage", func(key, val []byte) error {
		if token(val).Kind != codec.KindInt {
			return nil
		}
		switch string(key) {
		case "input_tokens":
			s.usage.InputTokens = intOf(val)
		case "output_tokens":
			s.usage.OutputTokens = intOf(val)
		case "cache_read_input_tokens":
			s.usage.CacheReadTokens = intOf(val)
		case "cache_creation_input_tokens":
			s.usage.CacheWriteTokens = intOf(val)
		default:
			return nil
		}
		s.hasUsage = true
		return nil
	})
}

func (s *anthropicStream) lookup(wire int64) (int64, bool) {
	for _, b := range s.wire {
		if b.wire == wire {
			return b.block, true
		}
	}
	return 0, false
}

// start opens a block: text, tool_use (tool-call, with its id and name)
// or thinking (reasoning); other block types are not ours and are skipped.
func (s *anthropicStream) start(wire int64, cb []byte, emit func(Chunk)) {
	if cb == nil || token(cb).Kind != codec.KindObject {
		return
	}
	var typ, id, name, text []byte
	_ = eachKey(cb, "content_block", func(key, val []byte) error {
		switch string(key) {
		case "type":
			typ, _ = str(val)
		case "id":
			id, _ = str(val)
		case "name":
			name, _ = str(val)
		case "text", "thinking":
			text, _ = str(val)
		}
		return nil
	})
	var ours string
	switch string(typ) {
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
	switch ours {
	case "tool-call":
		b.id, b.name = string(id), string(name)
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
func (s *anthropicStream) delta(wire int64, d []byte, emit func(Chunk)) {
	bi, ok := s.lookup(wire)
	if !ok || s.closed[bi] || d == nil || token(d).Kind != codec.KindObject {
		return
	}
	var typ, text, partial, thinking []byte
	_ = eachKey(d, "delta", func(key, val []byte) error {
		switch string(key) {
		case "type":
			typ, _ = str(val)
		case "text":
			text, _ = str(val)
		case "partial_json":
			partial, _ = str(val)
		case "thinking":
			thinking, _ = str(val)
		}
		return nil
	})
	b := s.set.blocks[bi]
	switch string(typ) {
	case "text_delta":
		if b.typ == "text" {
			s.text(bi, ChunkTextDelta, text, emit)
		}
	case "thinking_delta":
		if b.typ == "reasoning" {
			s.text(bi, ChunkReasoningDelta, thinking, emit)
		}
	case "input_json_delta":
		if b.typ == "tool-call" {
			b.text = append(b.text, partial...)
			emit(Chunk{Type: ChunkToolCallDelta, Index: bi, ID: b.id, Name: b.name, ArgumentsDelta: string(partial)})
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
