package codec

import (
	"encoding/binary"
	"math"

	"github.com/cockroachdb/errors"
)

// msgpack format bytes used by the storage form. Part of the on-disk format:
// frozen (they are msgpack's own, https://github.com/msgpack/msgpack/blob/master/spec.md).
const (
	mpNil     = 0xc0
	mpFalse   = 0xc2
	mpTrue    = 0xc3
	mpFloat32 = 0xca
	mpFloat64 = 0xcb
	mpUint8   = 0xcc
	mpUint16  = 0xcd
	mpUint32  = 0xce
	mpUint64  = 0xcf
	mpInt8    = 0xd0
	mpInt16   = 0xd1
	mpInt32   = 0xd2
	mpInt64   = 0xd3
	mpStr8    = 0xd9
	mpStr16   = 0xda
	mpStr32   = 0xdb
	mpArray16 = 0xdc
	mpArray32 = 0xdd
	mpMap16   = 0xde
	mpMap32   = 0xdf
)

// AppendNil appends the msgpack nil (JSON null).
func AppendNil(dst []byte) []byte { return append(dst, mpNil) }

// AppendBool appends a msgpack boolean.
func AppendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, mpTrue)
	}
	return append(dst, mpFalse)
}

// AppendInt appends v in the shortest msgpack integer form, the same bytes
// github.com/vmihailenco/msgpack/v5 writes for it.
func AppendInt(dst []byte, v int64) []byte {
	switch {
	case v >= 0 && v <= 0x7f:
		return append(dst, byte(v))
	case v >= 0 && v <= math.MaxUint8:
		return append(dst, mpUint8, byte(v))
	case v >= 0 && v <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, mpUint16), uint16(v))
	case v >= 0 && v <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(dst, mpUint32), uint32(v))
	case v >= 0:
		return binary.BigEndian.AppendUint64(append(dst, mpUint64), uint64(v))
	case v >= -32:
		return append(dst, byte(v))
	case v >= math.MinInt8:
		return append(dst, mpInt8, byte(v))
	case v >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(dst, mpInt16), uint16(v))
	case v >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(dst, mpInt32), uint32(v))
	default:
		return binary.BigEndian.AppendUint64(append(dst, mpInt64), uint64(v))
	}
}

// AppendFloat appends v as a msgpack float64.
func AppendFloat(dst []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, mpFloat64), math.Float64bits(v))
}

// AppendNumber appends a JSON number the way the storage form keeps it
// (docs/format.md#carried-values): a value JSON.stringify prints as an integer and that fits an
// int64 is stored as an integer (so -0 becomes 0), anything else as float64.
func AppendNumber(dst []byte, v float64) []byte {
	if v == math.Trunc(v) && v >= -(1<<63) && v < 1<<63 {
		return AppendInt(dst, int64(v))
	}
	return AppendFloat(dst, v)
}

// AppendStringHeader appends the msgpack header of a string of n bytes.
func AppendStringHeader(dst []byte, n int) []byte {
	switch {
	case n < 32:
		return append(dst, 0xa0|byte(n))
	case n <= math.MaxUint8:
		return append(dst, mpStr8, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, mpStr16), uint16(n))
	default:
		return binary.BigEndian.AppendUint32(append(dst, mpStr32), uint32(n))
	}
}

// AppendString appends s as a msgpack string. s must be UTF-8 (or WTF-8:
// lone surrogates are how the storage form keeps JSON's \udxxx escapes).
func AppendString(dst []byte, s string) []byte {
	return append(AppendStringHeader(dst, len(s)), s...)
}

// AppendArrayHeader appends the msgpack header of an array of n elements.
func AppendArrayHeader(dst []byte, n int) []byte {
	switch {
	case n < 16:
		return append(dst, 0x90|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, mpArray16), uint16(n))
	default:
		return binary.BigEndian.AppendUint32(append(dst, mpArray32), uint32(n))
	}
}

