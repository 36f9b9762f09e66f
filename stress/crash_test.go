package stress

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/loggen"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/verify"
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
	crashSmallCache   = 2
	// crashInjectEvery is the mean pause between asynchronous injections.
	crashInjectEvery = 40 * time.Millisecond
	// One crashed turn in crashLeaveOpen is left for the next child's
	// loop.Open to close, rather than closed by the parent.
	crashLeaveOpen = 4
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
	kills := envInt(t, "STRESS_KILLS", 200)
	seed := envInt(t, "STRESS_SEED", time.Now().UnixNano())
	t.Logf("seed %d (STRESS_SEED reproduces the choices, not the timing)", seed)
	r := &crashRun{
		t:        t,
		path:     filepath.Join(t.TempDir(), "sessions.db"),
		rng:      rand.New(rand.NewSource(seed)),
		next:     map[string]int64{},
		known:    map[string]bool{},
		leftOpen: map[string]openState{},
		tot:      crashTotals{types: map[string]int64{}},
		minKill:  time.Hour,
	}
	for range crashSessions {
		r.ids = append(r.ids, r.newID())
	}
	start := time.Now()
	for round := 0; round < int(kills) && !t.Failed(); round++ {
		r.round(round)
	}
	r.report(time.Since(start))
}

// TestCrashChild is the child process of TestCrash: it drives the loop on
// the sessions it is given until it is killed, reporting every durable
// event on stdout. Run directly, it skips.
func TestCrashChild(t *testing.T) {
	if os.Getenv(envRole) != "crash" {
		t.Skip("the child process of TestCrash; runs only when TestCrash starts it")
	}
	seed, err := strconv.ParseInt(os.Getenv(envSeed), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	ids := strings.Split(os.Getenv(envIDs), ",")
	opts := storeOptions()
	opts.ImportBatch = crashImportBatch
	if seed%2 == 0 {
		// Half the children keep too few validator states for their
		// sessions, so appends keep rebuilding them from the store.
		opts.ValidatorCache = crashSmallCache
	}
	st, err := eventlog.Open(os.Getenv(envStore), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d := &durable{Log: st, w: os.Stdout}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watchStdin(cancel)
	if err := d.say([]byte("start\n")); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	go func() { // commit stats, so the parent can tell that group commits happened
		tick := time.NewTicker(crashStatsEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				tx, writes := st.CommitStats()
				_ = d.say(fmt.Appendf(nil, "commits %d %d\n", tx, writes))
			}
		}
	}()
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := drive(ctx, d, newWorkload(id, seed+int64(i), false /* calm */))
			if err != nil && ctx.Err() == nil {
				// Say it on stdout too: the parent's kill may win the
				// race with this exit.
				_ = d.say(fmt.Appendf(nil, "fatal %s\n", strings.ReplaceAll(fmt.Sprintf("%+v", err), "\n", " | ")))
				fmt.Fprintf(os.Stderr, "session %s: %+v\n", id, err)
				os.Exit(3)
			}
		}()
	}
	wg.Wait()
	close(stop)
}

// drive runs turns of w over d until ctx is done; after one turn in
// crashStagedEvery it forks the session at its last turn/end, or imports
// a generated session, both staged in several transactions. Meanwhile
// another goroutine injects context and steers at random moments, as a
// host's plugins do: queued during a turn, a turn of its own between.
func drive(ctx context.Context, d *durable, w *workload) error {
	if err := w.open(ctx, d); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		for {
			pause := time.NewTimer(crashInjectEvery/2 + time.Duration(w.rng.Intn(int(crashInjectEvery))))
			select {
			case <-ctx.Done():
				pause.Stop()
				return
			case <-pause.C:
			}
			var err error
			w.quiet.RLock()
			if w.rng.Intn(4) == 0 {
				err = w.l.Steer(loop.Text("async steer: "+w.words(3)), loop.User)
			} else {
				err = w.l.Inject(ctx, loop.Text("async: "+w.words(6)), loop.Plugin("async"))
			}
			w.quiet.RUnlock()
			if err != nil && ctx.Err() == nil {
				cancel(errors.Wrapf(err, "session %s: async inject", errors.Safe(w.id)))
				return
			}
		}
	}()
	for ctx.Err() == nil {
		if _, err := w.turn(ctx); err != nil {
			return err
		}
		switch w.rng.Intn(crashStagedEvery) {
		case 0:
			child := fmt.Sprintf("%s%s%x", w.id, forkMark, w.rng.Int63())
			if err := d.fork(ctx, w.id, w.l.Next()-1, child); err != nil {
				return err
			}
		case 1:
			if err := d.importGenerated(ctx, w.rng.Int63()); err != nil {
				return err
			}
		}
	}
	if err := context.Cause(ctx); err != context.Canceled {
		return err // the injector failed
	}
	return nil
}

