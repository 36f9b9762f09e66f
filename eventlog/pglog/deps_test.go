package pglog_test

import (
	"testing"

	"github.com/sessionlog/sessionlog/internal/deptest"
)

// TestDeps: the PostgreSQL store is storage (DESIGN.md floor 4): it never
// imports the rules it is handed (rebuild) nor anything above it, and no
// module beyond the approved ones.
func TestDeps(t *testing.T) {
	allowed := map[string]string{
		"github.com/sessionlog/sessionlog/codec":                    "the event model and record frame",
		"github.com/sessionlog/sessionlog/eventlog":                 "the Store contract, its checks and chain hash",
		"github.com/sessionlog/sessionlog/eventlog/internal/engine": "the engine both drivers share",
		"github.com/sessionlog/sessionlog/internal/sessioncache":    "the validator cache and writer locks",
		"github.com/sessionlog/sessionlog/internal/observe":         "logger and metric setup shared with eventlog and loop",
		"github.com/cockroachdb/errors":                             "errors",
		"go.opentelemetry.io/otel/metric":                           "the metric API (no SDK)",
		"go.opentelemetry.io/otel/attribute":                        "metric attributes (the SQLSTATE of a retry)",
		"github.com/jackc/pgx/v5":                                   "PostgreSQL",
		"github.com/jackc/pgx/v5/pgconn":                            "PostgreSQL errors",
		"github.com/jackc/pgx/v5/pgxpool":                           "the connection pool",
	}
	banned := map[string]string{}
	for _, p := range []string{"rebuild", "loop", "compact", "verify", "wire", "provider", "salvage", "scenario"} {
		banned["github.com/sessionlog/sessionlog/"+p] = "storage never imports the layers above it (DESIGN.md)"
	}
	deptest.Check(t, ".", allowed, banned)
}
