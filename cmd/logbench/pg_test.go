package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/internal/pgtest"
)

// TestQuickPostgres runs a -quick report with the PostgreSQL section: its
// append table has a row per session count, its scan table one row, and
// the summary quotes the 64-session figure.
func TestQuickPostgres(t *testing.T) {
	u := pgtest.ServerURL(t)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-quick", "-rounds", "1", "-round-time", "50ms", "-o", "-", "-dir", t.TempDir(), "-pg", u},
		&stdout, &stderr)
	if code != exitOK {
		t.Fatalf("logbench -quick -pg = exit %d, stderr:\n%s", code, stderr.String())
	}
	doc := stdout.String()
	secs, _ := sections(doc)
	pg := secs["PostgreSQL store"]
	for _, want := range []string{"\n| 1 |", "\n| 64 |", "\n| 256 |", "events |", "Target of issue 10"} {
		if !strings.Contains(pg, want) {
			t.Errorf("the PostgreSQL section lacks %q:\n%s", want, pg)
		}
	}
	if !strings.Contains(secs["Summary"], "on PostgreSQL, 64 sessions") {
		t.Errorf("the summary lacks the PostgreSQL figure:\n%s", secs["Summary"])
	}
}
