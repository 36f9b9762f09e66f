package stress

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog/pglog"
)

// Knobs of TestCrash.
const (
	crashSessions   = 4                      // sessions the child drives at once, one goroutine each
	crashMinDelay   = 50 * time.Millisecond  // a kill lands this long after the child starts its work …
	crashMaxDelay   = 400 * time.Millisecond // … at the latest
	crashMaxLines   = 40                     // a line-triggered kill waits for 1..crashMaxLines durable lines
	crashRetireAt   = 400                    // a session this long is retired for a fresh one
	crashStatsEvery = 20 * time.Millisecond  // how often the child reports its commit stats
	// A child forks or imports after one turn in crashStagedEvery/2, in
	// transactions of crashImportBatch events; imports have about
	// crashImportEvents events.
	crashStagedEvery  = 16
	crashImportBatch  = 32
	crashImportEvents = 200
	// Half the children keep this many validator states (of 4+ sessions).
	crashSmallCache = 2
	// crashInjectEvery is the mean pause between asynchronous injections.
	crashInjectEvery = 40 * time.Millisecond
	// A child restarts its loop instance after one turn in
	// crashRestartEvery.
	crashRestartEvery = 12
	// One crashed turn in crashLeaveOpen is left for the next child's
	// loop.Open to close, rather than closed by the parent.
	crashLeaveOpen = 4
	// crashKills is the number of kills of the short form, the default;
	// STRESS_KILLS=200 (or more) is the full proof.
	crashKills = 16
	// crashStagedWait bounds how long a round waits for the child to
	// report a fork and an import, while none has been published yet.
	crashStagedWait = 5 * time.Second
	// crashDurablePerKill is the floor of durable events per kill: a run
	// that averages fewer did not load the store (the children ran
	// ~250 per kill when this was set).
	crashDurablePerKill = 20
	// Three crash children in four write to a write-ahead log of
	// crashSegmentSize segments and apply it every crashApplyMin..
	// crashApplyMax or at crashApplyBytes (childWAL).
	crashSegmentSize = 8 << 10
	crashApplyMin    = 2 * time.Millisecond
	crashApplyMax    = 20 * time.Millisecond
	crashApplyBytes  = 32 << 10
	// A run of at least crashClassKills kills on a bbolt store fails unless
	// each kill class (mid-write, mid-apply, mid-cut) has kills.
	crashClassKills = 50
)

// TestCrash kills a child process that drives the loop on several
// sessions, over and over, and proves after each kill that the store opens
// and verifies, that no event the child was told is durable is missing or
// changed, and that the loop closes the crashed turns and goes on (see the
// package doc).
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash rounds take minutes; skipped under -short")
	}
	runCrash(t, filepath.Join(t.TempDir(), "sessions.db"), envInt(t, "STRESS_KILLS", crashKills), 0)
}

// runCrash runs kills rounds on the store at target (a bbolt file or a
// postgres:// URL); every dbCrashEvery-th round (none when 0) crashes the
// database server mid-load before the kill (see pgcrash_test.go). A run
// that did too little to prove anything fails.
func runCrash(t *testing.T, target string, kills, dbCrashEvery int64) {
	seed := envInt(t, "STRESS_SEED", time.Now().UnixNano())
	t.Logf("seed %d (STRESS_SEED reproduces the choices, not the timing)", seed)
	r := newCrashRun(t, target, seed)
	r.stagedWait = crashStagedWait
	r.dbCrashEvery = dbCrashEvery
	r.run(int(kills))
	if t.Failed() {
		return
	}
	// No vacuous pass: the rounds must have done what they claim to test.
	for _, p := range r.idle() {
		t.Errorf("crash: %s", p)
	}
}

