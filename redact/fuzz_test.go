package redact_test

import (
	"bytes"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/redact"
)

// fuzzRedactor is the ready matchers and a pattern whose matches touch
// markers and depend on what is around them.
func fuzzRedactor(t testing.TB) *redact.Redactor {
	m, err := redact.Regexp("fuzz", `[ab]c|D\]|\bfo+|x$`)
	if err != nil {
		t.Fatal(err)
	}
	return redact.New(append(redact.SecretMatchers(), m)...)
}

// FuzzJSON checks the redactor's contract on any bytes: it never panics;
// what codec.FromJSON refuses it refuses, or returns unread and unchanged
// (no anchor appears in it); otherwise its output is JSON
// whose storage form is Value's redaction of the input's, with the same
// keys, numbers, booleans, nulls and nesting, each string either kept or
// the Text redaction of the original (a structural one always kept);
// nothing redacted gives the input itself; the count is the markers
// added; and redacting the output again changes nothing.
func FuzzJSON(f *testing.F) {
	g := newGen(9)
	f.Add([]byte(`{"a":[1,2.5,true,null,"text"]}`))
	f.Add([]byte(`{"text":"key sk-ant-api03-` + g.of(b64url, 93) + `AA end","type":"ac"}`))
	f.Add([]byte(`["[REDACTED]ac","D]]","fooo foo","[RED\u0041CTED]x"]`))
	f.Add([]byte(`{"output":"` + g.pem("PRIVATE KEY", 3, `\n`) + `"}`))
	f.Add([]byte(`["\ud83d\ude00ac\udc00","Authorization: Bearer ` + g.of(b64url, 30) + `1"]`))
	r := fuzzRedactor(f)
	f.Fuzz(func(t *testing.T, doc []byte) {
		in, perr := codec.FromJSON(nil, doc, codec.Limits{MaxLine: max(len(doc), 1)})
		out, n, err := r.JSON(doc)
		if perr != nil {
			if err == nil && (n != 0 || !bytes.Equal(out, doc)) {
				t.Fatalf("FromJSON refuses it (%v); JSON changed it", perr)
			}
			return
		}
		if err != nil {
			t.Fatalf("JSON refused valid JSON: %v", err)
		}
		if n == 0 && !bytes.Equal(out, doc) {
			t.Fatal("nothing redacted, but the text changed")
		}
		got, err := codec.FromJSON(nil, out, codec.Limits{MaxLine: max(len(out), 1)})
		if err != nil {
			t.Fatalf("the output is not JSON: %v", err)
		}
		want, vn, err := r.Value(in)
		if err != nil || vn != n || !bytes.Equal(got, want) {
			t.Fatalf("JSON's output is not Value's redaction (%d against %d spans, %v)", n, vn, err)
		}
		if added := sameShape(t, r, in, got); added != n {
			t.Fatalf("%d markers added, count %d", added, n)
		}
		again, n2, err := r.JSON(out)
		if err != nil || n2 != 0 || !bytes.Equal(again, out) {
			t.Fatalf("redacting again: %d spans, %v", n2, err)
		}
	})
}

// sameShape walks a and b (storage forms) together and fails t unless
// they differ only in strings, each of b's the Text redaction of a's (or
// a's itself under a structural key); it returns the markers added.
func sameShape(t *testing.T, r *redact.Redactor, a, b []byte) int {
	ra, rb := codec.NewReader(a), codec.NewReader(b)
	added := 0
	var walk func(structural bool)
	walk = func(structural bool) {
		ta, err := ra.Next()
		if err != nil {
			t.Fatal(err)
		}
		tb, err := rb.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ta.Kind != tb.Kind || ta.N != tb.N || ta.Bool != tb.Bool || ta.Int != tb.Int || ta.Float != tb.Float && ta.Float == ta.Float {
			t.Fatalf("kinds or scalars differ: %v against %v", ta.Kind, tb.Kind)
		}
		switch ta.Kind {
		case codec.KindString:
			want, n := r.Text(ta.Str)
			if structural {
				want, n = ta.Str, 0
			}
			if !bytes.Equal(tb.Str, want) {
				t.Fatalf("a string is not its Text redaction")
			}
			if d := bytes.Count(tb.Str, []byte(redact.Marker)) - bytes.Count(ta.Str, []byte(redact.Marker)); d != n {
				t.Fatalf("a string: %d markers added, Text counts %d", d, n)
			}
			added += n
		case codec.KindArray:
			for range ta.N {
				walk(false)
			}
		case codec.KindObject:
			for range ta.N {
				ka, _, _ := ra.Key()
				kb, _, _ := rb.Key()
				if !bytes.Equal(ka, kb) {
					t.Fatal("a key changed")
				}
				walk(redact.Structural(string(ka)))
			}
		}
	}
	walk(false)
	return added
}

// FuzzText: any bytes; Text's result is a fixed point, and its count is
// the markers it added.
func FuzzText(f *testing.F) {
	f.Add([]byte("xfoo D] [REDACTED]ac sk-" + newGen(10).of(base62, 40)))
	f.Add([]byte("\xed\xa0\x80ac\xff"))
	r := fuzzRedactor(f)
	f.Fuzz(func(t *testing.T, s []byte) {
		out, n := r.Text(s)
		if n == 0 && !bytes.Equal(out, s) {
			t.Fatal("nothing redacted, but the text changed")
		}
		if d := bytes.Count(out, []byte(redact.Marker)) - bytes.Count(s, []byte(redact.Marker)); d != n {
			t.Fatalf("%d markers added, count %d", d, n)
		}
		if again, n2 := r.Text(out); n2 != 0 || !bytes.Equal(again, out) {
			t.Fatalf("redacting again: %d spans", n2)
		}
	})
}
