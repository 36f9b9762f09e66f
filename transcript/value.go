package transcript

import (
	"time"

	"github.com/sessionlog/sessionlog/codec"
)

// maxDepth bounds the nesting the navigator walks; codec.FromJSON has
// already refused anything deeper than its limit.
const maxDepth = 1024

// value is one JSON value in storage form (the order-preserving msgpack
// image codec.FromJSON writes). The zero value is "absent".
type value []byte

// kind is the value's JSON kind; KindInvalid when absent or damaged.
func (v value) kind() codec.Kind {
	if len(v) == 0 {
		return codec.KindInvalid
	}
	t, err := codec.NewReader(v).Next()
	if err != nil {
		return codec.KindInvalid
	}
	return t.Kind
}

// get returns the member key of an object (absent if v is no object or
// has no such key).
func (v value) get(key string) value {
	r := codec.NewReader(v)
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindObject {
		return nil
	}
	for i := 0; i < t.N; i++ {
		k, ok, err := r.Key()
		if err != nil || !ok {
			return nil
		}
		if string(k) == key {
			m, err := r.Value(maxDepth)
			if err != nil {
				return nil
			}
			return value(m)
		}
		if err := r.Skip(maxDepth); err != nil {
			return nil
		}
	}
	return nil
}

// path follows keys through nested objects.
func (v value) path(keys ...string) value {
	for _, k := range keys {
		v = v.get(k)
	}
	return v
}

// str returns a string value.
func (v value) str() (string, bool) {
	if len(v) == 0 {
		return "", false
	}
	t, err := codec.NewReader(v).Next()
	if err != nil || t.Kind != codec.KindString {
		return "", false
	}
	return string(t.Str), true
}

// text returns a string value, "" when v is not one.
func (v value) text() string {
	s, _ := v.str()
	return s
}

// num returns a number value.
func (v value) num() (float64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	t, err := codec.NewReader(v).Next()
	if err != nil || (t.Kind != codec.KindInt && t.Kind != codec.KindFloat) {
		return 0, false
	}
	return t.Number(), true
}

// boolean returns a boolean value.
func (v value) boolean() (bool, bool) {
	if len(v) == 0 {
		return false, false
	}
	t, err := codec.NewReader(v).Next()
	if err != nil || t.Kind != codec.KindBool {
		return false, false
	}
	return t.Bool, true
}

// members returns the number of members of an object (-1 if v is no
// object).
func (v value) members() int {
	t, err := codec.NewReader(v).Next()
	if err != nil || t.Kind != codec.KindObject {
		return -1
	}
	return t.N
}

// elems returns the elements of an array (nil if v is no array).
func (v value) elems() []value {
	r := codec.NewReader(v)
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindArray {
		return nil
	}
	out := make([]value, 0, t.N)
	for i := 0; i < t.N; i++ {
		e, err := r.Value(maxDepth)
		if err != nil {
			return nil
		}
		out = append(out, value(e))
	}
	return out
}

// json returns the value's JSON text (docs/format.md#json-text).
func (v value) json() string {
	out, _, err := codec.ToJSON(nil, v)
	if err != nil {
		return ""
	}
	return string(out)
}

// millis parses an RFC 3339 timestamp into Unix milliseconds.
func millis(v value) (float64, bool) {
	s, ok := v.str()
	if !ok {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	return float64(t.UnixMilli()), true
}

// str builds a string in storage form.
func mpStr(s string) []byte { return codec.AppendString(nil, s) }

// textBlock builds {"type":"text","text":s}.
func textBlock(s string) []byte { return blockOf(codec.BlockText, mpStr(s)) }

// blockOf builds {"type":typ,"text":text} from text in storage form (a
// string value), in one buffer: a line's text is copied once.
func blockOf(typ string, text value) []byte {
	return appendBlock(make([]byte, 0, len(text)+len(typ)+16), typ, text)
}

// textArray builds [{"type":"text","text":text}] from text in storage
// form, in one buffer.
func textArray(text value) []byte {
	b := codec.AppendArrayHeader(make([]byte, 0, len(text)+len(codec.BlockText)+17), 1)
	return appendBlock(b, codec.BlockText, text)
}

func appendBlock(b []byte, typ string, text value) []byte {
	b = codec.AppendMapHeader(b, 2)
	b = codec.AppendString(codec.AppendString(b, "type"), typ)
	return append(codec.AppendString(b, "text"), text...)
}

// maxFields is the most keys fields reads at once.
const maxFields = 9

// fields returns the members keys (at most maxFields) of an object in one
// scan, by the keys' index (absent ones nil): cheaper than a get per key
// when several are read, and returned by value, so it allocates nothing.
func (v value) fields(keys ...string) (out [maxFields]value) {
	r := codec.NewReader(v)
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindObject {
		return out
	}
	left := len(keys)
	for i := 0; i < t.N && left > 0; i++ {
		k, ok, err := r.Key()
		if err != nil || !ok {
			return out
		}
		at := -1
		for j, want := range keys {
			if out[j] == nil && string(k) == want {
				at = j
				break
			}
		}
		if at < 0 {
			if err := r.Skip(maxDepth); err != nil {
				return out
			}
			continue
		}
		m, err := r.Value(maxDepth)
		if err != nil {
			return out
		}
		out[at] = value(m)
		left--
	}
	return out
}

// each calls fn with every member of an object in stored order, the key
// and the value in storage form; false when v is no whole object.
func (v value) each(fn func(key string, val value)) bool {
	r := codec.NewReader(v)
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindObject {
		return false
	}
	for i := 0; i < t.N; i++ {
		k, ok, err := r.Key()
		if err != nil || !ok {
			return false
		}
		m, err := r.Value(maxDepth)
		if err != nil {
			return false
		}
		fn(string(k), value(m))
	}
	return true
}

// without returns an object without the members named (in storage form,
// the others in their order); v itself when it has none of them or is no
// object.
func (v value) without(keys ...string) value {
	type member struct {
		k string
		v value
	}
	var kept []member
	drop := false
	if !v.each(func(k string, m value) {
		for _, x := range keys {
			if k == x {
				drop = true
				return
			}
		}
		kept = append(kept, member{k, m})
	}) || !drop {
		return v
	}
	var o codec.Object
	o.Grow(len(v))
	for _, m := range kept {
		o.Value(m.k, m.v)
	}
	return o.Bytes()
}