// newCrashRun starts the rounds on a store at path (a bbolt file or a
// postgres:// URL), choosing with seed.
func newCrashRun(t *testing.T, path string, seed int64) *crashRun {
	r := &crashRun{
		t:        t,
		path:     path,
		rng:      rand.New(rand.NewSource(seed)),
		next:     map[string]int64{},
		known:    map[string]bool{},
		leftOpen: map[string]openState{},
		tot:      crashTotals{types: map[string]int64{}},
		minKill:  time.Hour,
		byClass:  map[string]int{},
		killAt:   !pglog.IsURL(path),
	}
	for range crashSessions {
		r.ids = append(r.ids, r.newID())
	}
	return r
}

// run runs kills rounds and reports them.
func (r *crashRun) run(kills int) {
	start := time.Now()
	for round := 0; round < kills && !r.t.Failed(); round++ {
		r.round(round)
	}
	r.report(time.Since(start))
}

// idle says what a run did too little of to prove anything: no durable
// events (or fewer per kill than the floor), no closers, forks, imports
// or compactions. A child that stalls passes every check of a round; only
// these totals tell.
func (r *crashRun) idle() []string {
	c := &r.tot
	var out []string
	for _, n := range []struct {
		what string
		n    int64
	}{{"durable events", c.durable}, {"crash closers written", c.closers}, {"forks", c.forks},
		{"imports", c.imports}, {"compactions", c.types[codec.TypeCompactSummary]}} {
		if n.n <= 0 {
			out = append(out, fmt.Sprintf("no %s in %d kills: the run proved nothing about them", n.what, r.kills))
		}
	}
	if r.killAt && r.kills >= crashClassKills {
		for _, k := range []string{killMidWrite, killMidApply, killMidCut} {
			if r.byClass[k] == 0 {
				out = append(out, fmt.Sprintf("no kill %s of the write-ahead log in %d kills (%s)", k, r.kills, r.classes()))
			}
		}
	}
	if r.kills == 0 {
		out = append(out, "no kills")
	} else if per := float64(c.durable) / float64(r.kills); per < crashDurablePerKill {
		out = append(out, fmt.Sprintf("%.1f durable events per kill, below the floor of %d", per, crashDurablePerKill))
	}
	return out
}

// crashRun is TestCrash's state across rounds.
type crashRun struct {
	t    *testing.T
	path string // the store: a bbolt file, or a postgres:// URL
	// dbCrashEvery makes every dbCrashEvery-th round crash the database
	// server mid-load instead of killing the child; dbCrashes counts them.
	dbCrashEvery, dbCrashes int64
	rng                     *rand.Rand
	ids                     []string // the sessions the next child drives
	gen                     int      // sessions created so far
	// next is each session's length when the parent last checked it: the
	// events after it were written by the last child.
	next map[string]int64
	// known holds every session seen in the store so far.
	known map[string]bool
	// leftOpen holds the sessions whose crashed turn the parent left for
	// the next child's loop.Open to close, with what the crash left open.
	leftOpen map[string]openState

	// power, when set, runs the children on a power-loss mount and cuts
	// the power after each kill (TestPowerCut, power_test.go).
	power powerHooks
	// stagedWait, when not 0, makes a round wait (this long at most) for
	// the child to report a fork and an import before the kill, while
	// none of either has been published: so that a short run proves them
	// too.
	stagedWait time.Duration
	// env is added to every child's environment.
	env []string

	// killAt makes the kill of a share of the rounds wait for the child's
	// next apply round or segment cut (at most crashMaxDelay), so that
	// kills land there; byClass counts the kills by class (roundLog.class),
	// walRounds and walCuts the apply rounds and cuts the children logged.
	killAt                    bool
	byClass                   map[string]int
	walRounds, walCuts        int
	tot                       crashTotals
	kills, byLines, retired   int
	selfExits                 int // children that died of a server crash before the kill
	txs, writes               int64
	minKill, maxKill, sumKill time.Duration
}

