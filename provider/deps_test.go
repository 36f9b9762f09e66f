package provider_test

import (
	"testing"

	"github.com/sessionlog/sessionlog/internal/deptest"
)

// TestDeps: provider is HTTP over wire for the loop (DESIGN.md floor 6);
// it renders with wire alone and never touches a store.
func TestDeps(t *testing.T) {
	allowed := map[string]string{
		"github.com/cockroachdb/errors":          "error classes (SPEC §11)",
		"github.com/sessionlog/sessionlog/codec": "error classes",
		"github.com/sessionlog/sessionlog/loop":  "the Provider interface it implements",
		"github.com/sessionlog/sessionlog/wire":  "the one renderer per API",
	}
	banned := map[string]string{
		"encoding/json": "bodies are wire's bytes; no second encoder",
		"github.com/sessionlog/sessionlog/eventlog": "a provider knows no store",
		"github.com/sessionlog/sessionlog/rebuild":  "a provider sends the request it is handed",
	}
	deptest.Check(t, ".", allowed, banned)
}
