package keys_test

import (
	"testing"

	"github.com/sessionlog/sessionlog/internal/deptest"
)

// TestDeps keeps keys to the standard library's cryptography, codec (the
// class and the Sealer) and cockroachdb/errors (style R28): a key package
// is where a dependency would matter most.
func TestDeps(t *testing.T) {
	allowed := map[string]string{
		"github.com/cockroachdb/errors":          "error classes (SPEC §11)",
		"github.com/sessionlog/sessionlog/codec": "the sealed frames and class keys",
	}
	banned := map[string]string{
		"testing":                 "test-only code in production",
		"math/rand":               "keys come from crypto/rand",
		"math/rand/v2":            "keys come from crypto/rand",
		"log":                     "a library never logs, and keys never reach a log",
		"log/slog":                "a library never logs, and keys never reach a log",
		"golang.org/x/crypto":     "the standard library's AES-GCM is enough",
		"go.etcd.io/bbolt":        "keys know nothing of storage",
		"github.com/jackc/pgx/v5": "keys know nothing of storage",
		"github.com/spf13/cobra":  "CLI only",
	}
	deptest.Check(t, ".", allowed, banned)
}
