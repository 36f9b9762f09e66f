package ui_test

import (
	"testing"

	"github.com/sessionlog/sessionlog/internal/deptest"
)

// TestDeps keeps the UI on floor 7 of DESIGN.md, reading the store through
// audit and verify, with no script framework and no JSON encoder but
// codec's.
func TestDeps(t *testing.T) {
	allowed := map[string]string{
		"github.com/cockroachdb/errors":                      "error classes (SPEC §11)",
		"github.com/sessionlog/sessionlog/audit":             "floor 5",
		"github.com/sessionlog/sessionlog/verify":            "floor 5",
		"github.com/sessionlog/sessionlog/rebuild":           "floor 3",
		"github.com/sessionlog/sessionlog/wire":              "floor 3: the bodies of SPEC §12",
		"github.com/sessionlog/sessionlog/eventlog":          "floor 4",
		"github.com/sessionlog/sessionlog/codec":             "floor 1",
		"github.com/sessionlog/sessionlog/internal/loopback": "the Host and address checks, shared with the gateway",
	}
	banned := map[string]string{
		"encoding/json":                "escapes <>&, U+2028 and lone surrogates: codec writes JSON text",
		"text/template":                "html/template escapes by context; text/template does not",
		"os":                           "the UI reads only the store it is handed",
		"github.com/spf13/cobra":       "flags are logtool's",
		"github.com/chromedp/chromedp": "tests only",
	}
	deptest.Check(t, "../ui", allowed, banned)
}
