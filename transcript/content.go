package transcript

import "github.com/sessionlog/sessionlog/codec"

// reserved are the block types the engine reads (docs/format.md#content-blocks): a source
// block passed through opaque must not use one of them.
func reserved(t string) bool {
	switch t {
	case codec.BlockText, codec.BlockReasoning, codec.BlockToolCall, codec.BlockToolResult:
		return true
	}
	return false
}

// opaque reports whether v can be passed through as an opaque block: an
// object with a non-empty string type the engine does not read.
func opaque(v value) bool {
	if v.kind() != codec.KindObject {
		return false
	}
	t, ok := v.get("type").str()
	return ok && t != "" && !reserved(t)
}

// blocks converts a source content array: blocks whose type is in text
// become text blocks, the rest pass through opaque. ok is false when a
// block can be neither.
func blocks(elems []value, text ...string) (out [][]byte, ok bool) {
	out = make([][]byte, 0, len(elems))
	for _, e := range elems {
		b, ok := block(e, text...)
		if !ok {
			return nil, false
		}
		out = append(out, b)
	}
	return out, true
}

func block(e value, text ...string) ([]byte, bool) {
	t, _ := e.get("type").str()
	for _, tt := range text {
		if t == tt {
			s := e.get("text")
			if s.kind() != codec.KindString {
				return nil, false
			}
			return blockOf(codec.BlockText, s), true
		}
	}
	if !opaque(e) {
		return nil, false
	}
	return append([]byte(nil), e...), true
}

// contentOf converts a message's content: a string is one text block, an
// array is converted by blocks.
func contentOf(v value, text ...string) ([][]byte, bool) {
	switch v.kind() {
	case codec.KindString:
		return [][]byte{blockOf(codec.BlockText, v)}, true
	case codec.KindArray:
		return blocks(v.elems(), text...)
	}
	return nil, false
}

// resultContent is a tool result's content as a content array: empty when
// absent or null, one text block for a string, else its text parts (ok
// false when a part does not convert). Claude Code's tool_result blocks
// and Chat Completions' tool messages share it.
func resultContent(c value) ([]byte, bool) {
	switch c.kind() {
	case codec.KindInvalid, codec.KindNull:
		return codec.Array(), true
	case codec.KindString:
		return textArray(c), true
	}
	bs, ok := contentOf(c, "text")
	if !ok {
		return nil, false
	}
	return codec.Array(bs...), true
}
