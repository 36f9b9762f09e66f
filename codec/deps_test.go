package codec_test

import (
	"testing"

	"github.com/sessionlog/sessionlog/internal/deptest"
)

// TestDeps keeps codec's direct imports to the standard library and
// cockroachdb/errors (style R28): codec is the bottom of the engine's
// import graph, every module dependency is an embedding cost, and
// encoding/json or a msgpack library would break byte-exact transcoding
// (SPEC §2.2, §2.7).
func TestDeps(t *testing.T) {
	allowed := map[string]string{
		"github.com/cockroachdb/errors":    "error classes (SPEC §11)",
		"github.com/klauspost/compress/s2": "compressed records (pure Go)",
	}
	banned := map[string]string{
		"testing":                           "test-only code in production",
		"encoding/json":                     "escapes <>&, U+2028 and lone surrogates, sorts map keys",
		"github.com/vmihailenco/msgpack/v5": "dynamic type reconstruction; the storage form is written by hand",
		"go.etcd.io/bbolt":                  "codec knows nothing of storage",
		"github.com/spf13/cobra":            "CLI only",
		"time":                              "stored times are JSON numbers; codec reads no clock",
		"math/rand":                         "codec is deterministic (a sealed frame's nonce comes from crypto/cipher's own random source)",
		"math/rand/v2":                      "codec is deterministic (a sealed frame's nonce comes from crypto/cipher's own random source)",
		"reflect":                           "no dynamic type reconstruction (SPEC §8.1)",
	}
	deptest.Check(t, ".", allowed, banned)
}