// AppendMapHeader appends the msgpack header of a map of n pairs.
func AppendMapHeader(dst []byte, n int) []byte {
	switch {
	case n < 16:
		return append(dst, 0x80|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, mpMap16), uint16(n))
	default:
		return binary.BigEndian.AppendUint32(append(dst, mpMap32), uint32(n))
	}
}

// Kind is the JSON kind of a stored value.
type Kind uint8

const (
	// KindInvalid is the zero Kind; no value has it.
	KindInvalid Kind = iota
	// KindNull is JSON null.
	KindNull
	// KindBool is true or false.
	KindBool
	// KindInt is a number stored as an integer.
	KindInt
	// KindFloat is a number stored as a float64.
	KindFloat
	// KindString is a string.
	KindString
	// KindArray is an array; Token.N is its length.
	KindArray
	// KindObject is an object; Token.N is its number of pairs.
	KindObject
)

// String returns the JSON name of k, for error messages.
func (k Kind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindBool:
		return "boolean"
	case KindInt, KindFloat:
		return "number"
	case KindString:
		return "string"
	case KindArray:
		return "array"
	case KindObject:
		return "object"
	}
	return "invalid"
}

// Token is one msgpack item: a scalar, or the header of an array or map.
type Token struct {
	Kind Kind
	Bool bool
	Int  int64
	// Float holds a KindFloat value; integers beyond int64 are KindFloat.
	Float float64
	// Str aliases the reader's buffer.
	Str []byte
	// N is the element count of an array or the pair count of a map.
	N int
}

// Number returns the token's value as a float64 (KindInt or KindFloat).
func (t Token) Number() float64 {
	if t.Kind == KindInt {
		return float64(t.Int)
	}
	return t.Float
}

// Reader reads msgpack items from a byte slice. It never panics and never
// allocates in proportion to a declared length: every length is checked
// against the bytes that remain. The zero Reader reads nothing.
type Reader struct {
	b   []byte
	off int
	// strict makes the Fields reading from r check everything
	// ValidateValue checks, as they read (DecodeStoredEvent); depth is
	// then the nesting still allowed at r's position.
	strict bool
	depth  int
}

// NewReader returns a Reader over b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Offset is the number of bytes consumed so far.
func (r *Reader) Offset() int { return r.off }

// Len is the number of bytes not yet consumed.
func (r *Reader) Len() int { return len(r.b) - r.off }

var errShort = errors.New("codec: msgpack value truncated")

func (r *Reader) take(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.off {
		return nil, errShort
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s, nil
}

func (r *Reader) uint(n int) (uint64, error) {
	s, err := r.take(n)
	if err != nil {
		return 0, err
	}
	var v uint64
	for _, c := range s {
		v = v<<8 | uint64(c)
	}
	return v, nil
}

// Next reads one item. For arrays and maps it reads only the header; the
// caller reads the N elements (2N items for a map) that follow. Counts are
// checked against the remaining bytes (every item takes at least one).
// Extension, binary and float32 types are refused: the storage form never
// writes them.
func (r *Reader) Next() (Token, error) {
	if r.off >= len(r.b) {
		return Token{}, errShort
	}
	c := r.b[r.off]
	r.off++
	switch {
	case c <= 0x7f:
		return Token{Kind: KindInt, Int: int64(c)}, nil
	case c >= 0xe0:
		return Token{Kind: KindInt, Int: int64(int8(c))}, nil
	case c&0xe0 == 0xa0:
		return r.str(int(c & 0x1f))
	case c&0xf0 == 0x90:
		return r.container(KindArray, int(c&0x0f), 1)
	case c&0xf0 == 0x80:
		return r.container(KindObject, int(c&0x0f), 2)
	}
	switch c {
	case mpNil:
		return Token{Kind: KindNull}, nil
	case mpFalse:
		return Token{Kind: KindBool}, nil
	case mpTrue:
		return Token{Kind: KindBool, Bool: true}, nil
	case mpFloat64:
		v, err := r.uint(8)
		f := math.Float64frombits(v)
		if err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return Token{}, errors.New("codec: non-finite float")
		}
		return Token{Kind: KindFloat, Float: f}, err
	case mpUint8, mpUint16, mpUint32, mpUint64:
		v, err := r.uint(1 << (c - mpUint8))
		if v > math.MaxInt64 {
			return Token{Kind: KindFloat, Float: float64(v)}, err
		}
		return Token{Kind: KindInt, Int: int64(v)}, err
	case mpInt8, mpInt16, mpInt32, mpInt64:
		n := 1 << (c - mpInt8)
		v, err := r.uint(n)
		shift := 64 - 8*n
		return Token{Kind: KindInt, Int: int64(v<<shift) >> shift}, err
	case mpStr8, mpStr16, mpStr32:
		n, err := r.uint(1 << (c - mpStr8))
		if err != nil {
			return Token{}, err
		}
		return r.str(int(min(n, math.MaxInt32)))
	case mpArray16, mpArray32:
		n, err := r.uint(2 << (c - mpArray16))
		if err != nil {
			return Token{}, err
		}
		return r.container(KindArray, int(min(n, math.MaxInt32)), 1)
	case mpMap16, mpMap32:
		n, err := r.uint(2 << (c - mpMap16))
		if err != nil {
			return Token{}, err
		}
		return r.container(KindObject, int(min(n, math.MaxInt32)), 2)
	}
	return Token{}, errors.Newf("codec: msgpack type 0x%02x not allowed", errors.Safe(c))
}

