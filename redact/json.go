package redact

import (
	"bytes"
	"unicode/utf8"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
)

// JSON redacts the string values of the JSON text doc and returns the
// text and the number of spans replaced; doc itself when none. Every
// byte outside the redacted spans is kept as it was: whitespace, number
// spellings, and the escapes of the rest of a string that changes; a
// span is replaced by Marker in the text, covering the whole escapes of
// the characters it covers. Matching sees each string as decoded
// (escapes resolved), the same string Value sees in doc's storage form.
// doc must be one JSON text as codec.FromJSON accepts it (its error,
// marked codec.ErrSyntax or codec.ErrInvalid, otherwise), but a text in
// which none of the matchers' anchors appears, and no \u escape of a
// letter, digit, '-', '_' or space could hide one, is returned unread:
// there is nothing to redact in it.
func (r *Redactor) JSON(doc []byte) ([]byte, int, error) {
	if r.blind(doc) && !hidesASCII(doc) {
		return doc, 0, nil
	}
	mp, err := codec.FromJSON(nil, doc, codec.Limits{MaxLine: max(len(doc), 1)})
	if err != nil {
		return nil, 0, errors.Wrap(err, "redact: JSON")
	}
	w := walker{r: r, in: mp, rd: codec.NewReader(mp), collect: true}
	if err := w.value(codec.MaxStoredDepth, false); err != nil {
		return nil, 0, err
	}
	if len(w.found) == 0 {
		return doc, 0, nil
	}
	out := make([]byte, 0, len(doc)+len(Marker)*w.n)
	copied := 0
	next := 0 // index in w.found
	stringValues(doc, func(ord, start, end int) bool {
		f := w.found[next]
		if ord != f.ord {
			return true
		}
		forRaw(doc[start:end], f.spans, func(a, b int) {
			out = append(out, doc[copied:start+a]...)
			out = append(out, Marker...)
			copied = start + b
		})
		next++
		return next < len(w.found)
	})
	return append(out, doc[copied:]...), w.n, nil
}

// hidesASCII reports whether doc holds a \u escape of a letter, a digit,
// '-', '_' or a space, which could spell an anchor that its text does
// not show (encoders escape no such character; Go's escapes <, > and &).
func hidesASCII(doc []byte) bool {
	for i := 0; ; {
		j := bytes.Index(doc[i:], []byte(`\u00`))
		if j < 0 {
			return false
		}
		i += j + 4
		if i+2 > len(doc) {
			return false
		}
		switch c := hex4([]byte{'0', '0', doc[i], doc[i+1]}); {
		case c >= '0' && c <= '9', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c == '-', c == '_', c == ' ':
			// An escaped backslash before it ("\\u0041") is text, not
			// an escape; taking it for one only costs the parse.
			return true
		}
	}
}

// stringValues calls fn with the ordinal and the bounds (between the
// quotes) of every string value of the JSON text doc, in order, object
// keys excepted, until fn returns false. doc is known to be valid.
func stringValues(doc []byte, fn func(ord, start, end int) bool) {
	var stack []bool // true: an object
	key := false     // the next string is an object key
	ord := 0
	for i := 0; i < len(doc); {
		switch doc[i] {
		case '"':
			end := stringEnd(doc, i+1)
			if !key {
				if !fn(ord, i+1, end) {
					return
				}
				ord++
			}
			key = false
			i = end + 1
			continue
		case '{':
			stack = append(stack, true)
			key = true
		case '[':
			stack = append(stack, false)
			key = false
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			key = stack[len(stack)-1]
		case ':':
			key = false
		}
		i++
	}
}

// stringEnd returns the index of the quote that closes the string whose
// content begins at i.
func stringEnd(doc []byte, i int) int {
	for {
		q := bytes.IndexByte(doc[i:], '"')
		if q < 0 {
			return len(doc) // not reached: doc is valid
		}
		j := i + q
		n := 0
		for k := j - 1; k >= i && doc[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return j
		}
		i = j + 1
	}
}

// forRaw maps the spans of a string's decoded bytes (sorted, disjoint,
// on character boundaries) to its raw JSON text raw, and calls fn with
// each raw span. Each escape decodes to one character, as a raw
// character does, so a decoded character boundary is a raw one.
func forRaw(raw []byte, spans []Span, fn func(a, b int)) {
	d, i := 0, 0 // decoded and raw offsets, on a character boundary
	at := func(b int) int {
		for d < b && i < len(raw) {
			di, ri := unit(raw[i:])
			d, i = d+di, i+ri
		}
		return i
	}
	for _, sp := range spans {
		a := at(sp.Start)
		fn(a, at(sp.End))
	}
}

// unit returns the decoded and raw lengths of the character at the
// start of raw: an escape, or one UTF-8 character (codec.FromJSON's
// decoding: a \u escape of a high surrogate followed by one of a low
// surrogate is one character).
func unit(raw []byte) (decoded, size int) {
	if raw[0] != '\\' {
		if raw[0] < utf8.RuneSelf {
			return 1, 1
		}
		_, n := utf8.DecodeRune(raw)
		return n, n
	}
	if len(raw) < 6 || raw[1] != 'u' {
		return 1, 2
	}
	u := hex4(raw[2:6])
	if u >= 0xd800 && u < 0xdc00 && len(raw) >= 12 && raw[6] == '\\' && raw[7] == 'u' {
		if lo := hex4(raw[8:12]); lo >= 0xdc00 && lo < 0xe000 {
			return 4, 12
		}
	}
	if u >= 0xd800 && u < 0xe000 {
		return 3, 6 // a lone surrogate, kept as WTF-8
	}
	return utf8.RuneLen(rune(u)), 6
}

func hex4(b []byte) int {
	v := 0
	for _, c := range b {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= int(c - '0')
		case c >= 'a' && c <= 'f':
			v |= int(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			v |= int(c - 'A' + 10)
		}
	}
	return v
}
