package codec

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// MaxStoredDepth bounds recursion over stored values, for every reader of
// the storage form. JSON input is limited to 512 levels by default
// (Limits) and to MaxStoredDepth-1 at most; a record may be one level
// deeper (the event envelope around data); anything deeper did not come
// from us.
const MaxStoredDepth = 1024

const maxStoredDepth = MaxStoredDepth

// ToJSON appends the JSON text of one stored value (a msgpack image written
// by FromJSON or the Append functions) to dst, following ECMAScript
// JSON.stringify exactly (docs/format.md#json-text): no whitespace, keys in stored order,
// minimal string escapes, numbers as Number::toString prints them. It
// consumes exactly one value from mp and returns the number of bytes read.
func ToJSON(dst, mp []byte) ([]byte, int, error) {
	r := Reader{b: mp}
	out, err := r.appendJSON(dst, maxStoredDepth)
	if err != nil {
		return dst, r.off, errclass.Mark(errors.Wrapf(err, "codec: transcode at byte %d", errors.Safe(r.off)), ErrCorrupt)
	}
	return out, r.off, nil
}

// JSONOrNil returns the JSON text of mp, which must be exactly one
// well-formed stored value; it returns nil otherwise (malformed, truncated
// or followed by more bytes), never an error and never a panic. For values
// the caller built itself, where nil is a bug the caller checks for.
// (It was MustJSON, a name that promised a panic it never made.)
func JSONOrNil(mp []byte) []byte {
	out, n, err := ToJSON(nil, mp)
	if err != nil || n != len(mp) {
		return nil
	}
	return out
}

// AppendJSON reads one value from r and appends its JSON text to dst.
func (r *Reader) AppendJSON(dst []byte) ([]byte, error) {
	return r.appendJSON(dst, maxStoredDepth)
}

func (r *Reader) appendJSON(dst []byte, depth int) ([]byte, error) {
	t, err := r.Next()
	if err != nil {
		return dst, err
	}
	switch t.Kind {
	case KindNull:
		return append(dst, "null"...), nil
	case KindBool:
		if t.Bool {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case KindInt:
		return AppendJSONInt(dst, t.Int), nil
	case KindFloat:
		return AppendJSONNumber(dst, t.Float), nil
	case KindString:
		return AppendJSONString(dst, t.Str), nil
	}
	if depth <= 0 {
		return dst, errors.New("codec: nesting too deep")
	}
	if t.Kind == KindArray {
		dst = append(dst, '[')
		for i := 0; i < t.N; i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = r.appendJSON(dst, depth-1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	}
	dst = append(dst, '{')
	for i := 0; i < t.N; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		k, err := r.Next()
		if err != nil {
			return dst, err
		}
		if k.Kind != KindString {
			return dst, errors.Newf("codec: object key is a %s", errors.Safe(k.Kind.String()))
		}
		dst = append(AppendJSONString(dst, k.Str), ':')
		if dst, err = r.appendJSON(dst, depth-1); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// AppendJSONInt appends an integer as JSON.stringify prints the double
// nearest to it.
func AppendJSONInt(dst []byte, v int64) []byte {
	if v >= -(1<<53) && v <= 1<<53 {
		return strconv.AppendInt(dst, v, 10)
	}
	return AppendJSONNumber(dst, float64(v))
}

// AppendJSONNumber appends f as ECMAScript's Number::toString prints it:
// shortest round-trip digits, plain notation for 1e-7 < |f| < 1e21,
// otherwise an exponent with an explicit sign (1e+21, 1e-7). -0 prints as 0.
// f must be finite.
func AppendJSONNumber(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0')
	}
	abs := math.Abs(f)
	if abs < 1e21 && abs >= 1e-6 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
	// Go writes e-07 / e+21; ECMAScript writes e-7 / e+21.
	n := len(dst)
	if n-start >= 4 && dst[n-4] == 'e' && dst[n-2] == '0' {
		dst[n-2] = dst[n-1]
		dst = dst[:n-1]
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s as a JSON string the way JSON.stringify writes
// it: only '"', '\\', U+0000–U+001F and lone surrogates are escaped; '<',
// '>', '&', U+2028 and U+2029 are written as they are. s is UTF-8, or WTF-8
// where it holds lone surrogates (written as \udxxx).
func AppendJSONString(dst []byte, s []byte) []byte {
	// Grown once for the usual case (few escapes): appended piece by
	// piece, a long string would grow dst a quarter at a time, leaving
	// garbage several times its size.
	dst = slices.Grow(dst, len(s)+2)
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			if c == 0xed && i+2 < len(s) && s[i+1] >= 0xa0 {
				r := rune(c&0x0f)<<12 | rune(s[i+1]&0x3f)<<6 | rune(s[i+2]&0x3f)
				dst = append(dst, s[start:i]...)
				dst = append(dst, '\\', 'u', hexDigits[r>>12], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
				i += 3
				start = i
				continue
			}
			_, size := utf8.DecodeRune(s[i:])
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// validWTF8 reports whether s is UTF-8 in which, additionally, surrogate
// code points may appear alone (never as a high-low pair, which UTF-8
// spells as one four-byte sequence).
func validWTF8(s []byte) bool {
	if utf8.Valid(s) {
		return true // the usual case, on the standard library's fast path
	}
	prevHigh := false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			prevHigh = false
			continue
		}
		if c == 0xed && i+2 < len(s) && s[i+1] >= 0xa0 && s[i+1] <= 0xbf && s[i+2]&0xc0 == 0x80 {
			high := s[i+1] < 0xb0
			if !high && prevHigh {
				return false
			}
			prevHigh = high
			i += 3
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			return false
		}
		prevHigh = false
		i += size
	}
	return true
}
