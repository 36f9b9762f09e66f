package rebuild

import (
	"strconv"
	"strings"
)

// FirstDifference returns the offset of the first byte where a and b
// differ (the shorter length when one is a prefix of the other), or -1
// when they are equal.
func FirstDifference(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) == len(b) {
		return -1
	}
	return n
}

// PathAt returns the JSON path of the innermost value of doc, a JSON text
// written by this engine (no insignificant whitespace), that contains the
// byte at offset off: e.g. "messages[3].content[0].text". It names
// positions and keys, never values; "" for the whole document or an
// offset outside it.
func PathAt(doc []byte, off int) string {
	if off < 0 || off >= len(doc) {
		return ""
	}
	type frame struct {
		obj   bool
		index int
		key   string
	}
	var stack []frame
	inStr, esc, inKey := false, false, false
	var key []byte
	for i := 0; i < off && i < len(doc); i++ {
		c := doc[i]
		if inStr {
			switch {
			case esc:
				esc = false
				if inKey {
					key = append(key, c)
				}
			case c == '\\':
				esc = true
				if inKey {
					key = append(key, c)
				}
			case c == '"':
				inStr = false
				if inKey {
					stack[len(stack)-1].key = string(key)
					inKey = false
				}
			case inKey:
				key = append(key, c)
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
			if n := len(stack); n > 0 && stack[n-1].obj && expectingKey(doc, i) {
				inKey, key = true, key[:0]
			}
		case '{':
			stack = append(stack, frame{obj: true})
		case '[':
			stack = append(stack, frame{})
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			if n := len(stack); n > 0 && !stack[n-1].obj {
				stack[n-1].index++
			}
		}
	}
	var b strings.Builder
	for i, f := range stack {
		switch {
		case f.obj && f.key != "":
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(f.key)
		case !f.obj:
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		}
	}
	return b.String()
}

// expectingKey reports whether the string starting at doc[i] is an object
// key: the previous significant byte is '{' or ','.
func expectingKey(doc []byte, i int) bool {
	return i > 0 && (doc[i-1] == '{' || doc[i-1] == ',')
}
