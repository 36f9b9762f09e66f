package wire

import (
	"strconv"
	"unicode/utf8"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
)

// maxDepth bounds the nesting the renderers walk (codec's stored limit).
const maxDepth = 1024

// request is the view of a canonical request a renderer reads: each field
// is the storage form (msgpack) of its value, nil when absent.
type request struct {
	model, system, tools, temperature, maxTokens, stop []byte
	messages                                           [][]byte
}

// parseRequest reads the top-level keys of a canonical request.
func parseRequest(mp []byte, req *request) (*request, error) {
	msgs := req.messages[:0]
	*req = request{}
	err := eachKey(mp, "request", func(key, val []byte) error {
		switch string(key) {
		case "model":
			req.model = val
		case "system":
			req.system = val
		case "tools":
			req.tools = val
		case "temperature":
			req.temperature = val
		case "maxTokens":
			req.maxTokens = val
		case "stop":
			req.stop = val
		case "messages":
			return eachElem(val, "request.messages", func(_ int, m []byte) error {
				msgs = append(msgs, m)
				return nil
			})
		}
		return nil
	})
	req.messages = msgs
	if err != nil {
		return nil, err
	}
	if req.model == nil {
		return nil, invalidf("request has no model")
	}
	return req, nil
}

func invalidf(format string, args ...interface{}) error {
	return errors.Mark(errors.NewWithDepthf(1, format, args...), ErrInvalid)
}

// eachKey calls fn for every pair of the object stored in mp, in order.
// what names the value in errors.
func eachKey(mp []byte, what string, fn func(key, val []byte) error) error {
	r := codec.NewReader(mp)
	t, err := r.Next()
	if err != nil {
		return errors.Mark(errors.Wrapf(err, "%s", errors.Safe(what)), ErrInvalid)
	}
	if t.Kind != codec.KindObject {
		return invalidf("%s: want object, got %s", errors.Safe(what), errors.Safe(t.Kind.String()))
	}
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			return errors.Mark(errors.Wrapf(err, "%s", errors.Safe(what)), ErrInvalid)
		}
		v, err := r.Value(maxDepth)
		if err != nil {
			return errors.Mark(errors.Wrapf(err, "%s", errors.Safe(what)), ErrInvalid)
		}
		if err := fn(k.Str, v); err != nil {
			return err
		}
	}
	return nil
}

// eachElem calls fn for every element of the array stored in mp.
func eachElem(mp []byte, what string, fn func(i int, val []byte) error) error {
	r := codec.NewReader(mp)
	t, err := r.Next()
	if err != nil {
		return errors.Mark(errors.Wrapf(err, "%s", errors.Safe(what)), ErrInvalid)
	}
	if t.Kind != codec.KindArray {
		return invalidf("%s: want array, got %s", errors.Safe(what), errors.Safe(t.Kind.String()))
	}
	for i := 0; i < t.N; i++ {
		v, err := r.Value(maxDepth)
		if err != nil {
			return errors.Mark(errors.Wrapf(err, "%s", errors.Safe(what)), ErrInvalid)
		}
		if err := fn(i, v); err != nil {
			return err
		}
	}
	return nil
}

// token reads the single token of a scalar value.
func token(mp []byte) codec.Token {
	t, _ := codec.NewReader(mp).Next()
	return t
}

// str returns a stored string value and whether it is one.
func str(mp []byte) ([]byte, bool) {
	t := token(mp)
	return t.Str, t.Kind == codec.KindString
}

// block is the part of a content block (SPEC §2.6) the renderers read.
// Values are stored forms, nil when absent; typ and text are decoded.
type block struct {
	typ, text         []byte
	hasText           bool
	id, name, args    []byte // tool-call: stored values
	toolCallID        []byte // tool-result: stored value
	content           []byte // tool-result: stored content array
	isError           bool
	textOK, typeKnown bool
}

// readBlock reads a content block. A text whose value is not a string is
// refused where a renderer needs it (textOf).
func readBlock(mp []byte, b *block, what func() string) error {
	*b = block{}
	return eachKey(mp, "block", func(key, val []byte) error {
		switch string(key) {
		case "type":
			b.typ, _ = str(val)
		case "text":
			b.hasText = true
			b.text, b.textOK = str(val)
		case "id":
			b.id = val
		case "name":
			b.name = val
		case "arguments":
			b.args = val
		case "toolCallId":
			b.toolCallID = val
		case "content":
			b.content = val
		case "isError":
			t := token(val)
			b.isError = t.Kind == codec.KindBool && t.Bool
		}
		return nil
	})
}

// writer assembles a body: b is the output, text a scratch buffer for
// concatenated texts.
type writer struct {
	b    []byte
	text []byte
}

func (w *writer) raw(s string) { w.b = append(w.b, s...) }

// str writes s as a JSON string with codec's encoder (SPEC §2.2).
func (w *writer) str(s []byte) { w.b = codec.AppendJSONString(w.b, s) }

// value writes a stored value as JSON text (JSON.stringify of it).
func (w *writer) value(mp []byte) error {
	out, err := codec.NewReader(mp).AppendJSON(w.b)
	if err != nil {
		return errors.Mark(errors.Wrap(err, "value"), ErrInvalid)
	}
	w.b = out
	return nil
}

// joinWTF8 appends s to dst as string concatenation in UTF-16 does: a
// high surrogate at the end of dst followed by a low surrogate at the start
// of s (both kept alone in WTF-8) become one four-byte character.
func joinWTF8(dst, s []byte) []byte {
	n := len(dst)
	if n >= 3 && len(s) >= 3 && dst[n-3] == 0xed && dst[n-2] >= 0xa0 && dst[n-2] <= 0xaf &&
		s[0] == 0xed && s[1] >= 0xb0 && s[1] <= 0xbf {
		hi := rune(dst[n-2]&0x0f)<<6 | rune(dst[n-1]&0x3f) // 0xd800 + …
		lo := rune(s[1]&0x0f)<<6 | rune(s[2]&0x3f)
		r := 0x10000 + (hi << 10) + lo
		dst = utf8.AppendRune(dst[:n-3], r)
		return append(dst, s[3:]...)
	}
	return append(dst, s...)
}

// field writes `,key:value` (no comma before the first field), nothing when
// the value is absent: JSON.stringify omits undefined members.
func (w *writer) field(comma *bool, key string, val []byte) error {
	if val == nil {
		return nil
	}
	if *comma {
		w.b = append(w.b, ',')
	}
	*comma = true
	w.raw(key)
	return w.value(val)
}

// itoa formats a small index for error messages.
func itoa(i int) string { return strconv.Itoa(i) }
