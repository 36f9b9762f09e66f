package audit

import (
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	long := strings.Repeat("é", snippetRunes)
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", `""`},
		{"escapes", "a\nb\t\"c\"\\", `"a\nb\t\"c\"\\"`},
		{"html and separators unescaped", "<a>&\u2028", "\"<a>&\u2028\""},
		{"exactly the limit", long, `"` + long + `"`},
		{"cut after the limit", long + "xyz", `"` + long + `…"`},
		{"lone surrogate kept whole", strings.Repeat("a", snippetRunes-1) + "\xed\xa0\x80" + "b", `"` + strings.Repeat("a", snippetRunes-1) + `\ud800…"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := quote(tt.in); got != tt.want {
				t.Errorf("quote(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}
