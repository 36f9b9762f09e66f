package header

import (
	"testing"

	"github.com/sessionlog/sessionlog/internal/deptest"
)

// TestDeps keeps the package's direct imports to the standard library,
// codec and cockroachdb/errors: header is pure computation over stored
// values (no I/O, no storage, no CLI), and every module dependency is an
// embedding cost for the engine's users.
func TestDeps(t *testing.T) {
	allowed := map[string]string{
		"github.com/cockroachdb/errors":          "error classes (SPEC §11)",
		"github.com/sessionlog/sessionlog/codec": "the storage form",
	}
	banned := map[string]string{
		"testing":          "test-only code in production",
		"os":               "header does no I/O",
		"io":               "header does no I/O",
		"encoding/json":    "sorts map keys and escapes <>&; use codec",
		"time":             "a fold must not read the clock",
		"math/rand":        "a fold must be deterministic",
		"math/rand/v2":     "a fold must be deterministic",
		"go.etcd.io/bbolt": "header knows nothing of storage",
	}
	deptest.Check(t, ".", allowed, banned)
}
