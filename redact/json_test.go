package redact_test

import (
	"strings"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/redact"
)

// TestJSON: a JSON text is redacted in its string values and kept byte
// for byte elsewhere: whitespace, number spellings, the escapes of the
// rest of a changed string; a span covers the whole escapes it touches.
func TestJSON(t *testing.T) {
	g := newGen(7)
	key := "sk-ant-api03-" + g.of(b64url, 93) + "AA"
	esc := strings.Replace(key, "sk-ant", `sk-\u0061nt`, 1) // an escape inside the key
	pem := g.pem("RSA PRIVATE KEY", 4, `\n`)                // escaped newlines: the decoded string has real ones
	ab := func(t *testing.T) *redact.Redactor { return redact.New(mustRegexp(t, `ab`)) }
	for _, c := range []struct {
		name, in, want string
		r              func(*testing.T) *redact.Redactor
		n              int
	}{
		{"nothing", `{ "a" : [ 1.50, 1e3, -0, true , null ] }`, `{ "a" : [ 1.50, 1e3, -0, true , null ] }`, nil, 0},
		{"value", "{\n  \"text\": \"x\\ty " + key + " \\u00e9\\/\"\n}", "{\n  \"text\": \"x\\ty [REDACTED] \\u00e9\\/\"\n}", nil, 1},
		{"escape inside", `["` + esc + `"]`, `["[REDACTED]"]`, nil, 1},
		{"anchor hidden by an escape", `["\u0067hp_` + g.of(base62, 36) + `"]`, `["[REDACTED]"]`, nil, 1},
		{"key never", `{"` + key + `":"` + key + `"}`, `{"` + key + `":"[REDACTED]"}`, nil, 1},
		{"pem across escapes", `{"output":"cat id_rsa\n` + pem + `\n$ "}`, `{"output":"cat id_rsa\n[REDACTED]\n$ "}`, nil, 1},
		{"structural", `{"type":"ab","id" : "ab", "text":"ab", "x":{"role":"ab"}}`, `{"type":"ab","id" : "ab", "text":"[REDACTED]", "x":{"role":"ab"}}`, ab, 1},
		{"strings after keys", `{"a":{"ab":"ab"},"b":["ab",{"ab":{}}],"ab":"ab"}`, `{"a":{"ab":"[REDACTED]"},"b":["[REDACTED]",{"ab":{}}],"ab":"[REDACTED]"}`, ab, 3},
		{"escaped quotes", `["a\"ab\\","\\\"ab"]`, `["a\"[REDACTED]\\","\\\"[REDACTED]"]`, ab, 2},
		{"surrogates", `["\ud83d\ude00ab\udc00ab"]`, `["\ud83d\ude00[REDACTED]\udc00[REDACTED]"]`, ab, 2},
		{"a bare string", `"ab"`, `"[REDACTED]"`, ab, 1},
	} {
		r := redact.Secrets()
		if c.r != nil {
			r = c.r(t)
		}
		out, n, err := r.JSON([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(out) != c.want || n != c.n {
			t.Errorf("%s: got\n%s (%d)\nwant\n%s (%d)", c.name, out, n, c.want, c.n)
		}
		// The same as redacting the storage form.
		mp, vn, err := r.Value(fromJSON(t, c.in))
		if err != nil {
			t.Fatal(err)
		}
		if string(fromJSON(t, string(out))) != string(mp) || vn != n {
			t.Errorf("%s: JSON and Value disagree", c.name)
		}
	}
	// Text that is no JSON is refused when a matcher may match in it,
	// and returned unread when none can (no anchor appears in it).
	gh := "ghp_" + g.of(base62, 36)
	for _, bad := range []string{``, `{`, `{"a":1}x`, `{"a":1,"a":2}`, "[\"\xff\"]", `["` + gh + `"`, `["\u0067hp_`} {
		any := redact.New(mustRegexp(t, `x`))
		if _, _, err := any.JSON([]byte(bad)); !errors.Is(err, codec.ErrSyntax) && !errors.Is(err, codec.ErrInvalid) {
			t.Errorf("%q: %v, want codec.ErrSyntax or ErrInvalid", bad, err)
		}
		out, n, err := redact.Secrets().JSON([]byte(bad))
		anchored := strings.Contains(bad, "hp_")
		switch {
		case anchored && !errors.Is(err, codec.ErrSyntax):
			t.Errorf("%q: %v, want codec.ErrSyntax", bad, err)
		case !anchored && (err != nil || n != 0 || string(out) != bad):
			t.Errorf("%q: %q %d %v, want it back unread", bad, out, n, err)
		}
	}
}
