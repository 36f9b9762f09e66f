package wire_test

import (
	"testing"

	"github.com/sessionlog/sessionlog/internal/deptest"
)

// TestDeps keeps wire pure (DESIGN.md floor 3): the codec and the header,
// no network, no store, no loop, no encoding/json.
func TestDeps(t *testing.T) {
	allowed := map[string]string{
		"github.com/cockroachdb/errors":           "error classes (SPEC §11)",
		"github.com/sessionlog/sessionlog/codec":  "the one JSON encoder and reader",
		"github.com/sessionlog/sessionlog/header": "the header in force",
	}
	banned := map[string]string{
		"net/http":      "wire never does I/O; provider speaks HTTP",
		"net":           "wire never does I/O",
		"os":            "wire never does I/O",
		"encoding/json": "escapes <>&, U+2028 and lone surrogates, sorts map keys",
		"github.com/sessionlog/sessionlog/eventlog": "wire knows no store",
		"github.com/sessionlog/sessionlog/loop":     "wire sits below the loop",
		"github.com/sessionlog/sessionlog/rebuild":  "wire renders a request it is given",
		"time": "wire reads no clock",
	}
	deptest.Check(t, ".", allowed, banned)
}
