package stress

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/pgtest"
	"github.com/sessionlog/sessionlog/verify"
)

// Knobs of TestFleetPostgres.
const (
	fleetWriters  = 4                     // writer processes alive at once
	fleetShared   = 3                     // sessions every writer appends to, racing
	fleetMinPause = 30 * time.Millisecond // a kill comes this long after the last one …
	fleetMaxPause = 150 * time.Millisecond
	// fleetChildLimit is a writer's -test.timeout: past .ci/pg.sh's whole
	// step, since a writer lives until it is killed or its stdin closes.
	fleetChildLimit = 60 * time.Minute
	envSlot         = "SESSIONLOG_STRESS_SLOT"
)

// fleetAck is a batch a writer was told is stored.
type fleetAck struct {
	session string
	first   int64
	n       int
	hash    string // SHA-256 over the batch's payloads, hex
}

// TestFleetPostgres: fleetWriters OS processes append whole turns through
// one PostgreSQL database, each to a session of its own and to fleetShared
// shared sessions, where they race for the same next seq; the parent
// SIGKILLs one of them at random moments and starts a replacement, which
// carries on the killed one's own session. After every kill it proves the
// claims of the package doc for what was appended since the last kill
// (fleetChecker, which carries the chain hash and the validation state
// forward), and at the end for every session from seq 0 (fleetFullCheck),
// so a run costs about the same per kill however many came before.
// STRESS_FLEET_KILLS sets the number of kills (default 8, 5 under -short;
// .ci/pg.sh runs 200).
func TestFleetPostgres(t *testing.T) {
	kills := envInt(t, "STRESS_FLEET_KILLS", 8)
	if testing.Short() {
		kills = envInt(t, "STRESS_FLEET_KILLS", 5)
	}
	u, _ := pgtest.Schema(t)
	ctx := context.Background()
	st, err := openTarget(u, storeOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ids []string
	for i := range fleetShared {
		ids = append(ids, fmt.Sprintf("shared-%d", i))
	}
	for i := range fleetWriters {
		ids = append(ids, fmt.Sprintf("own-%d", i))
	}
	for _, id := range ids {
		if err := st.Create(ctx, codec.NewSessionHeader(id, 1.7e12, "/work", "", 0)); err != nil {
			t.Fatal(err)
		}
	}
	seed := envInt(t, "STRESS_SEED", time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	start := func(slot int) *child {
		// A writer may outlive many kills of the others, each followed
		// by a check that grows with the sessions; it ends by itself when
		// its stdin closes, so it gets the whole test's time.
		c := startChildFor(t, fleetChildLimit, "TestFleetChild", "fleet", envStore+"="+u, envSlot+"="+strconv.Itoa(slot),
			envSeed+"="+strconv.FormatInt(rng.Int63(), 10))
		c.expect("start")
		return c
	}
	writers := make([]*child, fleetWriters)
	for i := range writers {
		writers[i] = start(i)
	}
	acked := map[string]map[int64]fleetAck{} // session → first → ack
	checker := newFleetChecker()
	var nAcked, nConflicts, nEvents int64
	read := func(line string) {
		f := strings.Fields(line)
		switch {
		case len(f) == 5 && f[0] == "acked":
			first, _ := strconv.ParseInt(f[2], 10, 64)
			n, _ := strconv.Atoi(f[3])
			a := fleetAck{session: f[1], first: first, n: n, hash: f[4]}
			if acked[a.session] == nil {
				acked[a.session] = map[int64]fleetAck{}
			}
			if prev, ok := acked[a.session][first]; ok {
				t.Fatalf("session %s seq %d was acknowledged twice: %+v and %+v", a.session, first, prev, a)
			}
			acked[a.session][first] = a
			checker.acked(a)
			nAcked++
			nEvents += int64(n)
		case len(f) == 1 && f[0] == "conflict":
			nConflicts++
		case len(f) > 0 && f[0] == "fatal":
			t.Fatalf("a writer failed with an error other than a conflict: %s", line)
		}
	}
	drain := func(c *child) {
		for {
			select {
			case line, ok := <-c.lines:
				if !ok {
					return
				}
				read(line)
			default:
				return
			}
		}
	}
	begin := time.Now()
	var checking time.Duration
	for k := int64(0); k < kills && !t.Failed(); k++ {
		pause := fleetMinPause + time.Duration(rng.Int63n(int64(fleetMaxPause-fleetMinPause)))
		deadline := time.Now().Add(pause)
		for time.Now().Before(deadline) {
			for _, c := range writers {
				drain(c)
			}
			time.Sleep(5 * time.Millisecond)
		}
		slot := rng.Intn(fleetWriters)
		for _, line := range writers[slot].kill() {
			read(line)
		}
		if !writers[slot].killedBySignal() {
			t.Fatalf("kill %d: writer %d ended by itself: %v\n%s", k, slot, writers[slot].state, writers[slot].stderr.String())
		}
		began := time.Now()
		if err := checker.check(ctx, st, ids); err != nil {
			t.Fatalf("kill %d: %+v", k, err)
		}
		fleetReopen(t, ctx, st, checker, fmt.Sprintf("own-%d", slot))
		checking += time.Since(began)
		writers[slot] = start(slot)
	}
	for _, c := range writers {
		for _, line := range c.kill() {
			read(line)
		}
	}
	if err := checker.check(ctx, st, ids); err != nil {
		t.Fatalf("after the last kill: %+v", err)
	}
	began := time.Now()
	fleetFullCheck(t, ctx, st, ids, acked)
	full := time.Since(began)
	if nAcked == 0 || nConflicts == 0 {
		t.Fatalf("no real work: %d batches acknowledged, %d conflicts", nAcked, nConflicts)
	}
	line := fmt.Sprintf("fleet: kills=%d writers=%d acked_batches=%d acked_events=%d conflicts=%d lost=0 seconds=%.0f "+
		"check_ms_per_kill=%d full_check_ms=%d",
		kills, fleetWriters, nAcked, nEvents, nConflicts, time.Since(begin).Seconds(),
		checking.Milliseconds()/max(kills, 1), full.Milliseconds())
	t.Log(line)
	report(t, line)
}

// fleetFullCheck proves, with writers still running, from seq 0: every
// acknowledged batch is stored at its seq byte for byte; every session
// holds whole turns only (each contested seq went to one batch); and
// every session verifies clean.
func fleetFullCheck(t *testing.T, ctx context.Context, st store, ids []string, acked map[string]map[int64]fleetAck) {
	t.Helper()
	for _, id := range ids {
		evs, err := readSession(ctx, st, id, 0)
		if err != nil {
			t.Fatalf("read %s: %+v", id, err)
		}
		if _, err := splitBatches(evs); err != nil {
			t.Fatalf("session %s: %+v", id, err)
		}
		for first, a := range acked[id] {
			if first+int64(a.n) > int64(len(evs)) {
				t.Fatalf("session %s: the batch acknowledged at seq %d (%d events) is missing: the session has %d", id, first, a.n, len(evs))
			}
			h := sha256.New()
			for _, ev := range evs[first : first+int64(a.n)] {
				h.Write(ev.Raw)
			}
			if fmt.Sprintf("%x", h.Sum(nil)) != a.hash {
				t.Fatalf("session %s: the batch acknowledged at seq %d differs from what is stored", id, first)
			}
		}
		res, err := verify.Session(ctx, st, id, verify.Options{Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Findings) > 0 {
			t.Fatalf("session %s: verify: %v", id, res.Findings)
		}
	}
}

// fleetReopen proves that loop.Open of the killed writer's own session
// appends nothing but whole turns (none: whole turns leave no turn open
// to close; the killed writer's last batch may commit on the server after
// the kill, which the checker's next look at the session takes in and
// checks like any other).
func fleetReopen(t *testing.T, ctx context.Context, st store, checker *fleetChecker, killed string) {
	t.Helper()
	w := newWorkload(killed, 1, true)
	if err := w.open(ctx, st); err != nil {
		t.Fatalf("loop.Open %s: %+v", killed, err)
	}
	if err := w.loop().Dispose(ctx); err != nil {
		t.Fatalf("dispose %s: %+v", killed, err)
	}
	if err := checker.advance(ctx, st, killed); err != nil {
		t.Fatalf("loop.Open of %s after the kill appended something other than whole turns: %+v", killed, err)
	}
}

// TestFleetChild is a writer of TestFleetPostgres: it appends whole turns
// to its own session and the shared ones until it is killed, printing
//
//	acked SESSION FIRST N SHA256(payloads)   after each append stored
//	conflict                                 after each one refused as a conflict
//
// and "fatal …" (then exiting) on any other error. Run directly, it skips.
func TestFleetChild(t *testing.T) {
	if os.Getenv(envRole) != "fleet" {
		t.Skip("a writer process of TestFleetPostgres; runs only when it starts it")
	}
	seed, err := strconv.ParseInt(os.Getenv(envSeed), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	slot := os.Getenv(envSlot)
	st, err := openTarget(os.Getenv(envStore), storeOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watchStdin(cancel)
	out := &durable{store: st, w: os.Stdout}
	if err := out.say([]byte("start\n")); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(seed))
	for a := 0; ctx.Err() == nil; a++ {
		id := "own-" + slot
		if rng.Intn(2) == 0 {
			id = fmt.Sprintf("shared-%d", rng.Intn(fleetShared))
		}
		head, err := st.Head(ctx, id)
		if err != nil {
			fleetFatal(out, err)
		}
		evs := turnBatch(t, fmt.Sprintf("w%s-%x-a%d", slot, seed&0xffff, a), head.Next, head.Turns+1, 1+rng.Intn(3))
		err = st.Append(ctx, id, evs)
		switch {
		case err == nil:
			h := sha256.New()
			for _, ev := range evs {
				h.Write(ev.Raw)
			}
			_ = out.say(fmt.Appendf(nil, "acked %s %d %d %x\n", id, head.Next, len(evs), h.Sum(nil)))
		case errors.Is(err, eventlog.ErrConflict):
			_ = out.say([]byte("conflict\n"))
		case ctx.Err() != nil:
			return
		default:
			fleetFatal(out, err)
		}
	}
}

func fleetFatal(out *durable, err error) {
	_ = out.say(fmt.Appendf(nil, "fatal %s\n", strings.ReplaceAll(fmt.Sprintf("%+v", err), "\n", " | ")))
	os.Exit(3)
}
