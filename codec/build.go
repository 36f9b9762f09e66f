package codec

// Object builds the storage form of a JSON object whose keys are written
// in the order they are added: how the engine writes the events it
// creates, in the key orders of docs/format.md#event-types. The zero value is an empty
// object.
type Object struct {
	n    int
	body []byte
}

// Str adds a string member.
func (o *Object) Str(key, v string) *Object {
	o.key(key)
	o.body = AppendString(o.body, v)
	return o
}

// Int adds an integer member.
func (o *Object) Int(key string, v int64) *Object {
	o.key(key)
	o.body = AppendInt(o.body, v)
	return o
}

// Number adds a number member, stored as docs/format.md#carried-values says.
func (o *Object) Number(key string, v float64) *Object {
	o.key(key)
	o.body = AppendNumber(o.body, v)
	return o
}

// Bool adds a boolean member.
func (o *Object) Bool(key string, v bool) *Object {
	o.key(key)
	o.body = AppendBool(o.body, v)
	return o
}

// Value adds a member whose value is already in storage form (one whole
// msgpack value, e.g. another Object's Bytes).
func (o *Object) Value(key string, mp []byte) *Object {
	o.key(key)
	o.body = append(o.body, mp...)
	return o
}

// Array adds an array member from values in storage form, written in
// place (no intermediate array).
func (o *Object) Array(key string, values ...[]byte) *Object {
	o.key(key)
	o.body = AppendArrayHeader(o.body, len(values))
	for _, v := range values {
		o.body = append(o.body, v...)
	}
	return o
}

// Ints adds an array of integers.
func (o *Object) Ints(key string, vs []int64) *Object {
	o.key(key)
	o.body = AppendArrayHeader(o.body, len(vs))
	for _, v := range vs {
		o.body = AppendInt(o.body, v)
	}
	return o
}

// Reset empties the object, keeping its buffer for the next members.
func (o *Object) Reset() { o.n, o.body = 0, o.body[:0] }

// Len is the number of members added.
func (o *Object) Len() int { return o.n }

func (o *Object) key(k string) {
	o.n++
	o.body = AppendString(o.body, k)
}

// Grow makes room for n more bytes of members, so that adding a large
// value does not copy the members again.
func (o *Object) Grow(n int) {
	if cap(o.body)-len(o.body) < n {
		body := make([]byte, len(o.body), len(o.body)+n)
		copy(body, o.body)
		o.body = body
	}
}

// AppendTo appends the object's storage form to dst.
func (o *Object) AppendTo(dst []byte) []byte {
	return append(AppendMapHeader(dst, o.n), o.body...)
}

// Size is the length of the object's storage form.
func (o *Object) Size() int { return len(AppendMapHeader(nil, o.n)) + len(o.body) }

// Bytes returns the object's storage form.
func (o *Object) Bytes() []byte {
	out := AppendMapHeader(make([]byte, 0, len(o.body)+5), o.n)
	return append(out, o.body...)
}

// Array builds the storage form of an array from values in storage form.
func Array(values ...[]byte) []byte {
	n := 5 // the longest array header
	for _, v := range values {
		n += len(v)
	}
	out := AppendArrayHeader(make([]byte, 0, n), len(values))
	for _, v := range values {
		out = append(out, v...)
	}
	return out
}

// NewEvent builds an event the engine writes: the envelope in docs/format.md#envelope's
// order (type, seq, time, data, sourceEventSeqs?, surfaceOp?) around data,
// a storage-form object. Surface types get op (OpAppend when op is the
// zero value); sources are written when non-nil (an empty non-nil slice
// writes []). The result is decoded with DecodeEvent, so it carries its
// typed view and is checked like any imported event.
func NewEvent(typ string, seq int64, time float64, data []byte, op SurfaceOp, sources []int64) (Event, error) {
	var o Object
	// Room for every member at once: a long answer's message (its text
	// and its thousands of chunk seqs) is then copied once, not through
	// every growth of the buffer.
	o.Grow(64 + len(typ) + len(data) + 9*len(sources))
	o.Str("type", typ).Int("seq", seq).Number("time", time).Value("data", data)
	if IsSurfaceType(typ) {
		if sources != nil {
			o.Ints("sourceEventSeqs", sources)
		}
		switch op.Kind {
		case OpReplace:
			var r Object
			r.Str("op", "replace").Int("start", op.Start).Int("end", op.End)
			o.Value("surfaceOp", r.Bytes())
		default:
			o.Str("surfaceOp", "append")
		}
	}
	return DecodeEvent(o.Bytes())
}
