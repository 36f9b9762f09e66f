package wire_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sessionlog/sessionlog/wire"
)

// TestMessage (issue 19 item 2): a server's text is redacted, then cut at
// a character boundary, and always valid UTF-8; no 8 bytes of the key
// survive a cut.
func TestMessage(t *testing.T) {
	const key = "sk-abcdefghijklmnopqrstuvwxyz"
	cut := wire.MaxMessage
	for _, tc := range []struct {
		what, text, want string
	}{
		{"short", "no key here", "no key here"},
		{"echo", "bad key " + key + ".", "bad key [redacted]."},
		{"straddles the cut", strings.Repeat("a", cut-10) + key, strings.Repeat("a", cut-10) + "[redacted]"},
		{"over the cut", strings.Repeat("a", cut-4) + key + "tail", strings.Repeat("a", cut-4) + "[red…"},
		{"prefix at the end", "body cut here: " + key[:12], "body cut here: [redacted]"},
		{"short prefix at the end stays", "ends sk-abcd", "ends sk-abcd"},
		{"two-byte character at the cut", "x" + strings.Repeat("é", cut), "x" + strings.Repeat("é", (cut-1)/2) + "…"},
		{"four-byte character at the cut", "xyz" + strings.Repeat("😀", cut/4+1), "xyz" + strings.Repeat("😀", (cut-3)/4) + "…"},
		{"not UTF-8", "a\xffb\xc3", "a\uFFFDb\uFFFD"},
		{"continuation bytes at the cut", strings.Repeat("\x80", 2*cut), strings.Repeat("\uFFFD", 1) + "…"},
	} {
		got := wire.Message(tc.text, key)
		if got != tc.want {
			t.Errorf("%s: got %q…, want %q…", tc.what, first(got), first(tc.want))
		}
		if !utf8.ValidString(got) {
			t.Errorf("%s: not UTF-8", tc.what)
		}
		for i := 0; i+8 <= len(key); i++ {
			if strings.Contains(got, key[i:i+8]) {
				t.Errorf("%s: holds %q of the key", tc.what, key[i:i+8])
			}
		}
	}
	if got := wire.Message("text with "+key, ""); got != "text with "+key {
		t.Errorf("no key: %q", got)
	}
}

func first(s string) string { return s[:min(len(s), 40)] + "…" + s[max(0, len(s)-20):] }
