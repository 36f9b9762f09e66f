package stress_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
)

// worker is a running TestCorruptWorker process.
type worker struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *tailBuffer
	done   chan struct{}
	state  string // how it ended, once done is closed
}

// startWorker starts a worker on the sweep's store, with env added to its
// environment.
func startWorker(t *testing.T, st *corruptStore, env []string) (*worker, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestCorruptWorker$", "-test.count=1", "-test.timeout=0")
	cmd.Env = append(append(os.Environ(), envCorruptStore+"="+st.path, envCorruptDir+"="+st.dir), env...)
	w := &worker{cmd: cmd, lines: make(chan string, 16), stderr: &tailBuffer{max: 256 << 10}, done: make(chan struct{})}
	cmd.Stderr = w.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, errors.Wrap(err, "worker stdout")
	}
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, errors.Wrap(err, "worker stdin")
	}
	if err := cmd.Start(); err != nil {
		return nil, errors.Wrap(err, "start worker")
	}
	go func() {
		r := bufio.NewReaderSize(stdout, 64<<10)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				break
			}
			w.lines <- strings.TrimSuffix(line, "\n")
		}
		close(w.lines)
		err := cmd.Wait()
		w.state = fmt.Sprint(err)
		close(w.done)
	}()
	return w, nil
}

// workerCrash is how a worker died on a probe: why is empty when it did
// not.
type workerCrash struct {
	why  string
	kind crashKind
}

func (c workerCrash) String() string { return c.why }

// crashKind sorts the deaths of workers.
type crashKind int

const (
	crashDied      crashKind = iota // it exited, or a panic ended it
	crashFatal                      // a Go runtime fatal error: never acceptable
	crashHangOurs                   // it hung with the probe in this project's code: never acceptable
	crashHangOther                  // it hung with the probe in a dependency (bbolt)
)

// do runs one probe line and returns its result, or how the worker died
// when it exited or did not answer within timeout. A worker that hangs is
// sent SIGQUIT, so that its goroutine dump says where the probe was.
func (w *worker) do(line string, timeout time.Duration) (res probeResult, crash workerCrash) {
	died := func(how string) workerCrash {
		<-w.done
		why, fatal := w.stderr.tail()
		c := workerCrash{why: fmt.Sprintf("the worker %s (%s): %s", how, w.state, why)}
		if fatal {
			c.kind = crashFatal
		}
		return c
	}
	if _, err := io.WriteString(w.stdin, line+"\n"); err != nil {
		return res, died("is gone")
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case l, ok := <-w.lines:
			if !ok {
				return res, died("died")
			}
			if !strings.HasPrefix(l, resultPrefix) {
				continue // the test framework's own output
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(l, resultPrefix)), &res); err != nil {
				return res, workerCrash{why: fmt.Sprintf("the worker answered %q: %v", l, err)}
			}
			return res, workerCrash{}
		case <-timer.C:
			where := w.dump()
			c := workerCrash{why: fmt.Sprintf("the probe hung for %s, in %s", timeout, where), kind: crashHangOther}
			if strings.HasPrefix(where, modulePath+"/") {
				c.kind = crashHangOurs
			}
			return res, c
		}
	}
}

// modulePath prefixes the functions of this project in a goroutine dump.
const modulePath = "github.com/sessionlog/sessionlog"

// dump ends a hung worker with SIGQUIT (killing it if that does not end
// it) and returns the innermost function of the probe's goroutine outside
// the runtime and the standard library's time and sync: where it hung.
func (w *worker) dump() string {
	_ = w.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-w.done:
	case <-time.After(20 * time.Second):
		w.kill()
		return "an unknown place (no goroutine dump)"
	}
	for range w.lines {
	}
	w.stderr.mu.Lock()
	out := string(w.stderr.b)
	w.stderr.mu.Unlock()
	for _, g := range strings.Split(out, "\n\n") {
		if !strings.Contains(g, "TestCorruptWorker(") {
			continue
		}
		lines := strings.Split(g, "\n")
		for _, l := range lines[1:] {
			if strings.HasPrefix(l, "\t") || l == "" {
				continue // a file:line
			}
			fn := strings.TrimPrefix(l, "created by ")
			if strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "time.") || strings.HasPrefix(fn, "sync.") ||
				strings.HasPrefix(fn, "internal/") {
				continue
			}
			if i := strings.LastIndex(fn, "("); i > 0 {
				fn = fn[:i]
			}
			return fn
		}
	}
	return "an unknown place (the dump has no probe goroutine)"
}

