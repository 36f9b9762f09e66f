package wire_test

import (
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/wire"
)

// TestErrorFinishIsJSON: whatever text an error object in a chat stream
// carries (long, non-ASCII, so that a bound on its length may cut inside
// a character), its finish is valid JSON text the log can hold, and the
// stream ends there.
func TestErrorFinishIsJSON(t *testing.T) {
	r, err := wire.Lookup(wire.OpenAIChat)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, obj string }{
		{"long non-ASCII message", `{"message":"` + strings.Repeat("é", 700) + `","code":"x"}`},
		{"long message, odd cut", `{"message":"a` + strings.Repeat("😀", 400) + `"}`},
		{"non-ASCII code", `{"message":"m","code":"ünknown"}`},
		{"lone surrogate", `{"message":"\ud800 half","type":"t"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr := r.NewTranslator()
			chunks, err := tr.Feed(nil, []byte("data: {\"error\":"+tt.obj+"}\n\n"))
			if err != nil {
				t.Fatal(err)
			}
			if !tr.Done() || len(chunks) != 1 || chunks[0].Type != wire.ChunkFinish {
				t.Fatalf("done %v, chunks %+v; want the stream ended by one finish", tr.Done(), chunks)
			}
			reason := chunks[0].Reason
			if _, err := codec.FromJSON(nil, reason, codec.Limits{}); err != nil {
				t.Fatalf("the finish is not JSON text the log can hold: %v\n%q", err, reason)
			}
			if !strings.HasPrefix(string(reason), `{"kind":"error","message":`) {
				t.Fatalf("finish %s; want an error finish", reason)
			}
		})
	}
}
