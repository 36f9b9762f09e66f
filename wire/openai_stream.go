package wire

import (
	"strings"

	"github.com/sessionlog/sessionlog/codec"
)

// openAIStream translates Chat Completions chunks (docs/wire.md#openai-chat).
type openAIStream struct {
	set       blockSet
	reasoning int64 // block index + 1; 0 while not open
	text      int64
	tools     []openAITool
	usage     *Usage
	finish    []byte
	scratch   []byte
	frags     []fragment
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
	// One pass over the chunk, read in place.
	r := codec.NewReader(mp)
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindObject {
		return false, &Error{Code: CodeMalformed, Message: "a chunk is not a JSON object"}
	}
	var failed []byte // the payload's error object, if any
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			return false, malformed()
		}
		switch string(k.Str) {
		case "choices":
			a, err := r.Next()
			if err != nil {
				return false, malformed()
			}
			if a.Kind != codec.KindArray {
				if err := skipAfter(r, a); err != nil {
					return false, malformed()
				}
				continue
			}
			for j := 0; j < a.N; j++ {
				if err := s.choice(r, emit); err != nil {
					return false, err
				}
			}
		case "usage":
			u, err := r.Next()
			if err != nil {
				return false, malformed()
			}
			if u.Kind != codec.KindObject {
				if err := skipAfter(r, u); err != nil {
					return false, malformed()
				}
				continue
			}
			if s.usage, err = openAIUsage(r, u.N); err != nil {
				return false, malformed()
			}
		case "error":
			v, err := r.Value(maxDepth)
			if err != nil {
				return false, malformed()
			}
			if token(v).Kind == codec.KindObject {
				failed = v
			}
		default:
			if err := r.Skip(maxDepth); err != nil {
				return false, malformed()
			}
		}
	}
	if failed != nil {
		// An error object ends the stream like [DONE], with an error
		// finish: what streamed before it is kept.
		s.finish = errorReason(failed)
		s.end(emit)
		return true, nil
	}
	return false, nil
}

func malformed() error {
	return &Error{Code: CodeMalformed, Message: "a chunk's JSON is not what the API sends"}
}

// skipAfter skips the elements of a container whose header t was read.
func skipAfter(r *codec.Reader, t codec.Token) error {
	n := t.N
	switch t.Kind {
	case codec.KindObject:
		n *= 2
	case codec.KindArray:
	default:
		return nil
	}
	for i := 0; i < n; i++ {
		if err := r.Skip(maxDepth); err != nil {
			return err
		}
	}
	return nil
}

// scalar reads one value and returns its token; a container is skipped
// whole (its token says so).
func scalar(r *codec.Reader) (codec.Token, error) {
	t, err := r.Next()
	if err != nil {
		return t, err
	}
	return t, skipAfter(r, t)
}

// fragment is one tool_calls entry of a delta.
type fragment struct {
	index          int64
	id, name, args []byte
}

