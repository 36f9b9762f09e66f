package chunk_test

import (
	"testing"

	"github.com/sessionlog/sessionlog/internal/deptest"
)

// TestDeps keeps chunk a leaf of floor 3: bytes in, cuts and digests out.
func TestDeps(t *testing.T) {
	banned := map[string]string{
		"net/http": "chunk does no I/O",
		"os":       "chunk does no I/O",
		"time":     "a cut depends on the bytes alone",
		"github.com/sessionlog/sessionlog/eventlog": "chunk knows no store",
	}
	deptest.Check(t, ".", nil, banned)
}
