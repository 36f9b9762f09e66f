package redact_test

import (
	"testing"

	"github.com/sessionlog/sessionlog/internal/deptest"
)

// TestDeps keeps redact on floor 2 (DESIGN.md): it reads and writes
// values with codec, and knows no store, loop or wire.
func TestDeps(t *testing.T) {
	allowed := map[string]string{
		"github.com/cockroachdb/errors":          "error classes (SPEC §11)",
		"github.com/sessionlog/sessionlog/codec": "the storage form and JSON text",
	}
	banned := map[string]string{
		"encoding/json": "values are kept as bytes and walked with codec",
		"os":            "redact does no I/O",
		"log/slog":      "redact logs nothing: it never holds what it matched for longer than a call",
		"github.com/sessionlog/sessionlog/eventlog": "floor 4",
	}
	deptest.Check(t, ".", allowed, banned)
}
