package header

import (
	"math"
	"strconv"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
)

// maxDepth bounds nesting when skipping or copying stored values; it is
// the JSON decoder's default limit (SPEC §2.2).
const maxDepth = 512

// fields reads the typed keys of a stored value. Every method consumes
// exactly one value. Errors name the key path (schema names and indices,
// never content) and are marked ErrInvalid, or ErrCorrupt for bytes that
// are not msgpack.
type fields struct {
	r *codec.Reader
}

func newFields(mp []byte) fields { return fields{r: codec.NewReader(mp)} }

func wrongKind(path string, want string, got codec.Kind) error {
	if got == codec.KindNull {
		return invalidf("header: %s: explicit null", errors.Safe(path))
	}
	return invalidf("header: %s: want %s, got %s",
		errors.Safe(path), errors.Safe(want), errors.Safe(got.String()))
}

func (f fields) next() (codec.Token, error) {
	t, err := f.r.Next()
	return t, corrupt(err)
}

// object reads a map and calls fn with each key; fn reads the value.
// A key seen twice is refused (the storage form forbids it, but Decode
// takes bytes from anywhere).
func (f fields) object(path string, fn func(key string) error) error {
	t, err := f.next()
	if err != nil {
		return err
	}
	if t.Kind != codec.KindObject {
		return wrongKind(path, "object", t.Kind)
	}
	for i := 0; i < t.N; i++ {
		k, err := f.next()
		if err != nil {
			return err
		}
		if k.Kind != codec.KindString {
			return corruptf("header: %s: object key is a %s",
				errors.Safe(path), errors.Safe(k.Kind.String()))
		}
		if err := fn(string(k.Str)); err != nil {
			return err
		}
	}
	return nil
}

// array reads an array and calls fn for each index; fn reads the element.
func (f fields) array(path string, fn func(i int) error) error {
	t, err := f.next()
	if err != nil {
		return err
	}
	if t.Kind != codec.KindArray {
		return wrongKind(path, "array", t.Kind)
	}
	for i := 0; i < t.N; i++ {
		if err := fn(i); err != nil {
			return err
		}
	}
	return nil
}

func (f fields) str(path string) (string, error) {
	t, err := f.next()
	if err != nil {
		return "", err
	}
	if t.Kind != codec.KindString {
		return "", wrongKind(path, "string", t.Kind)
	}
	return string(t.Str), nil
}

func (f fields) number(path string) (float64, error) {
	t, err := f.next()
	if err != nil {
		return 0, err
	}
	if t.Kind != codec.KindInt && t.Kind != codec.KindFloat {
		return 0, wrongKind(path, "number", t.Kind)
	}
	return t.Number(), nil
}

// maxSafe is 2^53, the largest magnitude up to which every integer is a
// JavaScript number exactly.
const maxSafe = 1 << 53

// integer reads a number that must be an integer of magnitude at most 2^53.
func (f fields) integer(path string) (int64, error) {
	t, err := f.next()
	if err != nil {
		return 0, err
	}
	switch t.Kind {
	case codec.KindInt:
		if t.Int >= -maxSafe && t.Int <= maxSafe {
			return t.Int, nil
		}
	case codec.KindFloat:
		if t.Float == math.Trunc(t.Float) && math.Abs(t.Float) <= maxSafe {
			return int64(t.Float), nil
		}
	default:
		return 0, wrongKind(path, "integer", t.Kind)
	}
	return 0, invalidf("header: %s: want an integer within ±2^53", errors.Safe(path))
}

// value returns the bytes of the next value, which must not be null. They
// alias the reader's buffer.
func (f fields) value(path string) ([]byte, error) {
	raw, err := f.r.Value(maxDepth)
	if err != nil {
		return nil, corrupt(err)
	}
	if t, err := codec.NewReader(raw).Next(); err == nil && t.Kind == codec.KindNull {
		return nil, wrongKind(path, "a value", codec.KindNull)
	}
	return raw, nil
}

func (f fields) skip() error { return corrupt(f.r.Skip(maxDepth)) }

// whole checks that mp is exactly one well-formed stored value, so that
// decoders need only check kinds.
func whole(mp []byte, what string) error {
	if err := codec.ValidateValue(mp); err != nil {
		return errors.Wrapf(err, "header: %s", errors.Safe(what))
	}
	return nil
}

// seen tracks keys already read in one object.
type seen uint16

// mark records bit and refuses a second occurrence.
func (s *seen) mark(bit seen, path string) error {
	if *s&bit != 0 {
		return invalidf("header: %s: duplicate key", errors.Safe(path))
	}
	*s |= bit
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}