// crashTotals are the counts TestCrash reports.
type crashTotals struct {
	durable, lost int64
	// unreported counts events a child stored but died before reporting.
	unreported int64
	// interrupted counts sessions whose last turn a kill left open; of
	// those, openSteps had a step open, pending counts the tool calls
	// left without a result, inert the kills inside a compaction bracket.
	interrupted, openSteps, pending, inert int64
	// closerBatches and closers count what loop.Open appended: the
	// parent's, and a child's (childClosers) for a turn the parent left
	// open; leftOpen counts those.
	closerBatches, closers, childClosers, leftOpen int64
	// failedCompactions counts compact/end with an error, aborted the
	// turns that ended aborted (cancelled during dispatch).
	failedCompactions, aborted  int64
	warnings, verifyRuns, turns int64
	// forks and imports count the staged sessions found published (of
	// which unreported had not been reported yet); unpublished counts the
	// staged sessions a kill left for Open to remove.
	forks, imports, unreportedStaged, unpublished int64
	// types counts the events the children wrote, by type.
	types map[string]int64
}

func (c *crashTotals) add(o *crashTotals) {
	c.durable += o.durable
	c.lost += o.lost
	c.unreported += o.unreported
	c.interrupted += o.interrupted
	c.openSteps += o.openSteps
	c.pending += o.pending
	c.inert += o.inert
	c.closerBatches += o.closerBatches
	c.closers += o.closers
	c.childClosers += o.childClosers
	c.leftOpen += o.leftOpen
	c.failedCompactions += o.failedCompactions
	c.aborted += o.aborted
	c.warnings += o.warnings
	c.verifyRuns += o.verifyRuns
	c.turns += o.turns
	c.forks += o.forks
	c.imports += o.imports
	c.unreportedStaged += o.unreportedStaged
	c.unpublished += o.unpublished
	if c.types == nil {
		c.types = map[string]int64{}
	}
	for k, v := range o.types {
		c.types[k] += v
	}
}

// roundLog is what one child reported before it died.
type roundLog struct {
	durable     map[string]map[int64]string // session → seq → payload hash
	lines       int
	fatal       []string
	txs, writes int64
	staged      map[string]bool // sessions reported forked or imported
	// forked and imported are set once a fork, an import was reported.
	forked, imported bool
	// The child's write-ahead log, as its wal lines tell (walLines):
	// applying is set from an apply round's start to its commit, cutting
	// from a segment cut to the next durable line (the first write into
	// the new segment acknowledged, or another session's); firstCut the
	// same for the child's first segment, which its first write cuts;
	// rounds and cuts count them.
	applying, cutting, firstCut bool
	rounds, cuts                int
}

// Kill classes: what the child was doing when it was killed, as far as
// its lines tell (a line in flight at the kill may be missed). A kill
// mid-cut may also be mid-apply; it counts as mid-cut.
const (
	killMidWrite = "mid-write" // writes in flight, no apply round, no cut
	killMidApply = "mid-apply" // an apply round begun, not committed
	killMidCut   = "mid-cut"   // a cut of a full segment begun, nothing acknowledged since
	// The child's first write cuts its first segment: a kill there is
	// counted apart, since it is also a kill right after the start.
	killMidFirstCut = "mid-first-cut"
)

// class is the kill's class by what the child said last.
func (l *roundLog) class() string {
	switch {
	case l.cutting:
		return killMidCut
	case l.applying:
		return killMidApply
	case l.firstCut:
		return killMidFirstCut
	}
	return killMidWrite
}

