package powerfs_test

import (
	"testing"

	"github.com/sessionlog/sessionlog/internal/deptest"
)

// TestDeps keeps powerfs's imports to the standard library and the modules
// a FUSE loopback needs (style R28); and no engine package, so no store
// code can lean on it.
func TestDeps(t *testing.T) {
	allowed := map[string]string{
		"github.com/cockroachdb/errors":     "errors (SPEC §11)",
		"github.com/hanwen/go-fuse/v2/fs":   "the FUSE loopback it wraps (tests only)",
		"github.com/hanwen/go-fuse/v2/fuse": "mount options and protocol types",
		"golang.org/x/sys/unix":             "linkat(2) with AT_EMPTY_PATH, go-fuse's own dependency",
	}
	banned := map[string]string{
		"github.com/sessionlog/sessionlog/eventlog": "a filesystem for tests knows nothing of the store",
		"github.com/sessionlog/sessionlog/loop":     "a filesystem for tests knows nothing of the loop",
	}
	deptest.Check(t, ".", allowed, banned)
}
