package wire_test

import (
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/wire"
)

// TestCleanReason: a finish reason's error message is redacted, then cut
// (a key straddling the cut leaves no part behind), and a reason that is
// not an error keeps all but the key.
func TestCleanReason(t *testing.T) {
	key := "sk-secret-0123456789"
	long := strings.Repeat("é", wire.MaxMessage/2-20) + "x" + key[:12]
	for _, tc := range []struct {
		name, reason, key, want string
	}{
		{"stop", `{"kind":"stop"}`, key, `{"kind":"stop"}`},
		{"stop reason with the key", `{"kind":"error","message":"model stopped: ` + key + `","code":"X"}`, key,
			`{"kind":"error","message":"model stopped: [redacted]","code":"X"}`},
		{"a key prefix where a read limit cut the message", `{"kind":"error","message":"` + long + `","code":"SERVER"}`, key,
			`{"kind":"error","message":"` + strings.Repeat("é", wire.MaxMessage/2-20) + `x[redacted]","code":"SERVER"}`},
		{"long message, no key", `{"kind":"error","message":"` + strings.Repeat("ab", wire.MaxMessage) + `","code":"SERVER"}`, "",
			`{"kind":"error","message":"` + strings.Repeat("ab", wire.MaxMessage/2) + `…","code":"SERVER"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(wire.CleanReason([]byte(tc.reason), tc.key)); got != tc.want {
				t.Errorf("CleanReason = %s\nwant %s", got, tc.want)
			}
		})
	}
}
