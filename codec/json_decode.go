package codec

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// ErrSyntax marks text that is not JSON: a grammar error, invalid UTF-8, or
// a raw control character in a string. The importer reclassifies it as
// corruption or as a torn tail by its position (docs/format.md#torn-tails).
var ErrSyntax = errors.New("codec: malformed JSON")

// Limits bounds what the JSON decoder accepts (docs/format.md#json-text). The zero value
// means the defaults.
type Limits struct {
	// MaxDepth is the deepest nesting of arrays and objects; 0 means 512,
	// and it is at most 1023 (the depth stored records are read back with).
	MaxDepth int
	// MaxLine is the longest line in bytes, newline excluded; 0 means 64 MiB.
	MaxLine int
}

const (
	defaultMaxDepth = 512
	defaultMaxLine  = 64 << 20
)

// depth is the nesting limit: MaxDepth, at most maxStoredDepth-1 so that
// every value FromJSON accepts can be read back and exported.
func (l Limits) depth() int {
	if l.MaxDepth > 0 {
		return min(l.MaxDepth, maxStoredDepth-1)
	}
	return defaultMaxDepth
}

func (l Limits) line() int {
	if l.MaxLine > 0 {
		return l.MaxLine
	}
	return defaultMaxLine
}

// FromJSON converts one JSON text into its storage form: the
// order-preserving msgpack image of the value (docs/format.md#carried-values), appended to dst.
// It is strict: one value, optional surrounding whitespace, no duplicate
// keys, valid UTF-8, nesting and size within lim. A \udxxx escape that is
// not half of a pair is kept as that code unit (WTF-8), never replaced.
// Errors carry the byte offset and are marked ErrSyntax or ErrInvalid.
func FromJSON(dst, text []byte, lim Limits) ([]byte, error) {
	if len(text) > lim.line() {
		return dst, invalidf("codec: JSON text of %d bytes exceeds the %d byte limit",
			errors.Safe(len(text)), errors.Safe(lim.line()))
	}
	p := parser{in: text, maxDepth: lim.depth(), out: dst}
	if err := p.top(); err != nil {
		return dst, err
	}
	if p.invalid != nil {
		return dst, p.invalid
	}
	return p.out, nil
}

// parser reads the text once, writing msgpack as it goes. A container's
// count is known only at its end: its header is written as one byte, the
// fixmap or fixarray form nearly every one has, and widened in place
// when the count needs more.
type parser struct {
	in       []byte
	pos      int
	depth    int
	maxDepth int
	out      []byte
	// invalid is the first error of well-formed JSON that is not
	// accepted (a duplicate key, a number out of range): a grammar error
	// later in the text is reported before it, so the parse goes on.
	invalid error
}

func (p *parser) syntaxf(format string, args ...interface{}) error {
	err := errors.NewWithDepthf(1, format, args...)
	return errclass.Mark(errors.Wrapf(err, "codec: byte %d", errors.Safe(p.pos)), ErrSyntax)
}

func (p *parser) top() error {
	p.skipSpace()
	if err := p.value(); err != nil {
		return err
	}
	p.skipSpace()
	if p.pos != len(p.in) {
		return p.syntaxf("unexpected text after the JSON value")
	}
	return nil
}

func (p *parser) skipSpace() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() error {
	if p.pos >= len(p.in) {
		return p.syntaxf("unexpected end of JSON")
	}
	switch c := p.in[p.pos]; {
	case c == '{':
		return p.container('}', true)
	case c == '[':
		return p.container(']', false)
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.literal("true", func() { p.out = AppendBool(p.out, true) })
	case c == 'f':
		return p.literal("false", func() { p.out = AppendBool(p.out, false) })
	case c == 'n':
		return p.literal("null", func() { p.out = AppendNil(p.out) })
	default:
		return p.syntaxf("unexpected character") // the byte is content: never in an error
	}
}

func (p *parser) literal(word string, emit func()) error {
	if len(p.in)-p.pos < len(word) || string(p.in[p.pos:p.pos+len(word)]) != word {
		return p.syntaxf("invalid literal")
	}
	p.pos += len(word)
	emit()
	return nil
}

// container parses an object (obj) or an array.
func (p *parser) container(closer byte, obj bool) error {
	p.depth++
	if p.depth > p.maxDepth {
		return errclass.Mark(errors.Newf("codec: byte %d: nesting deeper than %d",
			errors.Safe(p.pos), errors.Safe(p.maxDepth)), ErrInvalid)
	}
	p.pos++
	at := len(p.out)
	p.out = append(p.out, 0) // the header, written at the end
	var keys keySet
	n := 0
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == closer {
		p.pos++
		p.depth--
		p.header(at, 0, obj)
		return nil
	}
	for {
		p.skipSpace()
		if obj {
			if err := p.key(&keys); err != nil {
				return err
			}
		}
		if err := p.value(); err != nil {
			return err
		}
		n++
		p.skipSpace()
		if p.pos >= len(p.in) {
			return p.syntaxf("unexpected end of JSON")
		}
		c := p.in[p.pos]
		p.pos++
		if c == closer {
			break
		}
		if c != ',' {
			return p.syntaxf("expected ',' or %q", errors.Safe(rune(closer)))
		}
	}
	p.header(at, n, obj)
	p.depth--
	return nil
}