// kill kills the worker (the process this test started) and waits for it.
func (w *worker) kill() {
	_ = w.cmd.Process.Kill()
	for range w.lines {
	}
	<-w.done
}

// stop ends the worker: it exits when its stdin closes.
func (w *worker) stop() {
	_ = w.stdin.Close()
	select {
	case <-w.done:
	case <-time.After(probeTimeout):
		w.kill()
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b = append(b.b, p...)
	if len(b.b) > b.max {
		b.b = b.b[len(b.b)-b.max:]
	}
	return len(p), nil
}

// tail returns why the process died: the first "fatal error:" or
// "panic:" line of its stderr, else its last line; and whether it was a
// Go runtime fatal error (which no recover can catch: checkptr, out of
// memory, a stack overflow, a race the race detector halts on).
func (b *tailBuffer) tail() (why string, fatal bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(b.b)), "\n")
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "fatal error:"), strings.Contains(l, "ThreadSanitizer"), strings.HasPrefix(l, "WARNING: DATA RACE"):
			return l, true
		case strings.HasPrefix(l, "panic:"):
			return l, false
		}
	}
	return lines[len(lines)-1], false
}

// crashProblems lists what the refused-crash outcomes make a failure: a
// Go runtime fatal error, a hang in this project's code, or more of them
// than 1% of the probes.
func crashProblems(outs []outcome) []string {
	var out []string
	n := 0
	for _, o := range outs {
		if o.res.Class != classRefusedCrash {
			continue
		}
		n++
		recipe := fmt.Sprintf("byte %d ^= %#02x in %s", o.spec.off, o.spec.mask, o.region)
		switch o.crash.kind {
		case crashFatal:
			out = append(out, fmt.Sprintf("%s: the worker died of a Go runtime fatal error: %s", recipe, o.crash))
		case crashHangOurs:
			out = append(out, fmt.Sprintf("%s: the probe hung in this project's code: %s", recipe, o.crash))
		}
	}
	if n*100 > len(outs) {
		out = append(out, fmt.Sprintf("refused-crash: %d of %d probes, above the 1%% tolerated", n, len(outs)))
	}
	return out
}

// report counts the outcomes, logs them by class and by where the flip
// landed, and fails on SILENT, MISSED, unclassified errors and record
// damage that no finding names.
func report(t *testing.T, outs []outcome) {
	t.Helper()
	counts := map[string]int{}
	byKind := map[byteKind]map[string]int{}
	// Failures are grouped by what and where, so that one cause found by
	// many flips reads as one line with its recipes.
	type group struct {
		what    string
		recipes []string
	}
	var groups []*group
	byWhat := map[string]*group{}
	fail := func(what, recipe string) {
		g := byWhat[what]
		if g == nil {
			g = &group{what: what}
			byWhat[what] = g
			groups = append(groups, g)
		}
		g.recipes = append(g.recipes, recipe)
	}
	for _, o := range outs {
		class := o.res.Class
		counts[class]++
		if byKind[o.region.kind] == nil {
			byKind[o.region.kind] = map[string]int{}
		}
		byKind[o.region.kind][class]++
		recipe := fmt.Sprintf("byte %d ^= %#02x", o.spec.off, o.spec.mask)
		switch {
		case class == classSilent || class == classMissed:
			fail(fmt.Sprintf("%s: in %s: %s", class, o.region, o.res.Diff), recipe)
		case class == classDetected && o.region.kind == kindEventRecord && !names(o.res.Findings, o.region):
			fail(fmt.Sprintf("unnamed: in %s: no finding names session %s seq %d: %v",
				o.region, o.region.session, o.region.seq, o.res.Findings), recipe)
		}
		if len(o.res.Unclassified) > 0 {
			fail(fmt.Sprintf("unclassified: in %s: %s: %v", o.region, class, o.res.Unclassified), recipe)
		}
		recipe += " in " + o.region.String()
		if o.took > slowProbe {
			t.Logf("slow: %s took %s (%s)", recipe, o.took.Round(time.Millisecond), class)
		}
		switch {
		case o.crash.why != "":
			t.Logf("refused-crash: %s: %s", recipe, o.crash)
		case class == classRefused:
			t.Logf("refused: %s: %s", recipe, o.res.Err)
		}
	}
	var kinds []byteKind
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i] < kinds[j] })
	classes := []string{classOK, classDetected, classRefused, classRefusedCrash, classSilent, classMissed}
	var tab strings.Builder
	fmt.Fprintf(&tab, "%-14s", "flip in")
	for _, c := range classes {
		fmt.Fprintf(&tab, " %13s", c)
	}
	for _, k := range kinds {
		fmt.Fprintf(&tab, "\n%-14s", k)
		for _, c := range classes {
			fmt.Fprintf(&tab, " %13d", byKind[k][c])
		}
	}
	t.Logf("outcomes by where the flip landed:\n%s", tab.String())
	line := fmt.Sprintf("corrupt: probes=%d ok-identical=%d detected=%d refused=%d refused-crash=%d silent=%d",
		len(outs), counts[classOK], counts[classDetected], counts[classRefused], counts[classRefusedCrash], counts[classSilent])
	if counts[classMissed] > 0 {
		line += fmt.Sprintf(" missed=%d", counts[classMissed])
	}
	t.Log(line)
	fmt.Println(line)
	for _, g := range groups {
		recipes := g.recipes
		if len(recipes) > 6 {
			recipes = append(recipes[:3:3], fmt.Sprintf("… %d more …", len(recipes)-4), recipes[len(recipes)-1])
		}
		t.Errorf("%d %s: %s\n  recipes: %s", len(g.recipes), plural(len(g.recipes), "probe", "probes"), g.what,
			strings.Join(recipes, "; "))
	}
}

