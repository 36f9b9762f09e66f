package redact_test

import (
	"strings"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/redact"
)

func toJSON(t *testing.T, mp []byte) string {
	t.Helper()
	js, _, err := codec.ToJSON(nil, mp)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

func fromJSON(t *testing.T, js string) []byte {
	t.Helper()
	mp, err := codec.FromJSON(nil, []byte(js), codec.Limits{})
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return mp
}

// TestValue: string values are redacted, keys, numbers, booleans, nulls,
// nesting and structural values never; a string's header is rewritten
// for its new length; nothing changed gives the input itself.
func TestValue(t *testing.T) {
	key := "sk-ant-api03-" + newGen(4).of(b64url, 93) + "AA"
	ab := func(t *testing.T) *redact.Redactor { return redact.New(mustRegexp(t, `ab`)) }
	for _, c := range []struct {
		name    string
		r       func(*testing.T) *redact.Redactor
		in      string
		want    string
		n       int
		aliased bool
	}{
		{"nothing", nil, `{"a":[1,2.5,true,null,"text"]}`, `{"a":[1,2.5,true,null,"text"]}`, 0, true},
		{"value", nil, `{"text":"my key is ` + key + `!"}`, `{"text":"my key is [REDACTED]!"}`, 1, false},
		{"key never", nil, `{"` + key + `":"` + key + `"}`, `{"` + key + `":"[REDACTED]"}`, 1, false},
		{"nested", nil, `[[{"x":["` + key + `",{"y":"` + key + ` ` + key + `"}]}],7]`,
			`[[{"x":["[REDACTED]",{"y":"[REDACTED] [REDACTED]"}]}],7]`, 3, false},
		{"structural", ab, `{"type":"ab","kind":"ab","id":"ab","callId":"ab","text":"ab","reason":"ab","role":"ab","name":"ab"}`,
			`{"type":"ab","kind":"ab","id":"ab","callId":"ab","text":"[REDACTED]","reason":"ab","role":"ab","name":"[REDACTED]"}`, 2, false},
		{"structural only for strings", ab, `{"type":{"x":"ab"},"id":["ab"]}`, `{"type":{"x":"[REDACTED]"},"id":["[REDACTED]"]}`, 2, false},
		{"grows past fixstr", ab, `{"t":"` + strings.Repeat("ab-", 10) + `"}`, `{"t":"` + strings.Repeat("[REDACTED]-", 10) + `"}`, 10, false},
		{"shrinks below str8", nil, `{"t":"` + key + `"}`, `{"t":"[REDACTED]"}`, 1, false},
		{"lone surrogate kept", ab, `["\udc00ab\ud800"]`, `["\udc00[REDACTED]\ud800"]`, 1, false},
	} {
		r := redact.Secrets()
		if c.r != nil {
			r = c.r(t)
		}
		in := fromJSON(t, c.in)
		out, n, err := r.Value(in)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := toJSON(t, out); got != c.want || n != c.n {
			t.Errorf("%s: got %s (%d), want %s (%d)", c.name, got, n, c.want, c.n)
		}
		if want := fromJSON(t, c.want); string(out) != string(want) {
			t.Errorf("%s: the value is not the storage form of its JSON", c.name)
		}
		if aliased := len(out) > 0 && &out[0] == &in[0]; aliased != c.aliased {
			t.Errorf("%s: aliased %v, want %v", c.name, aliased, c.aliased)
		}
	}
}

// TestValueDamage: bytes that are not one msgpack value are
// codec.ErrCorrupt, never a panic, when a matcher may match in them; the
// error holds no content. Bytes no anchor of the ready matchers appears
// in are returned unread.
func TestValueDamage(t *testing.T) {
	any := redact.New(append(redact.SecretMatchers(), mustRegexp(t, `x`))...)
	key := "sk-ant-api03-" + newGen(5).of(b64url, 93) + "AA"
	good := fromJSON(t, `{"a":["`+key+`"]}`)
	deep := []byte(strings.Repeat("\x91", codec.MaxStoredDepth+2) + "\xc0")
	for name, b := range map[string][]byte{
		"empty":      nil,
		"truncated":  good[:len(good)-3],
		"trailing":   append(append([]byte(nil), good...), 0xc0),
		"key number": {0x81, 0x01, 0xa1, 'x'},
		"ext":        {0xd4, 0x01, 0x02},
		"too deep":   deep,
	} {
		_, _, err := any.Value(b)
		if !errors.Is(err, codec.ErrCorrupt) {
			t.Errorf("%s: %v, want codec.ErrCorrupt", name, err)
		}
		if _, _, err := any.Event(b); !errors.Is(err, codec.ErrCorrupt) {
			t.Errorf("%s: Event: %v, want codec.ErrCorrupt", name, err)
		}
		if out, n, err := redact.Secrets().Value(b); err == nil && (n != 0 || string(out) != string(b)) {
			t.Errorf("%s: no error, but a change", name)
		}
		if err != nil && strings.Contains(err.Error(), "sk-ant") {
			t.Errorf("%s: the error holds content: %v", name, err)
		}
	}
}

// TestEvent: an event's data is redacted, its type, seq, time and
// markers never (a pattern that matches "user" leaves user/message
// alone); the result decodes.
func TestEvent(t *testing.T) {
	key := "ghp_" + newGen(6).of(base62, 36)
	line := `{"type":"user/message","seq":3,"time":1.5,"data":{"content":[{"type":"text","text":"use ` + key + ` as user"}],"source":{"kind":"user"}},"surfaceOp":"append"}`
	ev, err := codec.ParseEvent([]byte(line), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	r := redact.New(append(redact.SecretMatchers(), mustRegexp(t, `user|append`))...)
	out, n, err := r.Event(ev.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("%d spans, want 2", n)
	}
	got, err := codec.DecodeStoredEvent(out)
	if err != nil {
		t.Fatal(err)
	}
	js, err := got.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"user/message","seq":3,"time":1.5,"data":{"content":[{"type":"text","text":"use [REDACTED] as [REDACTED]"}],"source":{"kind":"user"}},"surfaceOp":"append"}`
	if string(js) != want {
		t.Errorf("got\n%s\nwant\n%s", js, want)
	}
	same, n, err := redact.Secrets().Event(out)
	if err != nil || n != 0 || &same[0] != &out[0] {
		t.Errorf("redacting the redacted event: %d spans, %v", n, err)
	}
	if _, _, err := r.Event(fromJSON(t, `[1]`)); !errors.Is(err, codec.ErrCorrupt) {
		t.Errorf("an array as event: %v", err)
	}
}