func (r *Reader) str(n int) (Token, error) {
	s, err := r.take(n)
	return Token{Kind: KindString, Str: s}, err
}

func (r *Reader) container(k Kind, n, per int) (Token, error) {
	if n > (len(r.b)-r.off)/per {
		return Token{}, errShort
	}
	return Token{Kind: k, N: n}, nil
}

// Skip reads and discards one whole value, at most depth levels deep.
func (r *Reader) Skip(depth int) error {
	// The kinds of nearly every item, skipped without making a Token;
	// the rest, and every error, go through Next.
	if r.off < len(r.b) {
		switch c := r.b[r.off]; {
		case c <= 0x7f || c >= 0xe0 || c == mpNil || c == mpFalse || c == mpTrue:
			r.off++
			return nil
		case c&0xe0 == 0xa0:
			if n := int(c & 0x1f); n < len(r.b)-r.off {
				r.off += 1 + n
				return nil
			}
		case c == mpStr8:
			if r.off+1 < len(r.b) {
				if n := int(r.b[r.off+1]); n <= len(r.b)-r.off-2 {
					r.off += 2 + n
					return nil
				}
			}
		case c&0xe0 == 0x80: // fixmap 0x80-0x8f, fixarray 0x90-0x9f
			r.off++
			t, err := r.container(KindArray, int(c&0x0f), 1)
			if c < 0x90 {
				t, err = r.container(KindObject, int(c&0x0f), 2)
			}
			if err != nil {
				return err
			}
			return r.skipRest(t, depth)
		}
	}
	t, err := r.Next()
	if err != nil {
		return err
	}
	return r.skipRest(t, depth)
}

func (r *Reader) skipRest(t Token, depth int) error {
	n := t.N
	switch t.Kind {
	case KindArray:
	case KindObject:
		n *= 2
	default:
		return nil
	}
	if depth <= 0 {
		return errors.New("codec: nesting too deep")
	}
	for i := 0; i < n; i++ {
		if err := r.Skip(depth - 1); err != nil {
			return err
		}
	}
	return nil
}

// Value reads one whole value and returns its bytes (aliasing the buffer).
func (r *Reader) Value(depth int) ([]byte, error) {
	start := r.off
	if err := r.Skip(depth); err != nil {
		return nil, err
	}
	return r.b[start:r.off], nil
}

// Key reads an object member's key: ok is false when the item read is not
// a string. It is Next for a key, without making a Token.
func (r *Reader) Key() (key []byte, ok bool, err error) { return r.key() }

