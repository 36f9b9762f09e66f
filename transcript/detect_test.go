package transcript_test

import (
	"github.com/cockroachdb/errors"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/transcript"
)

// TestDetect checks that auto tells the four formats apart by their
// first lines, and refuses (ErrFormat, also codec.ErrInvalid) a file no
// line of which says its format, and one whose lines say two: it never
// guesses.
func TestDetect(t *testing.T) {
	for _, c := range []struct {
		name, head string
		want       transcript.Format // "" for refused
	}{
		{"dsh", `{"type":"session","version":0,"id":"s"}` + "\n" + `{"type":"turn/start","seq":0}`, transcript.DSH},
		{"codex", `{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}`, transcript.Codex},
		{"claude queue-operation first", `{"type":"queue-operation","operation":"enqueue","timestamp":"t","sessionId":"s"}`, transcript.ClaudeCode},
		{"claude links", `{"uuid":"u","parentUuid":null,"message":{}}`, transcript.ClaudeCode},
		{"claude summary", `{"type":"summary","summary":"x","leafUuid":"u"}`, transcript.ClaudeCode},
		{"gemini header", `{"sessionId":"s","projectHash":"h","startTime":"t","lastUpdated":"t","kind":"main"}`, transcript.GeminiCLI},
		{"gemini set then record", `{"$set":{"lastUpdated":"t"}}` + "\n" + `{"id":"g","timestamp":"t","type":"gemini","content":"hi"}`, transcript.GeminiCLI},
		{"undecided lines first", `{"a":1}` + "\nnot json\n" + `{"sessionId":"s","projectHash":"h"}`, transcript.GeminiCLI},
		{"nothing decisive", `{"a":1}` + "\n" + `{"type":"user","content":"x"}`, ""},
		{"claude and gemini", `{"type":"queue-operation","sessionId":"s"}` + "\n" + `{"sessionId":"s","projectHash":"h"}`, ""},
		{"codex and dsh", `{"type":"session","version":0}` + "\n" + `{"timestamp":"t","type":"event_msg","payload":{}}`, ""},
		{"empty", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := transcript.Detect([]byte(c.head + "\n"))
			if c.want == "" {
				if err == nil || !errors.Is(err, transcript.ErrFormat) || !errors.Is(err, codec.ErrInvalid) {
					t.Fatalf("Detect = %q, %v; want an ErrFormat", got, err)
				}
				if strings.Contains(err.Error(), `"s"`) {
					t.Errorf("the error quotes the file: %v", err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("Detect = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}