// header writes the header of the container of n members whose one-byte
// placeholder is at out[at], moving the members up when it needs more.
func (p *parser) header(at, n int, obj bool) {
	var buf [5]byte
	h := buf[:0]
	if obj {
		h = AppendMapHeader(h, n)
	} else {
		h = AppendArrayHeader(h, n)
	}
	if extra := len(h) - 1; extra > 0 {
		p.out = append(p.out, h[:extra]...) // room; overwritten below
		copy(p.out[at+len(h):], p.out[at+1:len(p.out)-extra])
	}
	copy(p.out[at:], h)
}

func (p *parser) key(keys *keySet) error {
	if p.pos >= len(p.in) || p.in[p.pos] != '"' {
		return p.syntaxf("expected an object key")
	}
	start := len(p.out)
	keyPos := p.pos
	if err := p.str(); err != nil {
		return err
	}
	if !keys.add(p.out, start, len(p.out)) && p.invalid == nil {
		p.invalid = errclass.Mark(errors.Newf("codec: byte %d: duplicate object key",
			errors.Safe(keyPos)), ErrInvalid)
	}
	p.skipSpace()
	if p.pos >= len(p.in) || p.in[p.pos] != ':' {
		return p.syntaxf("expected ':'")
	}
	p.pos++
	p.skipSpace()
	return nil
}

// keySet remembers the keys of one object as ranges of a buffer. The first
// few live in an inline array, so small objects (nearly all) cost no
// allocation; larger ones switch to a map.
type keySet struct {
	small [32][2]int
	n     int
	big   map[string]struct{}
}

func (k *keySet) add(out []byte, start, end int) bool {
	key := out[start:end]
	if k.big != nil {
		if _, dup := k.big[string(key)]; dup {
			return false
		}
		k.big[string(key)] = struct{}{}
		return true
	}
	for _, s := range k.small[:k.n] {
		if string(out[s[0]:s[1]]) == string(key) {
			return false
		}
	}
	if k.n < len(k.small) {
		k.small[k.n] = [2]int{start, end}
		k.n++
		return true
	}
	k.big = make(map[string]struct{}, 2*len(k.small))
	for _, s := range k.small {
		k.big[string(out[s[0]:s[1]])] = struct{}{}
	}
	k.big[string(key)] = struct{}{}
	return true
}

// str parses a string and appends it as a msgpack string: checked and
// measured first (checkStr), then copied, or decoded when it holds escapes.
func (p *parser) str() error {
	p.pos++ // opening quote
	start := p.pos
	n, err := p.checkStr()
	if err != nil {
		return err
	}
	end := p.pos - 1 // the closing quote
	p.out = AppendStringHeader(p.out, n)
	// Grown once: appended piece by piece between escapes, a long string
	// would grow the output a quarter at a time, leaving garbage several
	// times its size.
	p.out = slices.Grow(p.out, n)
	if n == end-start { // no escapes: every escape is longer than what it stands for
		p.out = append(p.out, p.in[start:end]...)
		return nil
	}
	after := p.pos
	for {
		b := bytes.IndexByte(p.in[start:end], '\\')
		if b < 0 {
			p.out = append(p.out, p.in[start:end]...)
			p.pos = after
			return nil
		}
		p.out = append(p.out, p.in[start:start+b]...)
		p.pos = start + b
		p.out, _ = p.escape(p.out) // checkStr checked it
		start = p.pos
	}
}

// Masks for testing the eight bytes of a word at once.
const (
	ones   = 0x0101010101010101
	highs  = 0x8080808080808080
	quotes = '"' * ones
	slashs = '\\' * ones
	spaces = 0x20 * ones
)

// plain8 reports whether none of the eight bytes of w is a quote, a
// backslash, a control character or a non-ASCII byte. It may report false
// for a plain word (a borrow past a match), never true for another.
func plain8(w uint64) bool {
	return (zero8(w^quotes) | zero8(w^slashs) | ((w - spaces) &^ w & highs) | w&highs) == 0
}

// zero8 has the high bit of a byte set where a byte of x is zero (and
// maybe above one: a borrow).
func zero8(x uint64) uint64 { return (x - ones) &^ x & highs }