// key reads a map key, which must be a string; fixstr, the form nearly
// every key has, is read without the general switch.
func (r *Reader) key() ([]byte, bool, error) {
	if r.off < len(r.b) {
		if c := r.b[r.off]; c&0xe0 == 0xa0 {
			n := int(c & 0x1f)
			if n <= len(r.b)-r.off-1 {
				s := r.b[r.off+1 : r.off+1+n]
				r.off += 1 + n
				return s, true, nil
			}
		}
	}
	t, err := r.Next()
	if err != nil {
		return nil, false, err
	}
	return t.Str, t.Kind == KindString, nil
}

// fixHeader reads a fixmap (base 0x80, per 2) or fixarray (base 0x90,
// per 1) header, the form nearly every container has, without making a
// Token; ok is false, and nothing is read, for any other item and for a
// count the remaining bytes cannot hold (Next then says why).
func (r *Reader) fixHeader(base byte, per int) (n int, ok bool) {
	if r.off < len(r.b) {
		if c := r.b[r.off]; c&0xf0 == base {
			n := int(c & 0x0f)
			if n <= (len(r.b)-r.off-1)/per {
				r.off++
				return n, true
			}
		}
	}
	return 0, false
}

// smallUint reads a non-negative integer of at most 32 bits (positive
// fixint, uint8, uint16 or uint32), the form nearly every seq, turn and
// count has, without making a Token; ok is false, and nothing is read,
// for any other item.
func (r *Reader) smallUint() (v int64, ok bool) {
	b := r.b[r.off:]
	if len(b) == 0 {
		return 0, false
	}
	switch c := b[0]; {
	case c <= 0x7f:
		r.off++
		return int64(c), true
	case c == mpUint8 && len(b) >= 2:
		r.off += 2
		return int64(b[1]), true
	case c == mpUint16 && len(b) >= 3:
		r.off += 3
		return int64(binary.BigEndian.Uint16(b[1:])), true
	case c == mpUint32 && len(b) >= 5:
		r.off += 5
		return int64(binary.BigEndian.Uint32(b[1:])), true
	}
	return 0, false
}

// strBytes reads a string item (any width) without making a Token; ok
// is false, and nothing is read, for any other item or a truncated one.
func (r *Reader) strBytes() (s []byte, ok bool) {
	b := r.b[r.off:]
	if len(b) == 0 {
		return nil, false
	}
	var n, h int
	switch c := b[0]; {
	case c&0xe0 == 0xa0:
		n, h = int(c&0x1f), 1
	case c == mpStr8 && len(b) >= 2:
		n, h = int(b[1]), 2
	case c == mpStr16 && len(b) >= 3:
		n, h = int(binary.BigEndian.Uint16(b[1:])), 3
	default:
		return nil, false
	}
	if n > len(b)-h {
		return nil, false
	}
	r.off += h + n
	return b[h : h+n], true
}

// arrayLen returns the element count an array header at r's position
// declares, bounded by the bytes that follow it (every element takes at
// least one); 0 when no whole array header is there. It reads nothing.
func arrayLen(r *Reader) int {
	b := r.b[r.off:]
	var n int
	switch {
	case len(b) == 0:
		return 0
	case b[0]&0xf0 == 0x90:
		n, b = int(b[0]&0x0f), b[1:]
	case b[0] == mpArray16 && len(b) >= 3:
		n, b = int(binary.BigEndian.Uint16(b[1:])), b[3:]
	case b[0] == mpArray32 && len(b) >= 5:
		n, b = int(binary.BigEndian.Uint32(b[1:])), b[5:]
	default:
		return 0
	}
	return min(n, len(b))
}

// peek returns the next format byte without consuming it (0 at the end,
// which is a positive fixint and never a container or boolean).
func (r *Reader) peek() byte {
	if r.off < len(r.b) {
		return r.b[r.off]
	}
	return 0
}