// choice reads one choice in place: its delta, handled in the order
// reasoning, content, tool calls, then its finish_reason.
func (s *openAIStream) choice(r *codec.Reader, emit func(Chunk)) error {
	t, err := r.Next()
	if err != nil {
		return malformed()
	}
	if t.Kind != codec.KindObject {
		return skipAfter(r, t)
	}
	var d deltaText
	s.frags = s.frags[:0]
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			return malformed()
		}
		switch string(k.Str) {
		case "delta":
			dt, err := r.Next()
			if err != nil {
				return malformed()
			}
			if dt.Kind != codec.KindObject {
				if err := skipAfter(r, dt); err != nil {
					return malformed()
				}
				continue
			}
			if err := s.readDelta(r, dt.N, &d); err != nil {
				return err
			}
		case "finish_reason":
			v, err := scalar(r)
			if err != nil {
				return malformed()
			}
			if v.Kind == codec.KindString {
				s.finish = openAIReason(string(v.Str))
			}
		default:
			if err := r.Skip(maxDepth); err != nil {
				return malformed()
			}
		}
	}
	// reasoning_content (DeepSeek) or, from servers that name it so,
	// reasoning (Groq, OpenRouter): one source per delta, so a server
	// that sends both with the same text does not double it.
	reasoning := d.reasoningContent
	if len(reasoning) == 0 {
		reasoning = d.reasoning
	}
	if len(reasoning) > 0 {
		if s.reasoning == 0 {
			s.reasoning = s.set.open("reasoning", emit) + 1
		}
		s.delta(s.reasoning-1, ChunkReasoningDelta, reasoning, emit)
	}
	// A refusal is text: the user sees why the model refused.
	for _, text := range [2][]byte{d.content, d.refusal} {
		if len(text) == 0 {
			continue
		}
		if s.text == 0 {
			s.text = s.set.open("text", emit) + 1
		}
		s.delta(s.text-1, ChunkTextDelta, text, emit)
	}
	for i := range s.frags {
		s.toolCall(&s.frags[i], emit)
	}
	return nil
}

// deltaText is the non-empty texts of one delta.
type deltaText struct{ reasoningContent, reasoning, content, refusal []byte }

// readDelta reads a delta object of n pairs: its texts into d, and its
// tool call fragments into s.frags.
func (s *openAIStream) readDelta(r *codec.Reader, n int, d *deltaText) error {
	for i := 0; i < n; i++ {
		k, err := r.Next()
		if err != nil {
			return malformed()
		}
		switch string(k.Str) {
		case "reasoning_content", "reasoning", "content", "refusal":
			v, err := scalar(r)
			if err != nil {
				return malformed()
			}
			if v.Kind != codec.KindString || len(v.Str) == 0 {
				continue
			}
			switch string(k.Str) {
			case "reasoning_content":
				d.reasoningContent = v.Str
			case "reasoning":
				d.reasoning = v.Str
			case "content":
				d.content = v.Str
			case "refusal":
				d.refusal = v.Str
			}
		case "tool_calls":
			a, err := r.Next()
			if err != nil {
				return malformed()
			}
			if a.Kind != codec.KindArray {
				if err := skipAfter(r, a); err != nil {
					return malformed()
				}
				continue
			}
			for j := 0; j < a.N; j++ {
				if err := s.readFragment(r, int64(j)); err != nil {
					return err
				}
			}
		default:
			if err := r.Skip(maxDepth); err != nil {
				return malformed()
			}
		}
	}
	return nil
}

// readFragment reads one tool_calls entry; its wire index is its position
// when it has none.
func (s *openAIStream) readFragment(r *codec.Reader, pos int64) error {
	t, err := r.Next()
	if err != nil {
		return malformed()
	}
	if t.Kind != codec.KindObject {
		return skipAfter(r, t)
	}
	f := fragment{index: pos}
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			return malformed()
		}
		switch string(k.Str) {
		case "index":
			v, err := scalar(r)
			if err != nil {
				return malformed()
			}
			if v.Kind == codec.KindInt {
				f.index = v.Int
			}
		case "id":
			v, err := scalar(r)
			if err != nil {
				return malformed()
			}
			if v.Kind == codec.KindString {
				f.id = v.Str
			}
		case "function":
			fn, err := r.Next()
			if err != nil {
				return malformed()
			}
			if fn.Kind != codec.KindObject {
				if err := skipAfter(r, fn); err != nil {
					return malformed()
				}
				continue
			}
			for j := 0; j < fn.N; j++ {
				fk, err := r.Next()
				if err != nil {
					return malformed()
				}
				v, err := scalar(r)
				if err != nil {
					return malformed()
				}
				if v.Kind != codec.KindString {
					continue
				}
				switch string(fk.Str) {
				case "name":
					f.name = v.Str
				case "arguments":
					f.args = v.Str
				}
			}
		default:
			if err := r.Skip(maxDepth); err != nil {
				return malformed()
			}
		}
	}
	s.frags = append(s.frags, f)
	return nil
}

