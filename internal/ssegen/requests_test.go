package ssegen_test

import (
	"encoding/json"
	"testing"

	"github.com/sessionlog/sessionlog/internal/ssegen"
)

// TestRequestsAreJSON: the request bodies are JSON objects, as the agents'
// are: a body that is not would be recorded as bytes alone, and the
// gateway's measures would skip its mapping.
func TestRequestsAreJSON(t *testing.T) {
	for name, bodies := range map[string][][]byte{"claude": ssegen.ClaudeRequests(3), "codex": ssegen.CodexRequests(3)} {
		for i, b := range bodies {
			var v map[string]json.RawMessage
			if err := json.Unmarshal(b, &v); err != nil {
				t.Errorf("%s body %d: %v", name, i, err)
			}
		}
	}
}
