package gateway_test

import (
	"testing"

	"github.com/sessionlog/sessionlog/internal/deptest"
)

// TestDeps: gateway is floor 6 (DESIGN.md): it forwards over net/http and
// writes the store; it builds events with codec, never encoding/json.
func TestDeps(t *testing.T) {
	allowed := map[string]string{
		"github.com/cockroachdb/errors":                      "error classes (SPEC §11)",
		"github.com/sessionlog/sessionlog/codec":             "events are built with codec's Object",
		"github.com/sessionlog/sessionlog/eventlog":          "the store it records into",
		"github.com/sessionlog/sessionlog/wire":              "the APIs' names",
		"github.com/sessionlog/sessionlog/wire/chunk":        "content-defined chunks",
		"github.com/sessionlog/sessionlog/wire/recorded":     "the recorded events' format",
		"github.com/sessionlog/sessionlog/internal/loopback": "the Host check",
		"github.com/sessionlog/sessionlog/transcript":        "floor 4: the mapping of an exchange (SPEC §15.3)",
		"github.com/sessionlog/sessionlog/redact":            "floor 2: the redactor of recorded bodies (SPEC §14.2)",
	}
	banned := map[string]string{
		"encoding/json":                       "events are built with codec; bodies are forwarded untouched",
		"os":                                  "a library reads no files or environment",
		"github.com/sessionlog/sessionlog/ui": "floor 7",
		"github.com/sessionlog/sessionlog/provider": "the gateway forwards; it is no provider",
	}
	deptest.Check(t, ".", allowed, banned)
}