func (s *openAIStream) delta(i int64, typ string, text []byte, emit func(Chunk)) {
	b := s.set.blocks[i]
	b.text = joinWTF8(b.text, text)
	emit(Chunk{Type: typ, Index: i, Text: string(text)})
}

// toolCall adds one tool_calls fragment to the block of its wire index.
func (s *openAIStream) toolCall(f *fragment, emit func(Chunk)) {
	bi := int64(-1)
	for _, t := range s.tools {
		if t.wire == f.index {
			bi = t.block
		}
	}
	if bi < 0 {
		bi = s.set.open("tool-call", emit)
		s.tools = append(s.tools, openAITool{wire: f.index, block: bi})
	}
	b := s.set.blocks[bi]
	if b.id == "" && len(f.id) > 0 {
		b.id = string(f.id)
	}
	if b.name == "" && len(f.name) > 0 {
		b.name = string(f.name)
	}
	b.text = append(b.text, f.args...)
	emit(Chunk{Type: ChunkToolCallDelta, Index: bi, ID: b.id, Name: b.name, ArgumentsDelta: string(f.args)})
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

// openAIUsage reads a usage object of n pairs in place (docs/wire.md#openai-chat):
// cached input counted once, as cache reads.
func openAIUsage(r *codec.Reader, n int) (*Usage, error) {
	var u Usage
	var prompt, cached, hit int64
	hasCached, hasHit := false, false
	details := func(want string, dst *int64, has *bool) error {
		t, err := r.Next()
		if err != nil || t.Kind != codec.KindObject {
			if err == nil {
				err = skipAfter(r, t)
			}
			return err
		}
		for i := 0; i < t.N; i++ {
			k, err := r.Next()
			if err != nil {
				return err
			}
			v, err := scalar(r)
			if err != nil {
				return err
			}
			if string(k.Str) == want && v.Kind == codec.KindInt {
				*dst, *has = v.Int, true
			}
		}
		return nil
	}
	var hasReasoning bool
	for i := 0; i < n; i++ {
		k, err := r.Next()
		if err != nil {
			return nil, err
		}
		switch string(k.Str) {
		case "prompt_tokens_details":
			err = details("cached_tokens", &cached, &hasCached)
		case "completion_tokens_details":
			err = details("reasoning_tokens", &u.ReasoningTokens, &hasReasoning)
		default:
			var v codec.Token
			v, err = scalar(r)
			if v.Kind != codec.KindInt {
				break
			}
			switch string(k.Str) {
			case "prompt_tokens":
				prompt = v.Int
			case "completion_tokens":
				u.OutputTokens = v.Int
			case "prompt_cache_hit_tokens":
				hit, hasHit = v.Int, true
			}
		}
		if err != nil {
			return nil, err
		}
	}
	switch {
	case hasCached:
		u.CacheReadTokens = cached
	case hasHit:
		u.CacheReadTokens = hit
	}
	u.InputTokens = max(prompt-u.CacheReadTokens, 0)
	return &u, nil
}

// errorReason is the finish of an error object in a stream (docs/wire.md#openai-chat):
// kind error, its message, and its code (else its type, else SERVER)
// upper-cased.
func errorReason(obj []byte) []byte {
	e := readAPIError(obj)
	code := "SERVER"
	switch {
	case e.code != "":
		code = strings.ToUpper(e.code)
	case e.typ != "":
		code = strings.ToUpper(e.typ)
	}
	// The message may be cut inside a character (readAPIError's bound):
	// the finish must stay valid JSON text for the log to hold it.
	msg := strings.ToValidUTF8(e.message, "\uFFFD")
	if msg == "" {
		msg = "the server reported an error mid-stream"
	}
	return reasonError(msg, strings.ToValidUTF8(code, "\uFFFD"))
}
