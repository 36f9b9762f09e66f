package codec

import (
	"math"

	"github.com/cockroachdb/errors"
)

// fieldReader decodes the typed fields the engine reads out of a stored
// object. Its methods read one value and check its kind; the errors name
// the key (a schema name, never user content) and are marked ErrInvalid.
type fieldReader struct {
	r *Reader
}

func wrongType(key string, want string, got Kind) error {
	if got == KindNull {
		return invalidf("codec: %s: explicit null", errors.Safe(key))
	}
	return invalidf("codec: %s: want %s, got %s", errors.Safe(key), errors.Safe(want), errors.Safe(got.String()))
}

// object reads a map header and calls fn for every key, leaving fn to read
// the value (fn must consume exactly one value, or call skip).
func (f fieldReader) object(key string, fn func(k []byte) error) error {
	t, err := f.r.Next()
	if err != nil {
		return corruptOrShort(err)
	}
	if t.Kind != KindObject {
		return wrongType(key, "object", t.Kind)
	}
	for i := 0; i < t.N; i++ {
		k, ok, err := f.r.key()
		if err != nil {
			return corruptOrShort(err)
		}
		if !ok {
			return corruptf("codec: %s: object key is not a string", errors.Safe(key))
		}
		if err := fn(k); err != nil {
			return err
		}
	}
	return nil
}

// array reads an array header and calls fn for each element index.
func (f fieldReader) array(key string, fn func(i int) error) error {
	t, err := f.r.Next()
	if err != nil {
		return corruptOrShort(err)
	}
	if t.Kind != KindArray {
		return wrongType(key, "array", t.Kind)
	}
	for i := 0; i < t.N; i++ {
		if err := fn(i); err != nil {
			return err
		}
	}
	return nil
}

func (f fieldReader) skip() error {
	return corruptOrShort(f.r.Skip(maxStoredDepth))
}

// raw returns the bytes of the next value, whatever its kind but null.
func (f fieldReader) raw(key string) ([]byte, error) {
	start := f.r.off
	if err := f.r.Skip(maxStoredDepth); err != nil {
		return nil, corruptOrShort(err)
	}
	if f.r.b[start] == mpNil {
		return nil, wrongType(key, "a value", KindNull)
	}
	return f.r.b[start:f.r.off], nil
}

// rawObject returns the bytes of the next value, which must be an object.
func (f fieldReader) rawObject(key string) ([]byte, error) {
	start := f.r.off
	if f.r.off < len(f.r.b) {
		if c := f.r.b[start]; !(c&0xf0 == 0x80 || c == mpMap16 || c == mpMap32) {
			t, err := f.r.Next()
			if err != nil {
				return nil, corruptOrShort(err)
			}
			return nil, wrongType(key, "object", t.Kind)
		}
	}
	return f.raw(key)
}

func (f fieldReader) str(key string) (string, error) {
	t, err := f.r.Next()
	if err != nil {
		return "", corruptOrShort(err)
	}
	if t.Kind != KindString {
		return "", wrongType(key, "string", t.Kind)
	}
	return string(t.Str), nil
}

// name reads a string that is usually one of the engine's own names (an
// event, chunk or block type, a source kind): those are returned without
// allocating.
func (f fieldReader) name(key string) (string, error) {
	t, err := f.r.Next()
	if err != nil {
		return "", corruptOrShort(err)
	}
	if t.Kind != KindString {
		return "", wrongType(key, "string", t.Kind)
	}
	return intern(t.Str), nil
}

// interned are the names name returns without allocating.
var interned = func() map[string]string {
	m := map[string]string{}
	for _, n := range []string{
		TypeTurnStart, TypeTurnEnd, TypeStepStart, TypeStepEnd, TypeUserMessage, TypePromptBlocked,
		TypeContextMessage, TypeSteeringMessage, TypeAssistantChunk, TypeAssistantMessage, TypeToolCall,
		TypeToolResult, TypeRequestHeader, TypeHeaderDelta, TypeRequestDigest, TypeCompactStart,
		TypeCompactSummary, TypeCompactEnd, BlockText, BlockReasoning, BlockToolCall, BlockToolResult,
		"block-start", "text-delta", "reasoning-delta", "tool-call-delta", "block-end", "usage", "finish",
		"user", "plugin", "completed", "aborted", "error", "interrupted", "disposed",
	} {
		m[n] = n
	}
	return m
}()

func intern(b []byte) string {
	if s, ok := interned[string(b)]; ok {
		return s
	}
	return string(b)
}

func (f fieldReader) boolean(key string) (bool, error) {
	t, err := f.r.Next()
	if err != nil {
		return false, corruptOrShort(err)
	}
	if t.Kind != KindBool {
		return false, wrongType(key, "boolean", t.Kind)
	}
	return t.Bool, nil
}

func (f fieldReader) number(key string) (float64, error) {
	t, err := f.r.Next()
	if err != nil {
		return 0, corruptOrShort(err)
	}
	if t.Kind != KindInt && t.Kind != KindFloat {
		return 0, wrongType(key, "number", t.Kind)
	}
	return t.Number(), nil
}

// integer reads a number that must be an integer within ±2^53.
func (f fieldReader) integer(key string) (int64, error) {
	t, err := f.r.Next()
	if err != nil {
		return 0, corruptOrShort(err)
	}
	switch {
	case t.Kind == KindInt && t.Int >= -(1<<53) && t.Int <= 1<<53:
		return t.Int, nil
	case t.Kind == KindInt || t.Kind == KindFloat:
		if t.Kind == KindFloat && t.Float == math.Trunc(t.Float) && math.Abs(t.Float) <= 1<<53 {
			return int64(t.Float), nil
		}
		return 0, invalidf("codec: %s: want an integer", errors.Safe(key))
	}
	return 0, wrongType(key, "integer", t.Kind)
}

// count reads an integer that must be ≥ 0.
func (f fieldReader) count(key string) (int64, error) {
	v, err := f.integer(key)
	if err == nil && v < 0 {
		return 0, invalidf("codec: %s: negative", errors.Safe(key))
	}
	return v, err
}

// corruptOrShort marks a Reader failure (truncated or malformed msgpack)
// as corruption; errors already classified pass through.
func corruptOrShort(err error) error {
	if err == nil || errors.Is(err, ErrInvalid) || errors.Is(err, ErrCorrupt) {
		return err
	}
	return errors.Mark(err, ErrCorrupt)
}