func (l *roundLog) add(t *testing.T, line string) {
	f := strings.Fields(line)
	switch {
	case len(f) == 4 && f[0] == "durable":
		seq, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			t.Fatalf("child line %q: %v", line, err)
		}
		m := l.durable[f[1]]
		if m == nil {
			m = map[int64]string{}
			l.durable[f[1]] = m
		}
		if old, ok := m[seq]; ok && old != f[3] {
			t.Errorf("child reported session %s seq %d durable twice, with payload hashes %s and %s", f[1], seq, old, f[3])
		}
		m[seq] = f[3]
		l.lines++
		l.cutting, l.firstCut = false, false
	case len(f) == 2 && f[0] == "wal":
		switch f[1] {
		case "apply-begin":
			l.applying = true
			l.rounds++
		case "apply-commit":
			l.applying = false
		case "cut":
			l.cuts++
			l.cutting, l.firstCut = l.cuts > 1, l.cuts == 1
		}
	case len(f) == 3 && f[0] == "commits":
		l.txs, _ = strconv.ParseInt(f[1], 10, 64)
		l.writes, _ = strconv.ParseInt(f[2], 10, 64)
	case len(f) == 2 && (f[0] == "forked" || f[0] == "imported"):
		l.staged[f[1]] = true
		l.forked = l.forked || f[0] == "forked"
		l.imported = l.imported || f[0] == "imported"
	case len(f) > 0 && f[0] == "fatal":
		l.fatal = append(l.fatal, line)
	}
}

func (r *crashRun) newID() string {
	r.gen++
	return fmt.Sprintf("crash-%04d", r.gen)
}

// round starts a child, kills it, and checks what it left.
func (r *crashRun) round(n int) {
	t := r.t
	store := r.path
	if r.power != nil {
		store = r.power.mount(n)
	}
	app := ""
	if pglog.IsURL(store) {
		// Name the child's connections, to wait for them to end.
		app = fmt.Sprintf("slcrash_%d_%d", os.Getpid(), n)
		store = withParam(t, store, "application_name", app)
	}
	c := startChild(t, "TestCrashChild", "crash", append([]string{
		envStore + "=" + store, envSeed + "=" + strconv.FormatInt(r.rng.Int63(), 10), envIDs + "=" + strings.Join(r.ids, ",")},
		r.env...)...)
	c.expect("start")
	started := time.Now()
	delay := crashMinDelay + time.Duration(r.rng.Int63n(int64(crashMaxDelay-crashMinDelay)))
	byLines := 0
	if r.rng.Intn(2) == 0 {
		byLines = 1 + r.rng.Intn(crashMaxLines)
	}
	// A quarter of the rounds kill at the child's next apply round, an
	// eighth at its next segment cut (after crashMinDelay, and by the
	// delay at the latest).
	at := ""
	if r.killAt {
		switch r.rng.Intn(8) {
		case 0, 1:
			at, byLines, delay = "apply-begin", 0, crashMaxDelay
		case 2:
			at, byLines, delay = "cut", 0, crashMaxDelay
		}
	}
	// While no fork or no import has been published, wait for the child
	// to report both (at most stagedWait).
	staged := r.stagedWait > 0 && (r.tot.forks == 0 || r.tot.imports == 0)
	if staged {
		delay, byLines, at = r.stagedWait, 0, ""
	}
	log := &roundLog{durable: map[string]map[int64]string{}, staged: map[string]bool{}}
	for {
		wait := delay - time.Since(started)
		if wait <= 0 {
			break
		}
		line, ok := c.next(wait)
		if !ok {
			break
		}
		log.add(t, line)
		if staged {
			if log.forked && log.imported {
				break
			}
			continue
		}
		if byLines > 0 && log.lines >= byLines && time.Since(started) >= crashMinDelay {
			break
		}
		if at != "" && line == "wal "+at && (at != "cut" || log.cuts > 1) && time.Since(started) >= crashMinDelay {
			break
		}
	}
	took := time.Since(started)
	dbCrash := r.dbCrashEvery > 0 && int64(n)%r.dbCrashEvery == r.dbCrashEvery-1
	if dbCrash {
		// The server dies under the child's feet; its appends in flight
		// fail, and it may exit by itself before the kill.
		crashServer(t)
		r.dbCrashes++
	}
	for _, line := range c.kill() {
		log.add(t, line)
	}
	if app != "" && !dbCrash {
		// A killed client's last transaction may still commit: the server
		// finishes what it was sent before it notices the client is gone.
		// That is a commit whose answer was lost, as a crash leaves; wait
		// for it to land (or not) before checking.
		waitBackends(t, r.path, app)
	}
	if dbCrash {
		startServer(t, r.path)
		if !c.killedBySignal() {
			r.selfExits++
		}
	} else if len(log.fatal) > 0 {
		t.Fatalf("round %d: the child failed before the kill:\n%s\nstderr:\n%s", n, strings.Join(log.fatal, "\n"), c.stderr.String())
	}
	if !dbCrash && !c.killedBySignal() {
		t.Fatalf("round %d: the child was not killed but ended by itself (%v); stderr:\n%s", n, c.state, c.stderr.String())
	}
	r.kills++
	r.byClass[log.class()]++
	r.walRounds += log.rounds
	r.walCuts += log.cuts
	if byLines > 0 && log.lines >= byLines {
		r.byLines++
	}
	r.minKill, r.maxKill, r.sumKill = min(r.minKill, took), max(r.maxKill, took), r.sumKill+took
	r.txs += log.txs
	r.writes += log.writes
	if r.power != nil && !r.power.cut(n, log) {
		return
	}
	r.check(n, log)
}

