package ssegen_test

import (
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/internal/ssegen"
	"github.com/sessionlog/sessionlog/wire"
)

// TestTurnsTranslate: each turn is a stream the API's own translator
// reads to its end: the text whole, one tool call with its arguments,
// usage; two seeds give two answers.
func TestTurnsTranslate(t *testing.T) {
	anthropic, err := wire.Lookup("anthropic-messages")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		turn func(uint64, int) []byte
		tr   func() *wire.Translator
	}{
		{"anthropic", ssegen.AnthropicTurn, anthropic.NewTranslator},
		{"responses", ssegen.ResponsesTurn, wire.NewResponsesTranslator},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if string(tt.turn(1, 2000)) == string(tt.turn(2, 2000)) {
				t.Fatal("two seeds, one answer")
			}
			tr := tt.tr()
			stream := tt.turn(7, 2000)
			var out []wire.Chunk
			for p := stream; len(p) > 0; p = p[min(len(p), 100):] {
				if out, err = tr.Feed(out, p[:min(len(p), 100)]); err != nil {
					t.Fatal(err)
				}
			}
			if out, err = tr.End(out); err != nil || !tr.Done() {
				t.Fatalf("the stream did not end: %v", err)
			}
			var text, args strings.Builder
			var usage wire.Usage
			for _, c := range out {
				if c.ArgumentsDelta != "" {
					args.WriteString(c.ArgumentsDelta)
				} else {
					text.WriteString(c.Text)
				}
				if c.Usage.OutputTokens != 0 {
					usage = c.Usage
				}
			}
			if text.String() != ssegen.Text(7, 2000) || !strings.HasPrefix(args.String(), `{"command":`) || usage.OutputTokens == 0 {
				t.Errorf("text %d bytes (want %d), arguments %q, usage %+v", text.Len(), len(ssegen.Text(7, 2000)), args.String(), usage)
			}
		})
	}
}