// checkStr validates the string at p.pos (after the opening quote) and
// moves past its closing quote; it returns the string's decoded length.
func (p *parser) checkStr() (int, error) {
	in := p.in
	begin, i := p.pos, p.pos
	n := 0 // bytes the escapes before i decode to, minus their length
	var tmp [4]byte
	for {
		for i+8 <= len(in) && plain8(binary.LittleEndian.Uint64(in[i:])) {
			i += 8
		}
		if i >= len(in) {
			p.pos = i
			return 0, p.syntaxf("unterminated string")
		}
		switch c := in[i]; {
		case c == '"':
			p.pos = i + 1
			return i - begin + n, nil
		case c == '\\':
			p.pos = i
			d, err := p.escape(tmp[:0])
			if err != nil {
				return 0, err
			}
			n += len(d) - (p.pos - i)
			i = p.pos
		case c < 0x20:
			p.pos = i
			return 0, p.syntaxf("control character in string")
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && size == 1 {
				p.pos = i
				return 0, p.syntaxf("invalid UTF-8")
			}
			i += size
		}
	}
}

// escape decodes the escape at p.pos (a backslash) onto buf.
func (p *parser) escape(buf []byte) ([]byte, error) {
	if p.pos+1 >= len(p.in) {
		return buf, p.syntaxf("unterminated escape")
	}
	c := p.in[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		return append(buf, c), nil
	case 'b':
		return append(buf, '\b'), nil
	case 'f':
		return append(buf, '\f'), nil
	case 'n':
		return append(buf, '\n'), nil
	case 'r':
		return append(buf, '\r'), nil
	case 't':
		return append(buf, '\t'), nil
	case 'u':
	default:
		return buf, p.syntaxf("invalid escape")
	}
	u, ok := p.hex4()
	if !ok {
		return buf, p.syntaxf("invalid \\u escape")
	}
	if u >= 0xd800 && u < 0xdc00 && p.pos+1 < len(p.in) && p.in[p.pos] == '\\' && p.in[p.pos+1] == 'u' {
		save := p.pos
		p.pos += 2
		if lo, ok := p.hex4(); ok && lo >= 0xdc00 && lo < 0xe000 {
			return utf8.AppendRune(buf, 0x10000+(u-0xd800)<<10+(lo-0xdc00)), nil
		}
		p.pos = save
	}
	return appendWTF8(buf, u), nil
}

func (p *parser) hex4() (rune, bool) {
	if len(p.in)-p.pos < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p.in[p.pos : p.pos+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.pos += 4
	return r, true
}

// appendWTF8 appends r, which may be a lone surrogate, in the generalized
// UTF-8 encoding (three bytes for U+D800–U+DFFF).
func appendWTF8(buf []byte, r rune) []byte {
	if r >= 0xd800 && r < 0xe000 {
		return append(buf, 0xed, byte(0x80|(r>>6)&0x3f), byte(0x80|r&0x3f))
	}
	return utf8.AppendRune(buf, r)
}

// number parses a JSON number. Integers beyond ±2^53 round to the nearest
// float64, as JSON.parse does (docs/format.md#json-text).
func (p *parser) number() error {
	start := p.pos
	if p.in[p.pos] == '-' {
		p.pos++
	}
	if p.pos >= len(p.in) {
		return p.syntaxf("invalid number")
	}
	if p.in[p.pos] == '0' {
		p.pos++
	} else if !p.digits() {
		return p.syntaxf("invalid number")
	}
	integer := true
	if p.pos < len(p.in) && p.in[p.pos] == '.' {
		p.pos++
		integer = false
		if !p.digits() {
			return p.syntaxf("invalid number")
		}
	}
	if p.pos < len(p.in) && (p.in[p.pos] == 'e' || p.in[p.pos] == 'E') {
		p.pos++
		integer = false
		if p.pos < len(p.in) && (p.in[p.pos] == '+' || p.in[p.pos] == '-') {
			p.pos++
		}
		if !p.digits() {
			return p.syntaxf("invalid number")
		}
	}
	text := p.in[start:p.pos]
	if integer && len(text) <= 15 { // ≤15 digits: exact in an int64
		var v int64
		for _, c := range text {
			if c != '-' {
				v = v*10 + int64(c-'0')
			}
		}
		if text[0] == '-' {
			v = -v
		}
		p.out = AppendInt(p.out, v)
		return nil
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil || math.IsInf(f, 0) {
		if p.invalid == nil {
			p.invalid = errclass.Mark(errors.Newf("codec: byte %d: number out of the float64 range",
				errors.Safe(start)), ErrInvalid)
		}
		f = 0 // the result is not returned
	}
	p.out = AppendNumber(p.out, f)
	return nil
}

func (p *parser) digits() bool {
	start := p.pos
	for p.pos < len(p.in) && p.in[p.pos] >= '0' && p.in[p.pos] <= '9' {
		p.pos++
	}
	return p.pos > start
}
