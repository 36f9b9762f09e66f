package main

import (
	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
)

// maxDepth bounds the nesting logtool follows inside a stored value.
const maxDepth = 1024

// eachField calls fn with every key and value (its stored image) of the
// object image obj, in stored order. A value that is not an object calls
// fn never and is no error.
func eachField(obj []byte, fn func(key string, val []byte) error) error {
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
		v, err := r.Value(maxDepth)
		if err != nil {
			return errors.Wrap(err, "read stored value")
		}
		if err := fn(string(k.Str), v); err != nil {
			return err
		}
	}
	return nil
}

// errFound stops eachField once lookup has what it wants.
var errFound = errors.New("logtool: found")

// lookup follows keys from the object image obj and returns the stored
// image of the value they name; ok is false when one is missing or a value
// on the way is not an object.
func lookup(obj []byte, keys ...string) (val []byte, ok bool, err error) {
	val = obj
	for _, key := range keys {
		var next []byte
		err := eachField(val, func(k string, v []byte) error {
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

// scalar reads the token of a stored value (for a container, its header).
func scalar(val []byte) codec.Token {
	t, err := codec.NewReader(val).Next()
	if err != nil {
		return codec.Token{}
	}
	return t
}

// lookupString returns the string at keys, or "" when there is none.
func lookupString(obj []byte, keys ...string) string {
	v, ok, err := lookup(obj, keys...)
	if err != nil || !ok {
		return ""
	}
	if t := scalar(v); t.Kind == codec.KindString {
		return string(t.Str)
	}
	return ""
}

// jsonOf returns the JSON text of a stored value ("" if it is damaged,
// which the store's strict decoding rules out).
func jsonOf(val []byte) string {
	out, _, err := codec.ToJSON(nil, val)
	if err != nil {
		return ""
	}
	return string(out)
}

// usage sums the token usage of assistant messages (SPEC §2.5: the
// disjoint buckets of assistant/message.data.usage).
type usage struct {
	// Messages counts the assistant messages that carry a usage object.
	Messages                                        int64
	Input, Output, CacheRead, CacheWrite, Reasoning int64
}

// add adds the usage of ev when it is an assistant/message that has one.
func (u *usage) add(ev *codec.Event) error {
	if ev.Type != codec.TypeAssistantMessage {
		return nil
	}
	v, ok, err := lookup(ev.Raw, "data", "usage")
	if err != nil {
		return errors.Wrapf(err, "seq %d: usage", errors.Safe(ev.Seq))
	}
	if !ok {
		return nil
	}
	u.Messages++
	return eachField(v, func(k string, val []byte) error {
		t := scalar(val)
		if t.Kind != codec.KindInt && t.Kind != codec.KindFloat {
			return nil
		}
		n := int64(t.Number())
		switch k {
		case "inputTokens":
			u.Input += n
		case "outputTokens":
			u.Output += n
		case "cacheReadTokens":
			u.CacheRead += n
		case "cacheWriteTokens":
			u.CacheWrite += n
		case "reasoningTokens":
			u.Reasoning += n
		}
		return nil
	})
}
