package stress_test

import (
	"strings"
	"testing"
	"time"
)

// TestCorruptSabotage shows that TestCorrupt's checks of dead and hung
// workers fire: workers sabotaged to die at once, to die of a Go runtime
// fatal error, and to hang in this project's code each make
// crashProblems report what TestCorrupt would fail on.
func TestCorruptSabotage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the sweep's store and starts workers; skipped under -short with TestCorrupt")
	}
	st := buildCorruptStore(t)
	probes := []probeSpec{{off: 2 * st.pm.pageSize, mask: 1}, {off: 2*st.pm.pageSize + 1, mask: 1}}
	for _, c := range []struct {
		sabotage string
		timeout  time.Duration
		want     []string
	}{
		{"die", time.Minute, []string{"refused-crash: 2 of 2 probes, above the 1% tolerated"}},
		{"fatal", time.Minute, []string{"died of a Go runtime fatal error: the worker died", "fatal error: stack overflow"}},
		{"hang", 2 * time.Second, []string{"hung in this project's code", "stress_test.TestCorruptWorker"}},
	} {
		t.Run(c.sabotage, func(t *testing.T) {
			outs := runProbes(t, st, "probe", probes, workerOpts{env: []string{envCorruptSabotage + "=" + c.sabotage}, timeout: c.timeout})
			got := crashProblems(outs)
			t.Logf("TestCorrupt would fail with:\n  %s", strings.Join(got, "\n  "))
			all := strings.Join(got, "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("the check did not report %q", w)
				}
			}
		})
	}
}
