package transcript

import (
	"testing"

	"github.com/sessionlog/sessionlog/internal/deptest"
)

// TestDeps keeps transcript on floor 4 (DESIGN.md): it reads source files
// it is handed and writes codec events; storage, rebuild and the CLI are
// its callers' business.
func TestDeps(t *testing.T) {
	allowed := map[string]string{
		"github.com/cockroachdb/errors":          "error classes (SPEC §11)",
		"github.com/sessionlog/sessionlog/codec": "the event model and its JSON reader",
		"github.com/sessionlog/sessionlog/wire":  "floor 3: the chunks of a recorded answer (SPEC §15.3)",
	}
	banned := map[string]string{
		"testing":          "test-only code in production",
		"os":               "transcript reads what it is handed",
		"encoding/json":    "sorts map keys and escapes <>&; use codec",
		"go.etcd.io/bbolt": "transcript knows nothing of storage",
		"github.com/sessionlog/sessionlog/eventlog": "a Source needs no store",
		"github.com/sessionlog/sessionlog/loop":     "floor 5",
		"github.com/sessionlog/sessionlog/verify":   "floor 5",
	}
	deptest.Check(t, ".", allowed, banned)
}
