package stress

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCrashSabotage shows that TestCrash cannot pass on a child that does
// nothing: children that stall right after their start line pass every
// check of a round (nothing was reported durable, so nothing is missing),
// and the run's activity check (idle) is what catches them.
func TestCrashSabotage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts crash children; skipped under -short with TestCrash")
	}
	r := newCrashRun(t, filepath.Join(t.TempDir(), "sessions.db"), 1)
	r.env = []string{envSabotage + "=stall"}
	r.run(3)
	if t.Failed() {
		t.Fatal("a round failed on stalled children; only the activity check should catch them")
	}
	idle := r.idle()
	t.Logf("the activity check on %d kills of stalled children says:\n  %s", r.kills, strings.Join(idle, "\n  "))
	for _, want := range []string{"no durable events", "no crash closers", "no forks", "no imports", "no compactions", "durable events per kill"} {
		found := false
		for _, p := range idle {
			found = found || strings.Contains(p, want)
		}
		if !found {
			t.Errorf("the activity check missed %q on stalled children", want)
		}
	}
}
