package audit

import (
	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
)

// MaxDepth bounds the nesting the readers of this package follow inside a
// stored value.
const MaxDepth = 1024

// EachField calls fn with every key and value (its stored image) of the
// object image obj, in stored order. A value that is not an object calls
// fn never and is no error.
func EachField(obj []byte, fn func(key string, val []byte) error) error {
	r := codec.NewReader(obj)
	t, err := r.Next()
	if err != nil {
		return errors.Wrap(err, "read stored value")
	}
	if t.Kind != codec.KindObject {
		return nil
	}
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			return errors.Wrap(err, "read stored key")
		}
		v, err := r.Value(MaxDepth)
		if err != nil {
			return errors.Wrap(err, "read stored value")
		}
		if err := fn(string(k.Str), v); err != nil {
			return err
		}
	}
	return nil
}

// errFound stops EachField once Lookup has what it wants.
var errFound = errors.New("audit: found")

// Lookup follows keys from the object image obj and returns the stored
// image of the value they name; ok is false when one is missing or a value
// on the way is not an object.
func Lookup(obj []byte, keys ...string) (val []byte, ok bool, err error) {
	val = obj
	for _, key := range keys {
		var next []byte
		err := EachField(val, func(k string, v []byte) error {
			if k == key {
				next = v
				return errFound
			}
			return nil
		})
		if err != nil && !errors.Is(err, errFound) {
			return nil, false, err
		}
		if next == nil {
			return nil, false, nil
		}
		val = next
	}
	return val, true, nil
}

// Scalar reads the token of a stored value (for a container, its header).
func Scalar(val []byte) codec.Token {
	t, err := codec.NewReader(val).Next()
	if err != nil {
		return codec.Token{}
	}
	return t
}

// LookupString returns the string at keys, or "" when there is none.
func LookupString(obj []byte, keys ...string) string {
	v, ok, err := Lookup(obj, keys...)
	if err != nil || !ok {
		return ""
	}
	if t := Scalar(v); t.Kind == codec.KindString {
		return string(t.Str)
	}
	return ""
}

// JSONOf returns the JSON text of a stored value ("" if it is damaged,
// which the store's strict decoding rules out).
func JSONOf(val []byte) string {
	out, _, err := codec.ToJSON(nil, val)
	if err != nil {
		return ""
	}
	return string(out)
}

// Messages returns the JSON text of each message of a request's canonical
// JSON, in order.
func Messages(req []byte) ([][]byte, error) {
	mp, err := codec.FromJSON(nil, req, codec.Limits{})
	if err != nil {
		return nil, err
	}
	msgs, _, err := Lookup(mp, "messages")
	if err != nil {
		return nil, err
	}
	r := codec.NewReader(msgs)
	t, err := r.Next()
	if err != nil {
		return nil, err
	}
	out := make([][]byte, 0, t.N)
	for i := 0; i < t.N; i++ {
		js, err := r.AppendJSON(nil)
		if err != nil {
			return nil, err
		}
		out = append(out, js)
	}
	return out, nil
}
