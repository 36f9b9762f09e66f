package printable

import (
	"bytes"
	"strings"
	"testing"
)

func TestEscapes(t *testing.T) {
	for _, c := range []struct {
		in, id, line, text string
	}{
		{"abc-1", "abc-1", "abc-1", "abc-1"},
		{"", `""`, "", ""},
		{"a b", `"a b"`, "a b", "a b"},
		{`a"b`, `"a\"b"`, `a"b`, `a"b`},
		{"\x1b]0;title\x07", `"\x1b]0;title\a"`, `\x1b]0;title\a`, `\x1b]0;title\a`},
		{"\x1b[2J", `"\x1b[2J"`, `\x1b[2J`, `\x1b[2J`},
		{"a\rb", `"a\rb"`, `a\rb`, `a\rb`},
		{"a\u009bb", `"a\u009bb"`, `a\u009bb`, `a\u009bb`},
		{"a\x7fb", `"a\x7fb"`, `a\x7fb`, `a\x7fb`},
		{"a\xffb", `"a\xffb"`, `a\xffb`, `a\xffb`},
		{"\xe2\x82", `"\xe2\x82"`, `\xe2\x82`, `\xe2\x82`},
		{"l1\nl2\tx", `"l1\nl2\tx"`, `l1\nl2\tx`, "l1\nl2\tx"},
		{"naïve €", `"naïve €"`, "naïve €", "naïve €"},
		{`back\slash`, `back\slash`, `back\slash`, `back\slash`},
	} {
		if got := ID(c.in); got != c.id {
			t.Errorf("ID(%q) = %s, want %s", c.in, got, c.id)
		}
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %s, want %s", c.in, got, c.line)
		}
		if got := Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %s, want %s", c.in, got, c.text)
		}
		if Line(Line(c.in)) != Line(c.in) || Text(Text(c.in)) != Text(c.in) {
			t.Errorf("%q escaped twice differs from once", c.in)
		}
	}
}

// TestWriter: whatever the cut of the writes, a Writer's output is Text
// of the whole, and a character split between writes stays whole.
func TestWriter(t *testing.T) {
	in := "ok é\x1b[2J€\u009b\xff\n\tend\xe2\x82"
	want := Text(in)
	for step := 1; step <= len(in); step++ {
		var out bytes.Buffer
		w := NewWriter(&out)
		for i := 0; i < len(in); i += step {
			n, err := w.Write([]byte(in[i:min(i+step, len(in))]))
			if err != nil || n != min(step, len(in)-i) {
				t.Fatalf("Write = %d, %v", n, err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Errorf("writes of %d bytes gave %q, want %q", step, out.String(), want)
		}
		if strings.ContainsAny(out.String(), "\x1b\u009b\r") {
			t.Errorf("raw control bytes in %q", out.String())
		}
	}
}
