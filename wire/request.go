package wire

import (
	"strconv"
	"unicode/utf8"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// maxDepth bounds the nesting the renderers walk (codec's stored limit).
const maxDepth = 1024

// request is the view of a canonical request a renderer reads: each field
// is the storage form (msgpack) of its value, nil when absent.
type request struct {
	model, system, tools, temperature, maxTokens, stop []byte
}

// parseRequest reads the top-level keys of a canonical request; the
// messages array is handed to messages as it comes, read in place.
func parseRequest(mp []byte, req *request, messages func(*codec.Reader) error) (*request, error) {
	*req = request{}
	r := codec.NewReader(mp)
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindObject {
		return nil, invalidf("request: not an object")
	}
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			return nil, errclass.Mark(errors.Wrap(err, "request"), ErrInvalid)
		}
		var dst *[]byte
		switch string(k.Str) {
		case "model":
			dst = &req.model
		case "system":
			dst = &req.system
		case "tools":
			dst = &req.tools
		case "temperature":
			dst = &req.temperature
		case "maxTokens":
			dst = &req.maxTokens
		case "stop":
			dst = &req.stop
		case "messages":
			if err := messages(r); err != nil {
				return nil, err
			}
			continue
		}
		v, err := r.Value(maxDepth)
		if err != nil {
			return nil, errclass.Mark(errors.Wrap(err, "request"), ErrInvalid)
		}
		if dst != nil {
			*dst = v
		}
	}
	if req.model == nil {
		return nil, invalidf("request has no model")
	}
	return req, nil
}

func invalidf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrInvalid)
}

