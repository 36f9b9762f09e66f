package audit

import (
	"testing"

	"github.com/sessionlog/sessionlog/internal/deptest"
)

// TestDeps keeps audit on floor 5 of DESIGN.md: it reads a store through
// rebuild and never reaches up to the UI, the commands or the network.
func TestDeps(t *testing.T) {
	allowed := map[string]string{
		"github.com/cockroachdb/errors":                  "error classes (SPEC §11)",
		"github.com/sessionlog/sessionlog/codec":         "floor 1",
		"github.com/sessionlog/sessionlog/header":        "floor 2",
		"github.com/sessionlog/sessionlog/rebuild":       "floor 3",
		"github.com/sessionlog/sessionlog/eventlog":      "floor 4",
		"github.com/sessionlog/sessionlog/compact":       "floor 2: the token estimate of bytes re-sent unchanged",
		"github.com/sessionlog/sessionlog/wire/recorded": "floor 3: a recorded session's bodies (SPEC §15.4)",
		"github.com/sessionlog/sessionlog/transcript":    "floor 4: the normal form a recorded request is compared in",
	}
	banned := map[string]string{
		"encoding/json": "escapes <>&, U+2028 and lone surrogates: codec writes JSON text",
		"net/http":      "audit computes; the UI serves",
		"os":            "audit reads only the store it is handed",
	}
	deptest.Check(t, ".", allowed, banned)
}