// check opens the store the killed child left and proves the round's
// claims on every session it drove, the sessions in parallel. The store
// is opened without fsync: what is under test is the child's writes, and
// the parent's own are never cut short by a kill.
func (r *crashRun) check(n int, log *roundLog) {
	t := r.t
	ctx := context.Background()
	left, err := unpublished(r.path)
	if err != nil {
		t.Fatalf("round %d: %+v", n, err)
	}
	r.tot.unpublished += int64(len(left))
	if len(left) > 0 && pglog.IsURL(r.path) {
		// A staged session stays reserved until its lease runs out
		// (minutes): let that time pass, as far as the database can
		// tell, so that this Open removes it.
		expireLeases(t, r.path)
	}
	opts := storeOptions()
	opts.NoSync = true
	st, err := openTarget(r.path, opts, nil)
	if err != nil {
		t.Fatalf("round %d: open the store after the kill: %+v", n, err)
	}
	defer func() {
		if err := st.Close(); err != nil {
			t.Errorf("round %d: close: %v", n, err)
		}
		// Open removed what the kill left staged.
		left, err := unpublished(r.path)
		if err != nil {
			t.Fatalf("round %d: %+v", n, err)
		}
		if len(left) > 0 {
			t.Errorf("round %d: after a read-write Open, the store still holds unpublished sessions %v", n, left)
		}
	}()
	for id := range log.durable {
		if !contains(r.ids, id) {
			t.Errorf("round %d: the child reported events of session %s, which it was not given", n, id)
		}
	}
	r.checkStaged(ctx, st, n, log)
	checks := make([]sessionCheck, len(r.ids))
	var wg sync.WaitGroup
	for i, id := range r.ids {
		checks[i] = sessionCheck{t: t, st: st, round: n, id: id, from: r.next[id], want: log.durable[id],
			seed: r.rng.Int63(), tot: crashTotals{types: map[string]int64{}}}
		if o, ok := r.leftOpen[id]; ok {
			checks[i].repair = &o
			delete(r.leftOpen, id)
		}
		checks[i].leaveOpen = r.rng.Intn(crashLeaveOpen) == 0
		wg.Add(1)
		go func() {
			defer wg.Done()
			checks[i].err = checks[i].run(ctx)
		}()
	}
	wg.Wait()
	for i := range checks {
		c := &checks[i]
		if c.err != nil {
			t.Fatalf("round %d: session %s: %+v", n, c.id, c.err)
		}
		r.tot.add(&c.tot)
		r.next[c.id] = c.next
		if c.left != nil {
			r.leftOpen[c.id] = *c.left
			continue // a child must close it first
		}
		if c.next >= crashRetireAt {
			r.ids[i] = r.newID()
			r.retired++
		}
	}
}

