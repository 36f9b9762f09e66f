package compact

import (
	"unicode/utf8"

	"github.com/sessionlog/sessionlog/codec"
)

// Estimator estimates the tokens of a request's parts (docs/rules.md#compaction). The
// pressure estimate of a request is the sum over the prefix and history
// messages of Message+4, plus System.
type Estimator interface {
	// Message estimates one message given as JSON (docs/format.md#content-blocks); it returns
	// the content estimate, without the per-message 4.
	Message(msg []byte) int
	// System estimates the system prompt.
	System(system string) int
}

// Chars is the default estimator of docs/rules.md#compaction: characters per token, lengths
// in UTF-16 code units, 4 tokens of overhead per block and per message.
// PerToken 0 means 4.
type Chars struct {
	PerToken int
}

var _ Estimator = Chars{}

func (c Chars) cpt() int {
	if c.PerToken > 0 {
		return c.PerToken
	}
	return 4
}

// ceil returns ⌈n/cpt⌉.
func (c Chars) ceil(n int) int { return (n + c.cpt() - 1) / c.cpt() }

// System returns ⌈len(system)/charsPerToken⌉.
func (c Chars) System(system string) int { return c.ceil(utf16Len([]byte(system))) }

// Message returns the content estimate of a message: the sum of its block
// estimates. A message that is not valid JSON estimates as its length.
func (c Chars) Message(msg []byte) int {
	mp, err := codec.FromJSON(nil, msg, codec.Limits{})
	if err != nil {
		return c.ceil(utf16Len(msg))
	}
	r := codec.NewReader(mp)
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindObject {
		return c.ceil(utf16Len(msg))
	}
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			break
		}
		if string(k.Str) == "content" {
			return c.content(r)
		}
		if r.Skip(1<<10) != nil {
			break
		}
	}
	return 0
}

// content estimates the content array at r.
func (c Chars) content(r *codec.Reader) int {
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindArray {
		return 0
	}
	sum := 0
	for i := 0; i < t.N; i++ {
		raw, err := r.Value(1 << 10)
		if err != nil {
			return sum
		}
		sum += c.block(raw)
	}
	return sum
}

// block estimates one content block given as its msgpack image.
func (c Chars) block(raw []byte) int {
	var typ, text, name, args []byte
	var inner []byte
	r := codec.NewReader(raw)
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindObject {
		return c.other(raw)
	}
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			return c.other(raw)
		}
		v, err := r.Value(1 << 10)
		if err != nil {
			return c.other(raw)
		}
		switch string(k.Str) {
		case "type":
			typ = str(v)
		case "text":
			text = str(v)
		case "name":
			name = str(v)
		case "arguments":
			args = str(v)
		case "content":
			inner = v
		}
	}
	switch string(typ) {
	case codec.BlockText, codec.BlockReasoning:
		return c.ceil(utf16Len(text)) + 4
	case codec.BlockToolCall:
		return c.ceil(utf16Len(name)) + c.ceil(utf16Len(args)) + 4
	case codec.BlockToolResult:
		return c.content(codec.NewReader(inner)) + 4
	}
	return c.other(raw)
}

// other estimates an opaque block by the length of its JSON.
func (c Chars) other(raw []byte) int {
	js, _, err := codec.ToJSON(nil, raw)
	if err != nil {
		return 4
	}
	return c.ceil(utf16Len(js)) + 4
}

// str returns the bytes of a msgpack string value, or nil.
func str(v []byte) []byte {
	t, err := codec.NewReader(v).Next()
	if err != nil || t.Kind != codec.KindString {
		return nil
	}
	return t.Str
}

// utf16Len is the length of s in UTF-16 code units (lone surrogates,
// stored as three-byte WTF-8, count one).
func utf16Len(s []byte) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if size == 1 && c == 0xed && i+2 < len(s) { // WTF-8 surrogate
			n++
			i += 3
			continue
		}
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}

// Estimate returns the pressure estimate of a request (docs/rules.md#compaction).
func Estimate(e Estimator, prefix, history [][]byte, system string) int {
	sum := e.System(system)
	for _, m := range prefix {
		sum += e.Message(m) + 4
	}
	for _, m := range history {
		sum += e.Message(m) + 4
	}
	return sum
}
