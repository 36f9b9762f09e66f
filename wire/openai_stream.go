package wire

import (
	"strings"

	"github.com/sessionlog/sessionlog/codec"
)

// openAIStream translates Chat Completions chunks (SPEC §12.2).
type openAIStream struct {
	set       blockSet
	reasoning int64 // block index + 1; 0 while not open
	text      int64
	tools     []openAITool
	usage     *Usage
	finish    []byte
	scratch   []byte
}

type openAITool struct{ wire, block int64 }

func (s *openAIStream) event(_ []byte, data []byte, emit func(Chunk)) (bool, error) {
	if string(data) == "[DONE]" {
		s.end(emit)
		return true, nil
	}
	mp, err := payload(&s.scratch, data)
	if err != nil {
		return false, err
	}
	var choices, usage, apiErr []byte
	if err := eachKey(mp, "chunk", func(key, val []byte) error {
		switch string(key) {
		case "choices":
			choices = val
		case "usage":
			usage = val
		case "error":
			apiErr = val
		}
		return nil
	}); err != nil {
		return false, &Error{Code: CodeMalformed, Message: "a chunk is not a JSON object"}
	}
	if apiErr != nil && token(apiErr).Kind == codec.KindObject {
		return false, streamError(apiErr, "SERVER")
	}
	if choices != nil && token(choices).Kind == codec.KindArray {
		if err := eachElem(choices, "choices", func(_ int, c []byte) error {
			return s.choice(c, emit)
		}); err != nil {
			return false, &Error{Code: CodeMalformed, Message: "a choice is not a JSON object"}
		}
	}
	if usage != nil && token(usage).Kind == codec.KindObject {
		s.usage = openAIUsage(usage)
	}
	return false, nil
}

// choice handles one choice: its delta in the order reasoning, content,
// tool calls, then its finish_reason.
func (s *openAIStream) choice(c []byte, emit func(Chunk)) error {
	var delta []byte
	err := eachKey(c, "choice", func(key, val []byte) error {
		switch string(key) {
		case "delta":
			delta = val
		case "finish_reason":
			if r, ok := str(val); ok {
				s.finish = openAIReason(string(r))
			}
		}
		return nil
	})
	if err != nil || delta == nil || token(delta).Kind != codec.KindObject {
		return err
	}
	var reasoning, content, calls []byte
	_ = eachKey(delta, "delta", func(key, val []byte) error {
		switch string(key) {
		case "reasoning_content":
			reasoning, _ = str(val)
		case "content":
			content, _ = str(val)
		case "tool_calls":
			calls = val
		}
		return nil
	})
	if len(reasoning) > 0 {
		if s.reasoning == 0 {
			s.reasoning = s.set.open("reasoning", emit) + 1
		}
		s.delta(s.reasoning-1, ChunkReasoningDelta, reasoning, emit)
	}
	if len(content) > 0 {
		if s.text == 0 {
			s.text = s.set.open("text", emit) + 1
		}
		s.delta(s.text-1, ChunkTextDelta, content, emit)
	}
	if calls != nil && token(calls).Kind == codec.KindArray {
		return eachElem(calls, "tool_calls", func(i int, tc []byte) error {
			return s.toolCall(int64(i), tc, emit)
		})
	}
	return nil
}

func (s *openAIStream) delta(i int64, typ string, text []byte, emit func(Chunk)) {
	b := s.set.blocks[i]
	b.text = joinWTF8(b.text, text)
	emit(Chunk{Type: typ, Index: i, Text: string(text)})
}

// toolCall handles one tool_calls fragment, keyed by its wire index (its
// position when it has none).
func (s *openAIStream) toolCall(pos int64, tc []byte, emit func(Chunk)) error {
	idx := pos
	var id, name, args []byte
	err := eachKey(tc, "tool call", func(key, val []byte) error {
		switch string(key) {
		case "index":
			if t := token(val); t.Kind == codec.KindInt {
				idx = t.Int
			}
		case "id":
			id, _ = str(val)
		case "function":
			if token(val).Kind == codec.KindObject {
				return eachKey(val, "function", func(k, v []byte) error {
					switch string(k) {
					case "name":
						name, _ = str(v)
					case "arguments":
						args, _ = str(v)
					}
					return nil
				})
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	bi := int64(-1)
	for _, t := range s.tools {
		if t.wire == idx {
			bi = t.block
		}
	}
	if bi < 0 {
		bi = s.set.open("tool-call", emit)
		s.tools = append(s.tools, openAITool{wire: idx, block: bi})
	}
	b := s.set.blocks[bi]
	if b.id == "" && len(id) > 0 {
		b.id = string(id)
	}
	if b.name == "" && len(name) > 0 {
		b.name = string(name)
	}
	b.text = append(b.text, args...)
	emit(Chunk{Type: ChunkToolCallDelta, Index: bi, ID: b.id, Name: b.name, ArgumentsDelta: string(args)})
	return nil
}

// end closes every block in opening order, then usage and finish.
func (s *openAIStream) end(emit func(Chunk)) {
	for i := range s.set.blocks {
		s.set.end(int64(i), emit)
	}
	if s.usage != nil {
		emit(Chunk{Type: ChunkUsage, Usage: *s.usage})
	}
	r := s.finish
	if r == nil {
		r = reasonStop
	}
	emit(Chunk{Type: ChunkFinish, Reason: r})
}

func openAIReason(r string) []byte {
	switch r {
	case "stop":
		return reasonStop
	case "tool_calls":
		return reasonToolCalls
	case "length":
		return reasonMaxTokens
	}
	return reasonOther(r)
}

// openAIUsage maps a usage object (SPEC §12.2): cached input counted once,
// as cache reads.
func openAIUsage(mp []byte) *Usage {
	var u Usage
	var prompt, cached, hit int64
	hasCached, hasHit := false, false
	_ = eachKey(mp, "usage", func(key, val []byte) error {
		switch string(key) {
		case "prompt_tokens":
			prompt = intOf(val)
		case "completion_tokens":
			u.OutputTokens = intOf(val)
		case "prompt_cache_hit_tokens":
			hit, hasHit = intOf(val), true
		case "prompt_tokens_details":
			if token(val).Kind == codec.KindObject {
				_ = eachKey(val, "details", func(k, v []byte) error {
					if string(k) == "cached_tokens" && token(v).Kind == codec.KindInt {
						cached, hasCached = intOf(v), true
					}
					return nil
				})
			}
		case "completion_tokens_details":
			if token(val).Kind == codec.KindObject {
				_ = eachKey(val, "details", func(k, v []byte) error {
					if string(k) == "reasoning_tokens" {
						u.ReasoningTokens = intOf(v)
					}
					return nil
				})
			}
		}
		return nil
	})
	switch {
	case hasCached:
		u.CacheReadTokens = cached
	case hasHit:
		u.CacheReadTokens = hit
	}
	u.InputTokens = max(prompt-u.CacheReadTokens, 0)
	return &u
}

// streamError is the error of an error object in a stream: its code (or
// type) upper-cased, else def, and its message.
func streamError(obj []byte, def string) *Error {
	e := readAPIError(obj)
	code := def
	switch {
	case e.code != "":
		code = strings.ToUpper(e.code)
	case e.typ != "":
		code = strings.ToUpper(e.typ)
	}
	return &Error{Code: code, Message: e.message}
}