// report logs the totals, and the one line to quote.
func (r *crashRun) report(took time.Duration) {
	t := r.t
	if r.kills == 0 {
		return
	}
	ratio := 0.0
	if r.txs > 0 {
		ratio = float64(r.writes) / float64(r.txs)
	}
	c := &r.tot
	t.Logf("%d kills survived in %v (%d right after a chosen number of durable lines), each %v–%v after the child started its work (mean %v)",
		r.kills, took.Round(time.Millisecond), r.byLines, r.minKill.Round(time.Millisecond), r.maxKill.Round(time.Millisecond),
		(r.sumKill / time.Duration(r.kills)).Round(time.Millisecond))
	t.Logf("durable events checked %d, lost %d; events stored but not yet reported when the child died %d", c.durable, c.lost, c.unreported)
	t.Logf("turns a kill left open %d (with an open step %d, pending tool calls %d, inside a compaction %d), of which %d were left for the next child's loop.Open to close",
		c.interrupted, c.openSteps, c.pending, c.inert, c.leftOpen)
	t.Logf("closer batches checked %d with %d events, %d of them written by a child", c.closerBatches, c.closers, c.childClosers)
	t.Logf("children wrote: %s", typeCounts(c.types))
	t.Logf("compactions %d (failed attempts %d), aborted turns %d; group commit: %d writes in %d transactions (%.2f per fsync)",
		c.types[codec.TypeCompactSummary], c.failedCompactions, c.aborted, r.writes, r.txs, ratio)
	t.Logf("forks %d, imports %d (%d done but not yet reported at the kill); staged sessions a kill left unpublished, removed by Open: %d",
		c.forks, c.imports, c.unreportedStaged, c.unpublished)
	t.Logf("loop sessions %d (%d retired), verify runs %d, structure warnings %d, turns after a crash %d",
		r.gen, r.retired, c.verifyRuns, c.warnings, c.turns)
	line := fmt.Sprintf("crash: kills=%d durable=%d lost=%d closers=%d closer_batches=%d open_turns=%d child_closers=%d pending=%d open_steps=%d inert_compactions=%d"+
		" compactions=%d failed_compactions=%d events=%d writes_per_tx=%.2f forks=%d imports=%d unpublished_removed=%d warnings=%d sessions=%d seconds=%.0f",
		r.kills, c.durable, c.lost, c.closers, c.closerBatches, c.interrupted, c.childClosers, c.pending, c.openSteps, c.inert,
		c.types[codec.TypeCompactSummary], c.failedCompactions, sum(c.types), ratio, c.forks, c.imports, c.unpublished,
		c.warnings, r.gen, took.Seconds())
	if r.killAt {
		line += " " + r.classes()
	}
	if r.dbCrashes > 0 {
		line += fmt.Sprintf(" db_crashes=%d child_self_exits=%d", r.dbCrashes, r.selfExits)
	}
	if pglog.IsURL(r.path) {
		line = "postgres " + line
	}
	t.Log(line)
	if p := os.Getenv("STRESS_REPORT"); p != "" {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = fmt.Fprintln(f, line)
			err = errors.CombineErrors(err, f.Close())
		}
		if err != nil {
			t.Errorf("STRESS_REPORT: %v", err)
		}
	}
}

// classes says how the kills landed in the write-ahead log, for the
// summary line.
func (r *crashRun) classes() string {
	return fmt.Sprintf("kills_mid_write=%d kills_mid_apply=%d kills_mid_cut=%d kills_mid_first_cut=%d apply_rounds=%d segment_cuts=%d",
		r.byClass[killMidWrite], r.byClass[killMidApply], r.byClass[killMidCut], r.byClass[killMidFirstCut], r.walRounds, r.walCuts)
}
