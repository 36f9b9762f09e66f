package wire_test

import (
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/wire"
)

// TestLookup finds each renderer by its name, and refuses another name
// with ErrUnknown and a message that lists the known names as a person
// reads them.
func TestLookup(t *testing.T) {
	tests := []struct {
		name    string
		wantErr string
	}{
		{wire.OpenAIChat, ""},
		{wire.AnthropicMessages, ""},
		{"bogus", `wire: no renderer named "bogus" (known: anthropic-messages, openai-chat)`},
		{"", `wire: no renderer named "" (known: anthropic-messages, openai-chat)`},
	}
	for _, tt := range tests {
		r, err := wire.Lookup(tt.name)
		if tt.wantErr == "" {
			if err != nil || r.Name() != tt.name {
				t.Errorf("Lookup(%q) = %v, %v; want the renderer", tt.name, r, err)
			}
			continue
		}
		if err == nil || err.Error() != tt.wantErr || !errors.Is(err, wire.ErrUnknown) {
			t.Errorf("Lookup(%q) error = %v; want %q marked ErrUnknown", tt.name, err, tt.wantErr)
		}
	}
}
