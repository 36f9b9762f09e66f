package codec

import (
	"encoding/binary"
	"math"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// Fields is the one field reader: it decodes the typed fields the engine
// reads out of a stored value, for codec's events and header's snapshots
// alike (so the two cannot drift). Each method reads exactly one value and
// checks its kind; values are skipped or copied to the storage form's
// nesting limit. Errors name the key path (schema names and indices,
// never content), prefixed by the reading package, and are marked
// ErrInvalid (a wrong kind, an explicit null) or ErrCorrupt (bytes that
// are not msgpack).
type Fields struct {
	r   *Reader
	pkg ErrPrefix
}

// ErrPrefix names the package a Fields reader's errors start with. It is a
// number, not a string, so that reporting an error never makes the
// reader's own state escape (the hot decode paths keep it on the stack).
type ErrPrefix uint8

// The packages that read fields.
const (
	PrefixCodec ErrPrefix = iota
	PrefixHeader
)

// String is the prefix itself.
func (p ErrPrefix) String() string {
	if p == PrefixHeader {
		return "header"
	}
	return "codec"
}

// NewFields returns a reader of the stored value mp whose errors start
// with pkg's name.
func NewFields(mp []byte, pkg ErrPrefix) Fields { return Fields{r: NewReader(mp), pkg: pkg} }

func (f Fields) prefix() string { return f.pkg.String() }

func (f Fields) wrongType(key string, want string, got Kind) error {
	if got == KindNull {
		return invalidf("%s: %s: explicit null", errors.Safe(f.prefix()), errors.Safe(key))
	}
	return invalidf("%s: %s: want %s, got %s", errors.Safe(f.prefix()), errors.Safe(key), errors.Safe(want), errors.Safe(got.String()))
}

// object reads a map header and calls fn for every key, leaving fn to read
// the value (fn must consume exactly one value, or call skip).
func (f Fields) Object(key string, fn func(k []byte) error) error {
	n, ok := f.r.fixHeader(0x80, 2)
	if !ok {
		t, err := f.r.Next()
		if err != nil {
			return corruptOrShort(err)
		}
		if t.Kind != KindObject {
			return f.wrongType(key, "object", t.Kind)
		}
		n = t.N
	}
	if f.r.strict {
		return f.strictObject(n, fn)
	}
	for i := 0; i < n; i++ {
		k, ok, err := f.r.key()
		if err != nil {
			return corruptOrShort(err)
		}
		if !ok {
			return corruptf("%s: %s: object key is not a string", errors.Safe(f.prefix()), errors.Safe(key))
		}
		if err := fn(k); err != nil {
			return err
		}
	}
	return nil
}

// array reads an array header and calls fn for each element index.
func (f Fields) Array(key string, fn func(i int) error) error {
	n, ok := f.r.fixHeader(0x90, 1)
	if !ok {
		t, err := f.r.Next()
		if err != nil {
			return corruptOrShort(err)
		}
		if t.Kind != KindArray {
			return f.wrongType(key, "array", t.Kind)
		}
		n = t.N
	}
	if f.r.strict {
		if f.r.depth <= 0 {
			return errStrict
		}
		f.r.depth--
	}
	for i := 0; i < n; i++ {
		if err := fn(i); err != nil {
			return err
		}
	}
	if f.r.strict {
		f.r.depth++
	}
	return nil
}

func (f Fields) Skip() error {
	if f.r.strict {
		return f.r.validate(f.r.depth)
	}
	return corruptOrShort(f.r.Skip(maxStoredDepth))
}

// raw returns the bytes of the next value, whatever its kind but null.
func (f Fields) Raw(key string) ([]byte, error) {
	start := f.r.off
	if f.r.strict {
		if err := f.r.validate(f.r.depth); err != nil {
			return nil, err
		}
	} else if err := f.r.Skip(maxStoredDepth); err != nil {
		return nil, corruptOrShort(err)
	}
	if f.r.b[start] == mpNil {
		return nil, f.wrongType(key, "a value", KindNull)
	}
	return f.r.b[start:f.r.off], nil
}

// rawObject returns the bytes of the next value, which must be an object.
func (f Fields) RawObject(key string) ([]byte, error) {
	start := f.r.off
	if f.r.off < len(f.r.b) {
		if c := f.r.b[start]; !(c&0xf0 == 0x80 || c == mpMap16 || c == mpMap32) {
			t, err := f.r.Next()
			if err != nil {
				return nil, corruptOrShort(err)
			}
			return nil, f.wrongType(key, "object", t.Kind)
		}
	}
	return f.Raw(key)
}

func (f Fields) Str(key string) (string, error) {
	if s, ok := f.r.strBytes(); ok {
		if f.r.strict && !validString(s) {
			return "", errStrict
		}
		return string(s), nil
	}
	t, err := f.r.Next()
	if err != nil {
		return "", corruptOrShort(err)
	}
	if t.Kind != KindString {
		return "", f.wrongType(key, "string", t.Kind)
	}
	if f.r.strict && !validString(t.Str) {
		return "", errStrict
	}
	return string(t.Str), nil
}

// name reads a string that is usually one of the engine's own names (an
// event, chunk or block type, a source kind): those are returned without
// allocating.
func (f Fields) Name(key string) (string, error) {
	b, ok := f.r.strBytes()
	if !ok {
		t, err := f.r.Next()
		if err != nil {
			return "", corruptOrShort(err)
		}
		if t.Kind != KindString {
			return "", f.wrongType(key, "string", t.Kind)
		}
		b = t.Str
	}
	if s, ok := interned(b); ok {
		return s, nil
	}
	if f.r.strict && !validString(b) {
		return "", errStrict
	}
	return string(b), nil
}

// interned returns the engine's own name b spells (an event, chunk or
// block type, a source kind, a reason), which name returns without
// allocating; ok is false for any other string.
func interned(b []byte) (s string, ok bool) {
	switch string(b) {
	case TypeTurnStart:
		return TypeTurnStart, true
	case TypeTurnEnd:
		return TypeTurnEnd, true
	case TypeStepStart:
		return TypeStepStart, true
	case TypeStepEnd:
		return TypeStepEnd, true
	case TypeUserMessage:
		return TypeUserMessage, true
	case TypePromptBlocked:
		return TypePromptBlocked, true
	case TypeContextMessage:
		return TypeContextMessage, true
	case TypeSteeringMessage:
		return TypeSteeringMessage, true
	case TypeAssistantChunk:
		return TypeAssistantChunk, true
	case TypeAssistantMessage:
		return TypeAssistantMessage, true
	case TypeToolCall:
		return TypeToolCall, true
	case TypeToolResult:
		return TypeToolResult, true
	case TypeRequestHeader:
		return TypeRequestHeader, true
	case TypeHeaderDelta:
		return TypeHeaderDelta, true
	case TypeRequestDigest:
		return TypeRequestDigest, true
	case TypeCompactStart:
		return TypeCompactStart, true
	case TypeCompactSummary:
		return TypeCompactSummary, true
	case TypeCompactEnd:
		return TypeCompactEnd, true
	case BlockText:
		return BlockText, true
	case BlockReasoning:
		return BlockReasoning, true
	case BlockToolCall:
		return BlockToolCall, true
	case BlockToolResult:
		return BlockToolResult, true
	case "block-start":
		return "block-start", true
	case "text-delta":
		return "text-delta", true
	case "reasoning-delta":
		return "reasoning-delta", true
	case "tool-call-delta":
		return "tool-call-delta", true
	case "block-end":
		return "block-end", true
	case "usage":
		return "usage", true
	case "finish":
		return "finish", true
	case "user":
		return "user", true
	case "plugin":
		return "plugin", true
	case "completed":
		return "completed", true
	case "aborted":
		return "aborted", true
	case "error":
		return "error", true
	case "interrupted":
		return "interrupted", true
	case "disposed":
		return "disposed", true
	}
	return "", false
}

func (f Fields) Boolean(key string) (bool, error) {
	t, err := f.r.Next()
	if err != nil {
		return false, corruptOrShort(err)
	}
	if t.Kind != KindBool {
		return false, f.wrongType(key, "boolean", t.Kind)
	}
	return t.Bool, nil
}

func (f Fields) Number(key string) (float64, error) {
	if v, ok := f.r.smallUint(); ok {
		return float64(v), nil
	}
	if b := f.r.b[f.r.off:]; len(b) >= 9 && b[0] == mpUint64 {
		// A time in milliseconds; beyond int64, Next reads it as a
		// KindFloat of the same value.
		f.r.off += 9
		return float64(binary.BigEndian.Uint64(b[1:])), nil
	}
	t, err := f.r.Next()
	if err != nil {
		return 0, corruptOrShort(err)
	}
	if t.Kind != KindInt && t.Kind != KindFloat {
		return 0, f.wrongType(key, "number", t.Kind)
	}
	return t.Number(), nil
}

// integer reads a number that must be an integer within ±2^53.
func (f Fields) Integer(key string) (int64, error) {
	if v, ok := f.r.smallUint(); ok {
		return v, nil // below 2^32
	}
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
		return 0, invalidf("%s: %s: want an integer within ±2^53", errors.Safe(f.prefix()), errors.Safe(key))
	}
	return 0, f.wrongType(key, "integer", t.Kind)
}

// count reads an integer that must be ≥ 0.
func (f Fields) Count(key string) (int64, error) {
	v, err := f.Integer(key)
	if err == nil && v < 0 {
		return 0, invalidf("%s: %s: negative", errors.Safe(f.prefix()), errors.Safe(key))
	}
	return v, err
}

// corruptOrShort marks a Reader failure (truncated or malformed msgpack)
// as corruption; errors already classified pass through.
func corruptOrShort(err error) error {
	if err == nil || errors.Is(err, ErrInvalid) || errors.Is(err, ErrCorrupt) {
		return err
	}
	return errclass.Mark(err, ErrCorrupt)
}