// eachKey calls fn for every pair of the object stored in mp, in order.
// what names the value in errors.
func eachKey(mp []byte, what string, fn func(key, val []byte) error) error {
	r := codec.NewReader(mp)
	t, err := r.Next()
	if err != nil {
		return errclass.Mark(errors.Wrapf(err, "%s", errors.Safe(what)), ErrInvalid)
	}
	if t.Kind != codec.KindObject {
		return invalidf("%s: want object, got %s", errors.Safe(what), errors.Safe(t.Kind.String()))
	}
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			return errclass.Mark(errors.Wrapf(err, "%s", errors.Safe(what)), ErrInvalid)
		}
		v, err := r.Value(maxDepth)
		if err != nil {
			return errclass.Mark(errors.Wrapf(err, "%s", errors.Safe(what)), ErrInvalid)
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
		return errclass.Mark(errors.Wrapf(err, "%s", errors.Safe(what)), ErrInvalid)
	}
	if t.Kind != codec.KindArray {
		return invalidf("%s: want array, got %s", errors.Safe(what), errors.Safe(t.Kind.String()))
	}
	for i := 0; i < t.N; i++ {
		v, err := r.Value(maxDepth)
		if err != nil {
			return errclass.Mark(errors.Wrapf(err, "%s", errors.Safe(what)), ErrInvalid)
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

// block is the part of a content block (docs/format.md#content-blocks) the renderers read.
// Values are stored forms, nil when absent; typ and text are decoded.
type block struct {
	typ, text      []byte
	id, name, args []byte // tool-call: stored values
	toolCallID     []byte // tool-result: stored value
	content        []byte // tool-result: stored content array
	isError        bool
	textOK         bool
}

// message is one request message as the renderers read it: its role and
// its blocks, read in one pass (values alias the request's storage form).
type message struct {
	index  int
	role   []byte
	blocks []block
}

// count returns the number of blocks of type typ.
func (m *message) count(typ string) int {
	n := 0
	for j := range m.blocks {
		if string(m.blocks[j].typ) == typ {
			n++
		}
	}
	return n
}

// eachMessage reads a stored messages array from r, one message at a time
// into m (reused), and calls fn with it.
func eachMessage(r *codec.Reader, m *message, fn func(*message) error) error {
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindArray {
		return invalidf("request messages: not an array")
	}
	for i := 0; i < t.N; i++ {
		m.index, m.role, m.blocks = i, nil, m.blocks[:0]
		if err := readMessage(r, m); err != nil {
			return err
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

// readMessage reads one message from r: role, and content's blocks
// inline, so that the message is walked once.
func readMessage(r *codec.Reader, m *message) error {
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindObject {
		return invalidf("message %d: not an object", errors.Safe(m.index))
	}
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			return errclass.Mark(errors.Wrapf(err, "message %d", errors.Safe(m.index)), ErrInvalid)
		}
		switch string(k.Str) {
		case "role":
			v, err := r.Value(maxDepth)
			if err != nil {
				return errclass.Mark(errors.Wrapf(err, "message %d", errors.Safe(m.index)), ErrInvalid)
			}
			m.role, _ = str(v)
		case "content":
			a, err := r.Next()
			if err != nil || a.Kind != codec.KindArray {
				return invalidf("message %d: content is not an array", errors.Safe(m.index))
			}
			for j := 0; j < a.N; j++ {
				m.blocks = append(m.blocks, block{})
				if err := readBlockFrom(r, &m.blocks[len(m.blocks)-1]); err != nil {
					return errors.Wrapf(err, "message %d block %d", errors.Safe(m.index), errors.Safe(j))
				}
			}
		default:
			if err := r.Skip(maxDepth); err != nil {
				return errclass.Mark(errors.Wrapf(err, "message %d", errors.Safe(m.index)), ErrInvalid)
			}
		}
	}
	return nil
}

// readBlock reads a content block. A text whose value is not a string is
// refused where a renderer needs it.
func readBlock(mp []byte, b *block) error {
	return readBlockFrom(codec.NewReader(mp), b)
}

// readBlockFrom reads a content block from r, in place.
func readBlockFrom(r *codec.Reader, b *block) error {
	*b = block{}
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindObject {
		return invalidf("block: not an object")
	}
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			return errclass.Mark(errors.Wrap(err, "block"), ErrInvalid)
		}
		val, err := r.Value(maxDepth)
		if err != nil {
			return errclass.Mark(errors.Wrap(err, "block"), ErrInvalid)
		}
		switch string(k.Str) {
		case "type":
			b.typ, _ = str(val)
		case "text":
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
	}
	return nil
}

// writer assembles a body: b is the output, text a scratch buffer for
// concatenated texts.
type writer struct {
	b    []byte
	text []byte
	msg  message
	msgs []byte // the rendered messages, each preceded by a comma
}

func (w *writer) raw(s string) { w.b = append(w.b, s...) }

// str writes s as a JSON string with codec's encoder (docs/format.md#json-text).
func (w *writer) str(s []byte) { w.b = codec.AppendJSONString(w.b, s) }

// value writes a stored value as JSON text (JSON.stringify of it).
func (w *writer) value(mp []byte) error {
	out, err := codec.NewReader(mp).AppendJSON(w.b)
	if err != nil {
		return errclass.Mark(errors.Wrap(err, "value"), ErrInvalid)
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

// tools writes "tools" when the request has one or more: each tool as
// open, its name, description and parameters (under paramsKey, each
// omitted when absent), then end. The two APIs differ only in those
// three strings.
func (w *writer) tools(tools []byte, open, paramsKey, end string) error {
	n := 0
	err := eachElem(tools, "request.tools", func(_ int, t []byte) error {
		var name, desc, params []byte
		err := eachKey(t, "tool", func(key, val []byte) error {
			switch string(key) {
			case "name":
				name = val
			case "description":
				desc = val
			case "parameters":
				params = val
			}
			return nil
		})
		if err != nil {
			return err
		}
		if n == 0 {
			w.raw(`,"tools":[`)
		} else {
			w.b = append(w.b, ',')
		}
		n++
		w.raw(open)
		comma := false
		for _, f := range []struct {
			key string
			val []byte
		}{{`"name":`, name}, {`"description":`, desc}, {paramsKey, params}} {
			if err := w.field(&comma, f.key, f.val); err != nil {
				return err
			}
		}
		w.raw(end)
		return nil
	})
	if n > 0 {
		w.b = append(w.b, ']')
	}
	return err
}

// itoa formats a small index for error messages.
func itoa(i int) string { return strconv.Itoa(i) }