// Names of the sessions a crash child forks and imports.
const (
	forkMark     = ".fork-" // CHILD = SOURCE + forkMark + hex
	importPrefix = "imp-"   // ID = importPrefix + the loggen seed, decimal
)

// fork forks source at its turn/end at seq at into child, then reports
//
//	forked CHILD
func (d *durable) fork(ctx context.Context, source string, at int64, child string) error {
	h := codec.NewSessionHeader(child, float64(time.Now().UnixMilli()), "/work/"+child, source, at+1)
	if err := d.Log.Fork(ctx, source, at, h); err != nil {
		return errors.Wrapf(err, "fork %s at %d", errors.Safe(source), errors.Safe(at))
	}
	return d.say(fmt.Appendf(nil, "forked %s\n", child))
}

// importGenerated imports the session loggen generates from seed, as
// importPrefix+seed, then reports
//
//	imported ID
func (d *durable) importGenerated(ctx context.Context, seed int64) error {
	id := importPrefix + strconv.FormatInt(seed, 10)
	h, src, err := generated(id, seed)
	if err != nil {
		return err
	}
	if _, err := d.Log.Import(ctx, h, src); err != nil {
		return errors.Wrapf(err, "import %s", errors.Safe(id))
	}
	return d.say(fmt.Appendf(nil, "imported %s\n", id))
}

// generated returns the session loggen generates from seed, under id: its
// header and a scanner over its events.
func generated(id string, seed int64) (codec.SessionHeader, *codec.Scanner, error) {
	var buf bytes.Buffer
	err := loggen.Generate(seed, loggen.Options{Events: crashImportEvents}, func(line []byte) error {
		buf.Write(line)
		return buf.WriteByte('\n')
	})
	if err != nil {
		return codec.SessionHeader{}, nil, err
	}
	sc := codec.NewScanner(&buf, codec.Limits{})
	orig, err := sc.Header()
	if err != nil {
		return codec.SessionHeader{}, nil, err
	}
	return codec.NewSessionHeader(id, orig.CreatedAt, orig.Cwd, "", 0), sc, nil
}

// durable is the store the crash child hands the loop: the real Log, whose
// Append, once the Log has returned nil (the batch is committed and
// synced), writes one line per event of the batch to w:
//
//	durable SESSION SEQ SHA256(payload)
//
// A batch's lines go out in one write, after the append, so every line the
// parent reads names an event the store acknowledged.
type durable struct {
	*eventlog.Log
	mu sync.Mutex
	w  io.Writer
}

func (d *durable) Append(ctx context.Context, session string, events []codec.Event) error {
	if err := d.Log.Append(ctx, session, events); err != nil {
		return err
	}
	var b []byte
	for i := range events {
		sum := sha256.Sum256(events[i].Raw)
		b = fmt.Appendf(b, "durable %s %d %x\n", session, events[i].Seq, sum)
	}
	return d.say(b)
}

// say writes b in one write.
func (d *durable) say(b []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, err := d.w.Write(b)
	return errors.Wrap(err, "stress: report to the parent")
}

var _ loop.Store = (*durable)(nil)

