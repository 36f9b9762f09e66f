package keys_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/keys"
)

func TestFromEnv(t *testing.T) {
	good := base64.StdEncoding.EncodeToString(secret)
	tests := []struct {
		name, value, want string
	}{
		{"base64", good, "ok"},
		{"with a newline and spaces", " " + good + "\n", "ok"},
		{"unset", "", "is not set"},
		{"spaces", "  \n", "is not set"},
		{"no padding", strings.TrimRight(good, "="), "does not hold a key"},
		{"URL alphabet", base64.URLEncoding.EncodeToString(append([]byte{0xfb, 0xff}, secret[2:]...)), "does not hold a key"},
		{"31 bytes", base64.StdEncoding.EncodeToString(secret[:31]), "does not hold a key"},
		{"33 bytes", base64.StdEncoding.EncodeToString(append(secret, 1)), "does not hold a key"},
		{"hex", strings.Repeat("7a", 32), "does not hold a key"},
		{"a long text", strings.Repeat("QUJD", 1<<14), "does not hold a key"},
		{"raw bytes", string(secret), "does not hold a key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := keys.FromEnv("SESSIONLOG_TEST_KEY", func(name string) string {
				if name != "SESSIONLOG_TEST_KEY" {
					t.Fatalf("FromEnv read $%s", name)
				}
				return tt.value
			})
			if tt.want == "ok" {
				if err != nil || k.KeyID() != mustKEK(t, secret).KeyID() {
					t.Fatalf("FromEnv = %v, %v; want the test key", k, err)
				}
				return
			}
			if class(err) != "keys" || !strings.Contains(err.Error(), "$SESSIONLOG_TEST_KEY "+tt.want) {
				t.Fatalf("FromEnv = %v, want class keys: $SESSIONLOG_TEST_KEY %s", err, tt.want)
			}
			if v := strings.TrimSpace(tt.value); (v != "" && strings.Contains(err.Error(), v[:min(len(v), 12)])) || leaks(err.Error(), secret) {
				t.Errorf("the error shows the variable's value: %v", err)
			}
		})
	}
	// nil getenv reads the process's environment.
	t.Setenv("SESSIONLOG_TEST_KEY", good)
	if k, err := keys.FromEnv("SESSIONLOG_TEST_KEY", nil); err != nil || k.KeyID() != mustKEK(t, secret).KeyID() {
		t.Fatalf("FromEnv from the process = %v, %v", k, err)
	}
}
