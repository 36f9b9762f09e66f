package salvage_test

import (
	"testing"

	"github.com/sessionlog/sessionlog/internal/deptest"
)

// TestDeps keeps salvage's direct imports to the standard library, the
// engine's own packages and the approved modules it needs (style R28).
func TestDeps(t *testing.T) {
	allowed := map[string]string{
		"github.com/cockroachdb/errors":                        "error classes (SPEC §11)",
		"go.etcd.io/bbolt":                                     "File reads the store file directly",
		"go.etcd.io/bbolt/errors":                              "bbolt's lock timeout",
		"github.com/sessionlog/sessionlog/codec":               "records and events",
		"github.com/sessionlog/sessionlog/eventlog":            "the store",
		"github.com/sessionlog/sessionlog/eventlog/boltlog":    "the bbolt store, opened when it opens",
		"github.com/sessionlog/sessionlog/internal/boltfmt":    "the bbolt format, read directly",
		"github.com/sessionlog/sessionlog/internal/atomicfile": "SyncDir",
		"github.com/sessionlog/sessionlog/eventlog/wal":        "the write-ahead log's segments, listed",
		"github.com/sessionlog/sessionlog/rebuild":             "the fold that decides what still verifies",
		"github.com/sessionlog/sessionlog/internal/printable":  "the report's ids, escaped",
	}
	banned := map[string]string{
		"testing":                "test-only code in production",
		"github.com/spf13/cobra": "CLI only",
		"encoding/json":          "sorts map keys; events are transcoded by codec",
		"net/http":               "salvage does no networking",
	}
	deptest.Check(t, ".", allowed, banned)
}