// crashRun is TestCrash's state across rounds.
type crashRun struct {
	t    *testing.T
	path string
	rng  *rand.Rand
	ids  []string // the sessions the next child drives
	gen  int      // sessions created so far
	// next is each session's length after the parent's last turn on it:
	// the events after it were written by the last child.
	next map[string]int64
	// known holds every session seen in the store so far.
	known map[string]bool
	// leftOpen holds the sessions whose crashed turn the parent left for
	// the next child's loop.Open to close, with what the crash left open.
	leftOpen map[string]openState

	tot                       crashTotals
	kills, byLines, retired   int
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
	case len(f) == 3 && f[0] == "commits":
		l.txs, _ = strconv.ParseInt(f[1], 10, 64)
		l.writes, _ = strconv.ParseInt(f[2], 10, 64)
	case len(f) == 2 && (f[0] == "forked" || f[0] == "imported"):
		l.staged[f[1]] = true
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
	c := startChild(t, "TestCrashChild", "crash",
		envStore+"="+r.path, envSeed+"="+strconv.FormatInt(r.rng.Int63(), 10), envIDs+"="+strings.Join(r.ids, ","))
	c.expect("start")
	started := time.Now()
	delay := crashMinDelay + time.Duration(r.rng.Int63n(int64(crashMaxDelay-crashMinDelay)))
	byLines := 0
	if r.rng.Intn(2) == 0 {
		byLines = 1 + r.rng.Intn(crashMaxLines)
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
		if byLines > 0 && log.lines >= byLines && time.Since(started) >= crashMinDelay {
			break
		}
	}
	took := time.Since(started)
	for _, line := range c.kill() {
		log.add(t, line)
	}
	if len(log.fatal) > 0 {
		t.Fatalf("round %d: the child failed before the kill:\n%s\nstderr:\n%s", n, strings.Join(log.fatal, "\n"), c.stderr.String())
	}
	if !c.killedBySignal() {
		t.Fatalf("round %d: the child was not killed but ended by itself (%v); stderr:\n%s", n, c.state, c.stderr.String())
	}
	r.kills++
	if byLines > 0 && log.lines >= byLines {
		r.byLines++
	}
	r.minKill, r.maxKill, r.sumKill = min(r.minKill, took), max(r.maxKill, took), r.sumKill+took
	r.txs += log.txs
	r.writes += log.writes
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
	opts := storeOptions()
	opts.NoSync = true
	st, err := eventlog.Open(r.path, opts)
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

// checkStaged checks the sessions the child forked or imported: each one
// reported is published, and each one published is whole: a fork holds
// exactly its source's events up to the fork point, an import exactly the
// generated session (same chain hash); both verify clean.
func (r *crashRun) checkStaged(ctx context.Context, st *eventlog.Log, n int, log *roundLog) {
	t := r.t
	ids, err := st.SessionIDs(ctx)
	if err != nil {
		t.Fatalf("round %d: %+v", n, err)
	}
	published := map[string]bool{}
	for _, id := range ids {
		published[id] = true
		if r.known[id] || contains(r.ids, id) {
			r.known[id] = true
			continue
		}
		r.known[id] = true
		c := &sessionCheck{t: t, st: st, round: n, id: id, tot: crashTotals{types: map[string]int64{}}}
		switch {
		case strings.Contains(id, forkMark):
			c.err = c.fork(ctx)
			c.tot.forks++
		case strings.HasPrefix(id, importPrefix):
			c.err = c.imported(ctx)
			c.tot.imports++
		default:
			c.errorf("the store holds a session nobody created")
		}
		if c.err != nil {
			t.Fatalf("round %d: session %s: %+v", n, id, c.err)
		}
		if !log.staged[id] {
			c.tot.unreportedStaged++
		}
		r.tot.add(&c.tot)
	}
	for id := range log.staged {
		if !published[id] {
			t.Errorf("round %d: session %s was reported forked or imported, but the store does not hold it", n, id)
		}
	}
}

// fork checks a fork child: its events are its source's up to the fork
// point (seedLength), byte for byte, and nothing more; it verifies clean.
func (c *sessionCheck) fork(ctx context.Context) error {
	head, err := c.st.Head(ctx, c.id)
	if err != nil {
		return err
	}
	h := head.Header
	if head.Next != h.SeedLength {
		c.errorf("a fork of %s with seedLength %d holds %d events", h.ParentSession, h.SeedLength, head.Next)
	}
	mine, err := payloadHashes(ctx, c.st, c.id)
	if err != nil {
		return err
	}
	theirs, err := payloadHashes(ctx, c.st, h.ParentSession)
	if err != nil {
		return err
	}
	for i := range mine {
		if i >= len(theirs) || mine[i] != theirs[i] {
			c.errorf("seq %d differs from the same seq of its source %s", i, h.ParentSession)
			break
		}
	}
	return c.verify(ctx, "a fork after the kill")
}

// imported checks an imported session: its head's event count and chain
// hash are those of the session loggen generates from the seed in its id,
// and it verifies clean.
func (c *sessionCheck) imported(ctx context.Context) error {
	seed, err := strconv.ParseInt(strings.TrimPrefix(c.id, importPrefix), 10, 64)
	if err != nil {
		return err
	}
	h, src, err := generated(c.id, seed)
	if err != nil {
		return err
	}
	chain := eventlog.ChainStart(codec.EncodeRecord(nil, h.Raw))
	var events int64
	for {
		ev, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		chain = eventlog.ChainNext(chain, ev.Raw)
		events++
	}
	head, err := c.st.Head(ctx, c.id)
	if err != nil {
		return err
	}
	if head.Next != events || head.Chain != chain {
		c.errorf("holds %d events with chain %x; the imported session has %d with chain %x", head.Next, head.Chain, events, chain)
	}
	return c.verify(ctx, "an import after the kill")
}

// payloadHashes returns the SHA-256 of every stored event payload of a
// session, in seq order.
func payloadHashes(ctx context.Context, st *eventlog.Log, id string) ([][32]byte, error) {
	var out [][32]byte
	err := st.Records(ctx, id, 0, func(seq int64, rec []byte) error {
		payload, err := codec.DecodeRecord(rec)
		if err != nil {
			return err
		}
		out = append(out, sha256.Sum256(payload))
		return nil
	})
	return out, err
}

// unpublished lists the sessions of the store at path that were staged
// (by an import or a fork) and never published: a session bucket without a
// head record, per the layout in eventlog's package doc. It reads the file
// with bbolt directly, read-only.
func unpublished(path string) ([]string, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 30 * time.Second})
	if err != nil {
		return nil, errors.Wrapf(err, "open %s with bbolt", errors.Safe(path))
	}
	var out []string
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("sessions"))
		if b == nil {
			return nil
		}
		return b.ForEachBucket(func(k []byte) error {
			if b.Bucket(k).Get([]byte("head")) == nil {
				out = append(out, string(k))
			}
			return nil
		})
	})
	return out, errors.CombineErrors(err, db.Close())
}

