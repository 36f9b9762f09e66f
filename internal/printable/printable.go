package printable

import (
	"io"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// ID returns id as it is when it is valid UTF-8, not empty, and every
// character is printable and neither a space nor a double quote; else
// id quoted (strconv.Quote), so that it stays one word on one line
// whatever it holds.
func ID(id string) string {
	if id == "" {
		return `""`
	}
	if !utf8.ValidString(id) {
		return strconv.Quote(id)
	}
	for _, r := range id {
		if !unicode.IsGraphic(r) || unicode.IsSpace(r) || r == '"' {
			return strconv.Quote(id)
		}
	}
	return id
}

// Line returns s with every control character (C0, DEL, C1), \n and \t
// included, and every byte of invalid UTF-8 escaped.
func Line(s string) string {
	if clean(s, false) {
		return s
	}
	return string(appendEscaped(make([]byte, 0, len(s)+16), s, false))
}

// Text returns s with every control character except \n and \t, and every
// byte of invalid UTF-8, escaped.
func Text(s string) string {
	if clean(s, true) {
		return s
	}
	return string(appendEscaped(make([]byte, 0, len(s)+16), s, true))
}

// clean reports whether s needs no escape: ASCII with no control
// character (but \n and \t when keepLines).
func clean[T ~string | ~[]byte](s T, keepLines bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f || keepLines && (c == '\n' || c == '\t') {
			continue
		}
		return false
	}
	return true
}

// appendEscaped appends s to dst with its control characters (but \n and
// \t when keepLines) and invalid bytes escaped.
func appendEscaped[T ~string | ~[]byte](dst []byte, s T, keepLines bool) []byte {
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c >= 0x20 && c < 0x7f, keepLines && (c == '\n' || c == '\t'):
				dst = append(dst, c)
			case c == '\a':
				dst = append(dst, `\a`...)
			case c == '\b':
				dst = append(dst, `\b`...)
			case c == '\f':
				dst = append(dst, `\f`...)
			case c == '\n':
				dst = append(dst, `\n`...)
			case c == '\r':
				dst = append(dst, `\r`...)
			case c == '\t':
				dst = append(dst, `\t`...)
			case c == '\v':
				dst = append(dst, `\v`...)
			default:
				dst = append(dst, '\\', 'x', hex[c>>4], hex[c&0xf])
			}
			continue
		}
		var r rune
		var n int
		switch v := any(s[i:]).(type) {
		case string:
			r, n = utf8.DecodeRuneInString(v)
		default:
			r, n = utf8.DecodeRune([]byte(s[i:]))
		}
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, '\\', 'x', hex[c>>4], hex[c&0xf])
		case r >= 0x80 && r <= 0x9f:
			dst = append(dst, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
		default:
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return dst
}

// Writer writes what is written to it through Text to an underlying
// writer. A character split between two writes is held until the next
// one; Flush writes what is held (an incomplete character, escaped).
type Writer struct {
	w    io.Writer
	held []byte
	buf  []byte
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes p and writes it. It returns len(p) when the underlying
// writer took everything.
func (e *Writer) Write(p []byte) (int, error) {
	data := p
	if len(e.held) > 0 {
		data = append(e.held, p...)
		e.held = nil
	}
	cut := len(data) - incomplete(data)
	if cut < len(data) {
		e.held = append([]byte(nil), data[cut:]...)
		data = data[:cut]
	}
	if clean(data, true) {
		if _, err := e.w.Write(data); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	e.buf = appendEscaped(e.buf[:0], data, true)
	if _, err := e.w.Write(e.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes, escaped, the start of a character held back by the last
// Write. Call it when nothing more will be written.
func (e *Writer) Flush() error {
	if len(e.held) == 0 {
		return nil
	}
	e.buf = appendEscaped(e.buf[:0], e.held, true)
	e.held = nil
	_, err := e.w.Write(e.buf)
	return err
}

// Unwrap returns the underlying writer.
func (e *Writer) Unwrap() io.Writer { return e.w }

// incomplete returns the length of the start of a UTF-8 character that p
// ends in (0 when p ends in a whole character or in bytes that can start
// none).
func incomplete(p []byte) int {
	for n := 1; n <= utf8.UTFMax-1 && n <= len(p); n++ {
		c := p[len(p)-n]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(p[len(p)-n:]) {
				return 0
			}
			return n
		}
	}
	return 0
}