// slowProbe is the wall time past which a probe is logged: they take
// milliseconds.
const slowProbe = 2 * time.Second

// names reports whether a finding names the session and seq of r.
func names(fs []findingKey, r region) bool {
	for _, f := range fs {
		if f.Session == r.session && f.Seq == r.seq {
			return true
		}
	}
	return false
}

// checkSalvage checks the salvage probes (see TestCorrupt).
func checkSalvage(t *testing.T, outs []outcome) {
	t.Helper()
	counts := map[string]int{}
	for _, o := range outs {
		recipe := fmt.Sprintf("byte %d ^= %#02x in %s", o.spec.off, o.spec.mask, o.region)
		res := o.res
		counts[res.Class]++
		switch res.Class {
		case classRefusedCrash:
			t.Logf("refused-crash: %s: %s", recipe, o.crash)
			continue
		case classOpenFailed:
			t.Logf("%s: the store does not open, nothing to salvage: %s", recipe, res.Err)
			continue
		case "salvaged":
		default:
			t.Errorf("%s: salvage failed: %s", recipe, res.Err)
			continue
		}
		sr := res.Salvage
		t.Logf("%s:\n  %s", recipe, strings.Join(append(sr.Warnings, sr.Lines...), "\n  "))
		if sr.Changed {
			t.Errorf("%s: salvage changed the damaged store", recipe)
		}
		for _, p := range sr.Problems {
			t.Errorf("%s: %s", recipe, p)
		}
		for _, u := range res.Unclassified {
			t.Errorf("%s: unclassified error: %s", recipe, u)
		}
		if o.region.kind != kindEventRecord {
			continue
		}
		for _, s := range sr.Sessions {
			switch {
			case s.ID == o.region.session && (s.Copied != o.region.seq || s.Cause != "crc"):
				t.Errorf("%s: session %s copied %d (%s), want the %d events before the damaged record (crc)",
					recipe, s.ID, s.Copied, s.Cause, o.region.seq)
			case s.ID != o.region.session && (s.Lost || s.Cause != "none"):
				t.Errorf("%s: undamaged session %s was not copied whole (%s)", recipe, s.ID, s.Cause)
			}
		}
	}
	line := fmt.Sprintf("corrupt-salvage: probes=%d salvaged=%d no-open=%d refused-crash=%d",
		len(outs), counts["salvaged"], counts[classOpenFailed], counts[classRefusedCrash])
	t.Log(line)
	fmt.Println(line)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