// sessionCheck checks one session after a kill: it verifies, holds every
// event reported durable, gets the right crash closers from loop.Open,
// takes one more turn and verifies again. Failures of the claims are
// t.Errorf; err is for the checks that could not run.
type sessionCheck struct {
	t     *testing.T
	st    *eventlog.Log
	round int
	id    string
	from  int64            // the session's length before the child's round
	want  map[int64]string // the events reported durable: seq → payload hash
	seed  int64
	// repair is what the last crash left open, when the parent left it for
	// this round's child to close; leaveOpen asks to leave this crash's
	// open turn the same way, and left is then what it left open.
	repair    *openState
	leaveOpen bool
	left      *openState
	tot       crashTotals
	next      int64 // the session's length after the check
	err       error
}

func (c *sessionCheck) errorf(format string, args ...any) {
	c.t.Errorf("round %d: session %s: %s", c.round, c.id, fmt.Sprintf(format, args...))
}

func (c *sessionCheck) run(ctx context.Context) error {
	head, err := c.st.Head(ctx, c.id)
	if errors.Is(err, eventlog.ErrNotFound) {
		// Killed before the loop created it.
		for _, seq := range sortedKeys(c.want) {
			c.errorf("seq %d was reported durable, but the session does not exist", seq)
			c.tot.lost++
		}
		return nil
	}
	if err != nil {
		return err
	}
	if err := c.verify(ctx, "after the kill"); err != nil {
		return err
	}

	// Every durable event is there, with its payload.
	c.tot.durable += int64(len(c.want))
	left := make(map[int64]string, len(c.want))
	for seq, h := range c.want {
		left[seq] = h
	}
	err = c.st.Records(ctx, c.id, 0, func(seq int64, rec []byte) error {
		h, ok := left[seq]
		if !ok {
			return nil
		}
		delete(left, seq)
		payload, err := codec.DecodeRecord(rec)
		if err != nil {
			return err
		}
		if got := sha256.Sum256(payload); hex.EncodeToString(got[:]) != h {
			c.errorf("seq %d: stored payload hash %x, the child reported %s durable", seq, got, h)
			c.tot.lost++
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, seq := range sortedKeys(left) {
		c.errorf("seq %d was reported durable but is not stored (the session has %d events)", seq, head.Next)
		c.tot.lost++
	}

	// What the kill left: counted, and the closers it calls for.
	evs, err := readSession(ctx, c.st, c.id, 0)
	if err != nil {
		return err
	}
	for i := c.from; i < int64(len(evs)); i++ {
		c.count(&evs[i])
		if _, ok := c.want[i]; !ok {
			c.tot.unreported++
		}
	}
	if c.repair != nil && int64(len(evs)) > c.from {
		// The child's loop.Open closed the turn the parent left open:
		// its first events are the closers.
		want := int64(len(c.repair.pending) + 1)
		if c.repair.inStep {
			want++
		}
		end := min(c.from+want, int64(len(evs)))
		before := c.tot.closers
		if err := c.checkClosers(*c.repair, evs[c.from:end]); err != nil {
			return err
		}
		c.tot.childClosers += c.tot.closers - before
	}
	o := openAt(evs)
	if o.inTurn {
		c.tot.interrupted++
	}
	if o.inStep {
		c.tot.openSteps++
	}
	c.tot.pending += int64(len(o.pending))
	if len(evs) > 0 && evs[len(evs)-1].Type == codec.TypeCompactStart {
		c.tot.inert++
	}
	if o.inTurn && c.leaveOpen {
		c.tot.leftOpen++
		c.left = &o
		c.next = int64(len(evs))
		return nil
	}

	w := newWorkload(c.id, c.seed, true /* calm */)
	if err := w.open(ctx, c.st); err != nil {
		return err
	}
	closers, err := readSession(ctx, c.st, c.id, int64(len(evs)))
	if err != nil {
		return err
	}
	if err := c.checkClosers(o, closers); err != nil {
		return err
	}

	out, err := w.turn(ctx)
	if err != nil {
		return err
	}
	if out.Reason != "completed" {
		c.errorf("the turn after the crash ended %s (%s %s)", out.Reason, out.Code, out.Message)
	}
	c.tot.turns++
	if err := c.verify(ctx, "after the crash closers and one more turn"); err != nil {
		return err
	}
	head, err = c.st.Head(ctx, c.id)
	c.next = head.Next
	return err
}

// checkClosers checks the events loop.Open appended after a kill left o:
// none when no turn was open; else, per SPEC §7, a tool/result for each
// pending call (isError, InterruptedError, citing its tool/call when one
// was logged), step/end if a step was open, then turn/end interrupted, all
// with the time of the last event before them.
func (c *sessionCheck) checkClosers(o openState, got []codec.Event) error {
	if !o.inTurn {
		if len(got) != 0 {
			c.errorf("no turn was open, but loop.Open appended %d events %v", len(got), types(got))
		}
		return nil
	}
	want := len(o.pending) + 1
	if o.inStep {
		want++
	}
	if len(got) != want {
		c.errorf("loop.Open appended %d closers %v, want %d (pending calls %d, open step %v)",
			len(got), types(got), want, len(o.pending), o.inStep)
		return nil
	}
	c.tot.closerBatches++
	c.tot.closers += int64(len(got))
	for i := range got {
		ev := &got[i]
		if ev.Time != o.lastTime {
			c.errorf("seq %d: closer time %v, want the last event's %v", ev.Seq, ev.Time, o.lastTime)
		}
		js, err := ev.AppendJSON(nil)
		if err != nil {
			return err
		}
		switch {
		case i < len(o.pending):
			p := o.pending[i]
			tr, ok := ev.Data.(*codec.ToolResult)
			var wantSources []int64
			if p.callSeq >= 0 {
				wantSources = []int64{p.callSeq}
			}
			switch {
			case !ok:
				c.errorf("seq %d: closer %d is %s, want the tool/result of call %s", ev.Seq, i, ev.Type, p.id)
			case tr.CallID != p.id || tr.Turn != o.turn || tr.Step != o.step || !tr.IsError:
				c.errorf("seq %d: closer %s, want an error result of %d.%d for call %s", ev.Seq, js, o.turn, o.step, p.id)
			case !strings.Contains(string(js), `"error":{"name":"InterruptedError","code":"interrupted"}`) ||
				!strings.Contains(string(js), loop.InterruptedNotice):
				c.errorf("seq %d: closer %s lacks the interrupted error or notice", ev.Seq, js)
			case ev.HasSources != (wantSources != nil) || fmt.Sprint(ev.Sources) != fmt.Sprint(wantSources):
				c.errorf("seq %d: closer cites %v (present %v), want %v", ev.Seq, ev.Sources, ev.HasSources, wantSources)
			}
		case i == len(got)-1:
			if te, ok := ev.Data.(*codec.TurnEnd); !ok || te.Turn != o.turn || te.Reason != "interrupted" {
				c.errorf("seq %d: last closer %s, want turn/end %d interrupted", ev.Seq, js, o.turn)
			}
		default:
			if se, ok := ev.Data.(*codec.StepEnd); !ok || se.Turn != o.turn || se.Step != o.step {
				c.errorf("seq %d: closer %s, want step/end %d.%d", ev.Seq, js, o.turn, o.step)
			}
		}
	}
	return nil
}

// verify runs verify on the session: structure warnings are counted (a
// crash leaves an open turn), any other finding fails the test.
func (c *sessionCheck) verify(ctx context.Context, when string) error {
	res, err := verify.Session(ctx, c.st, c.id, verify.Options{})
	if err != nil {
		return errors.Wrapf(err, "verify %s", errors.Safe(when))
	}
	c.tot.verifyRuns++
	for _, f := range res.Findings {
		if f.Warning {
			c.tot.warnings++
			c.t.Logf("round %d: %s: warning %s", c.round, when, f)
			continue
		}
		c.errorf("%s: %s", when, f)
	}
	return nil
}

// count adds a child-written event to the totals.
func (c *sessionCheck) count(ev *codec.Event) {
	c.tot.types[ev.Type]++
	switch d := ev.Data.(type) {
	case *codec.CompactEnd:
		if d.HasError {
			c.tot.failedCompactions++
		}
	case *codec.TurnEnd:
		if d.Reason == "aborted" {
			c.tot.aborted++
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

// openState is what a crash leaves open at the end of a log, computed
// here from SPEC §7's words, independently of the loop: the open turn and
// step, and the pending calls (the tool-call blocks of the open step's
// assistant/message that have no tool/result; reset at step/end,
// turn/start and turn/end).
type openState struct {
	inTurn, inStep bool
	turn, step     int64
	pending        []pendingCall
	lastTime       float64
}

type pendingCall struct {
	id      string
	callSeq int64 // -1: no tool/call logged
}

func openAt(evs []codec.Event) openState {
	var o openState
	for i := range evs {
		o.lastTime = evs[i].Time
		switch d := evs[i].Data.(type) {
		case *codec.TurnStart:
			o = openState{inTurn: true, turn: d.Turn, lastTime: evs[i].Time}
		case *codec.TurnEnd:
			o = openState{lastTime: evs[i].Time}
		case *codec.StepStart:
			o.inStep, o.step, o.pending = true, d.Step, nil
		case *codec.StepEnd:
			o.inStep, o.pending = false, nil
		case *codec.AssistantMessage:
			for _, b := range d.Content.Blocks {
				if b.Type == codec.BlockToolCall {
					o.pending = append(o.pending, pendingCall{id: b.ID, callSeq: -1})
				}
			}
		case *codec.ToolCall:
			for j := range o.pending {
				if o.pending[j].id == d.CallID && o.pending[j].callSeq < 0 {
					o.pending[j].callSeq = evs[i].Seq
					break
				}
			}
		case *codec.ToolResult:
			for j := range o.pending {
				if o.pending[j].id == d.CallID {
					o.pending = append(o.pending[:j:j], o.pending[j+1:]...)
					break
				}
			}
		}
	}
	return o
}

// readSession returns the session's events from seq from on.
func readSession(ctx context.Context, st *eventlog.Log, id string, from int64) ([]codec.Event, error) {
	it, err := st.Scan(ctx, id, from)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var evs []codec.Event
	for {
		ev, err := it.Next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return nil, err
		}
		evs = append(evs, ev)
	}
}

func envInt(t testing.TB, name string, def int64) int64 {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func sortedKeys(m map[int64]string) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func types(evs []codec.Event) []string {
	out := make([]string, len(evs))
	for i := range evs {
		out[i] = evs[i].Type
	}
	return out
}

func typeCounts(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}
