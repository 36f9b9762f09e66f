package recorded_test

import (
	"testing"

	"github.com/sessionlog/sessionlog/internal/deptest"
)

// TestDeps keeps recorded on floor 3 (DESIGN.md): events in, bodies and
// problems out; no store, no network.
func TestDeps(t *testing.T) {
	allowed := map[string]string{
		"github.com/cockroachdb/errors":          "error classes (SPEC §11)",
		"github.com/sessionlog/sessionlog/codec": "the event model",
	}
	banned := map[string]string{
		"net/http":      "recorded does no I/O",
		"os":            "recorded does no I/O",
		"encoding/json": "events are built with codec",
		"github.com/sessionlog/sessionlog/eventlog": "recorded knows no store",
	}
	deptest.Check(t, ".", allowed, banned)
}
