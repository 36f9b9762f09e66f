package stress

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/pgtest"
	"github.com/sessionlog/sessionlog/verify"
)

// Knobs of TestFailoverPostgres.
const (
	failoverWriters = 4 // writer processes
	// failoverResume is the target: every writer has an append
	// acknowledged this soon after the standby is promoted.
	failoverResume = 10 * time.Second
	// failoverAfter is how long the writers go on once each has resumed.
	failoverAfter = time.Second
	envAcks       = "SESSIONLOG_STRESS_ACKS"
)

// TestFailoverPostgres: a primary and a streaming standby of its own (two
// clusters in temporary directories on free ports, pgtest.Cluster), the
// standby synchronous (synchronous_standby_names names it, and
// synchronous_commit is on, as the store sets it for every writable
// connection). failoverWriters processes append whole turns through the
// multi-host URL postgres://primary,standby/…?target_session_attrs=read-write,
// each to a session of its own and to a shared one, and each records every
// append it was told is stored in a side file, fsynced before it goes on.
// Mid-load, the standby serves a read-only store (target_session_attrs=any):
// every session verifies there. Then the primary is stopped in immediate
// mode (a crash: every backend killed, no checkpoint) and the standby
// promoted (pg_ctl promote). The writers see errors meanwhile and retry;
// an append whose outcome they could not learn (the connection was lost
// with the commit in flight) they resolve as a host would: once a server
// answers, they read the session back, and the append is stored when the
// events at its seqs are its own, byte for byte. The test proves, on the
// promoted server: every acknowledged append is there at its seqs with
// the same bytes (0 lost), every session is whole turns and verifies
// clean, and every writer had an append acknowledged within
// failoverResume of the promotion.
//
// STRESS_FAILOVER_GAP_MS=n cuts the standby off for the last n ms before
// the crash (the primary refuses replication and ends the connection it
// had, pgtest.Cluster.CutReplication), as a network partition would: the
// standby is then behind when the primary dies. With a synchronous
// standby nothing is acknowledged in the gap (every commit waits for the
// standby), which the test asserts.
//
// With STRESS_FAILOVER_ASYNC=1 the standby is asynchronous instead
// (synchronous_standby_names empty): what the primary acknowledged and
// had not yet sent is lost at the failover. The run then reports the
// number lost instead of failing on it (with no gap it is usually 0: on
// one machine the standby is rarely behind; with one, about every append
// acknowledged in the gap), and proves the rest. STRESS_FAILOVER_LOAD
// sets the seconds of load before the crash (default 1: setting up the
// two servers takes most of the test's 10 s; .ci/pg.sh runs 3).
func TestFailoverPostgres(t *testing.T) {
	async := os.Getenv("STRESS_FAILOVER_ASYNC") == "1"
	load := envInt(t, "STRESS_FAILOVER_LOAD", 1)
	gap := time.Duration(envInt(t, "STRESS_FAILOVER_GAP_MS", 0)) * time.Millisecond
	names := "synchronous_standby_names = 'standby1'"
	mode := "sync"
	if async {
		names, mode = "synchronous_standby_names = ''", "async"
	}
	primary := pgtest.NewCluster(t, "synchronous_commit = on", names)
	// The standby starts with the primary's configuration; once promoted
	// it has no standby of its own, and a synchronous_standby_names naming
	// one would block every commit.
	standby := primary.Standby(t, "standby1", "synchronous_standby_names = ''")
	primary.WaitStandby(t, "standby1", mode)
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/postgres?target_session_attrs=read-write",
		primary.Port, standby.Port)
	ctx := context.Background()

	ids := []string{"shared-0"}
	for i := range failoverWriters {
		ids = append(ids, fmt.Sprintf("own-%d", i))
	}
	st, err := sessionlog.Open(context.Background(), url, storeOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if err := st.Create(ctx, codec.NewSessionHeader(id, 1.7e12, "/work", "", 0)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	seed := envInt(t, "STRESS_SEED", time.Now().UnixNano())
	t.Logf("seed %d, %s standby, %d s of load before the crash, the standby cut off for the last %v", seed, mode, load, gap)
	rng := rand.New(rand.NewSource(seed))
	dir := t.TempDir()
	writers := make([]*child, failoverWriters)
	for i := range writers {
		writers[i] = startChildFor(t, 10*time.Minute, "TestFailoverChild", "failover", envStore+"="+url,
			envSlot+"="+strconv.Itoa(i), envSeed+"="+strconv.FormatInt(rng.Int63(), 10),
			envAcks+"="+filepath.Join(dir, fmt.Sprintf("acks-%d", i)))
		writers[i].expect("start")
	}
	summaries := map[string]int64{} // the writers' counts, from their "done" lines
	seen := func(line string) {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "fatal":
			t.Fatalf("a writer failed: %s", line)
		case f[0] == "error":
			t.Logf("a writer saw: %s", line)
		case f[0] == "done":
			for _, kv := range f[1:] {
				k, v, _ := strings.Cut(kv, "=")
				n, _ := strconv.ParseInt(v, 10, 64)
				summaries[k] += n
			}
		}
	}
	watch := func() {
		for _, c := range writers {
			for {
				line, ok := c.next(0)
				if !ok {
					break
				}
				seen(line)
			}
		}
	}
	pause := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			watch()
		}
	}

	// Mid-load, the standby serves reads.
	pause(time.Duration(load) * time.Second / 2)
	standbyReads(t, ctx, standby.URL()+"?target_session_attrs=any", ids)
	pause(time.Duration(load)*time.Second/2 - gap)
	cut := time.Now()
	if gap > 0 {
		primary.CutReplication(t)
		cut = time.Now()
		pause(gap)
		if n := pgtest.QueryInt(t, primary.URL(), `SELECT count(*) FROM pg_stat_replication`); n != 0 {
			t.Fatalf("the standby streams again after it was cut off")
		}
	}

	primary.Stop(t, "immediate")
	crashed := time.Now()
	standby.Promote(t)
	promoted := time.Now()
	t.Logf("promote took %v after the crash", promoted.Sub(crashed).Round(time.Millisecond))

	// Wait until every writer has resumed, then a little longer.
	var resumed []time.Duration
	for deadline := promoted.Add(3 * failoverResume); ; {
		pause(100 * time.Millisecond)
		acks := readAcks(t, dir)
		resumed = resumeTimes(acks, promoted)
		if len(resumed) == failoverWriters || time.Now().After(deadline) {
			break
		}
	}
	pause(failoverAfter)
	for _, c := range writers {
		_ = c.stdin.Close() // all at once: each takes a while to finish
	}
	for _, c := range writers {
		c.wait()
		for line := range c.lines {
			seen(line)
		}
	}

	acks := readAcks(t, dir)
	resumed = resumeTimes(acks, promoted)
	check, err := sessionlog.Open(context.Background(), standby.URL(), &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	cs := check.(store)
	stored := map[string][]codec.Event{}
	for _, id := range ids {
		if stored[id], err = readSession(ctx, cs, id, 0); err != nil {
			t.Fatalf("read %s: %+v", id, err)
		}
	}
	lost, before, inGap := 0, 0, 0
	var events int64
	for _, a := range acks {
		events += int64(a.n)
		if a.at.Before(crashed) {
			before++
			if gap > 0 && a.at.After(cut) {
				inGap++
			}
		}
		evs := stored[a.session][min(a.first, int64(len(stored[a.session]))):]
		h := sha256.New()
		for i := 0; i < a.n && i < len(evs); i++ {
			h.Write(evs[i].Raw)
		}
		if len(evs) < a.n || fmt.Sprintf("%x", h.Sum(nil)) != a.hash {
			lost++
			if !async {
				t.Errorf("session %s: the append acknowledged at seq %d (%d events, at %v) is not on the promoted server",
					a.session, a.first, a.n, a.at.Sub(crashed))
			}
		}
	}
	for _, id := range ids {
		if _, err := splitBatches(stored[id]); err != nil {
			t.Errorf("session %s on the promoted server: %+v", id, err)
		}
		res, err := verify.Session(ctx, cs, id, verify.Options{Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Findings) > 0 {
			t.Errorf("session %s on the promoted server: verify: %v", id, res.Findings)
		}
	}
	if !async && inGap > 0 {
		t.Errorf("%d appends were acknowledged while the synchronous standby was cut off", inGap)
	}
	if before == 0 || len(acks) == before {
		t.Errorf("no real failover under load: %d appends acknowledged before the crash, %d after", before, len(acks)-before)
	}
	var ms []string
	worst := time.Duration(0)
	for _, d := range resumed {
		ms = append(ms, strconv.FormatInt(d.Milliseconds(), 10))
		worst = max(worst, d)
	}
	if len(resumed) < failoverWriters || worst > failoverResume {
		t.Errorf("writers resumed after %s ms of the promotion (%d of %d writers), want all within %v",
			strings.Join(ms, ","), len(resumed), failoverWriters, failoverResume)
	}
	line := fmt.Sprintf("failover: mode=%s gap_ms=%d writers=%d acked_appends=%d acked_events=%d acked_before_crash=%d acked_in_gap=%d lost=%d "+
		"unknown_outcomes=%d unknown_stored=%d conflicts=%d errors=%d promote_ms=%d resume_ms=%s",
		mode, gap.Milliseconds(), failoverWriters, len(acks), events, before, inGap, lost, summaries["unknown"], summaries["unknown_stored"],
		summaries["conflicts"], summaries["errors"], promoted.Sub(crashed).Milliseconds(), strings.Join(ms, ","))
	t.Log(line)
	report(t, line)
}

// standbyReads opens the hot standby at url read-only, while the
// primary takes writes, and verifies every session there.
func standbyReads(t *testing.T, ctx context.Context, url string, ids []string) {
	t.Helper()
	s, err := sessionlog.Open(context.Background(), url, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatalf("open the standby read-only: %+v", err)
	}
	defer s.Close()
	rs := s.(store)
	got, err := rs.SessionIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	want := append([]string(nil), ids...)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("the standby lists %v, want %v", got, want)
	}
	for _, id := range ids {
		res, err := verify.Session(ctx, rs, id, verify.Options{Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Findings) > 0 || res.Events == 0 {
			t.Fatalf("session %s on the standby: %d events, verify: %v", id, res.Events, res.Findings)
		}
	}
	if err := s.Append(ctx, ids[0], nil); !errors.Is(err, eventlog.ErrReadOnly) {
		t.Fatalf("append through a read-only store = %v, want ErrReadOnly", err)
	}
}

// failoverAck is an append a writer was told is stored.
type failoverAck struct {
	fleetAck
	writer int
	at     time.Time
}

// readAcks reads the writers' side files.
func readAcks(t *testing.T, dir string) []failoverAck {
	t.Helper()
	var out []failoverAck
	for i := range failoverWriters {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("acks-%d", i)))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) != 6 || f[0] != "acked" {
				continue // a line being written
			}
			first, _ := strconv.ParseInt(f[2], 10, 64)
			n, _ := strconv.Atoi(f[3])
			at, _ := strconv.ParseInt(f[5], 10, 64)
			out = append(out, failoverAck{fleetAck: fleetAck{session: f[1], first: first, n: n, hash: f[4]},
				writer: i, at: time.Unix(0, at)})
		}
	}
	return out
}

// resumeTimes returns, for each writer with an append acknowledged after
// promoted, how long after it the first one was.
func resumeTimes(acks []failoverAck, promoted time.Time) []time.Duration {
	first := map[int]time.Duration{}
	for _, a := range acks {
		if d := a.at.Sub(promoted); d >= 0 {
			if prev, ok := first[a.writer]; !ok || d < prev {
				first[a.writer] = d
			}
		}
	}
	out := make([]time.Duration, 0, len(first))
	for w := range failoverWriters {
		if d, ok := first[w]; ok {
			out = append(out, d)
		}
	}
	return out
}

// report appends line to $STRESS_REPORT, when set.
func report(t *testing.T, line string) {
	t.Helper()
	p := os.Getenv("STRESS_REPORT")
	if p == "" {
		return
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		_, err = fmt.Fprintln(f, line)
		err = errors.CombineErrors(err, f.Close())
	}
	if err != nil {
		t.Errorf("STRESS_REPORT: %v", err)
	}
}

// TestFailoverChild is a writer of TestFailoverPostgres: it appends whole
// turns to its own session and the shared one until its stdin closes,
// and appends to its side file, fsynced before it goes on,
//
//	acked SESSION FIRST N SHA256(payloads) UNIXNANO
//
// for each append it knows is stored. It prints "start", "fatal …" on an
// error no failover explains (a refused event, damage), and at the end
// "done" with its counts. Run directly, it skips.
func TestFailoverChild(t *testing.T) {
	if os.Getenv(envRole) != "failover" {
		t.Skip("a writer process of TestFailoverPostgres; runs only when it starts it")
	}
	seed, err := strconv.ParseInt(os.Getenv(envSeed), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	slot := os.Getenv(envSlot)
	side, err := os.OpenFile(os.Getenv(envAcks), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer side.Close()
	s, err := sessionlog.Open(context.Background(), os.Getenv(envStore), storeOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := s.(store)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watchStdin(cancel)
	fmt.Println("start")
	rng := rand.New(rand.NewSource(seed))
	var conflicts, unknown, unknownStored int
	ack := func(id string, evs []codec.Event) {
		h := sha256.New()
		for _, ev := range evs {
			h.Write(ev.Raw)
		}
		_, err := fmt.Fprintf(side, "acked %s %d %d %x %d\n", id, evs[0].Seq, len(evs), h.Sum(nil), time.Now().UnixNano())
		if err == nil {
			err = side.Sync()
		}
		if err != nil {
			failoverFatal(err)
		}
	}
	for a := 0; ctx.Err() == nil; a++ {
		id := "own-" + slot
		if rng.Intn(2) == 0 {
			id = "shared-0"
		}
		head, err := st.Head(ctx, id)
		if err != nil {
			if ctx.Err() == nil {
				unreachable(ctx, err)
			}
			continue
		}
		evs := turnBatch(t, fmt.Sprintf("w%s-%x-a%d", slot, seed&0xffff, a), head.Next, head.Turns+1, 1+rng.Intn(3))
		err = st.Append(ctx, id, evs)
		switch {
		case err == nil:
			ack(id, evs)
		case errors.Is(err, eventlog.ErrConflict):
			conflicts++
		case ctx.Err() != nil && errors.Is(err, context.Canceled):
		default:
			unreachable(ctx, err)
			unknown++
			// The outcome is unknown: the commit may have reached the
			// server before the connection was lost. Read it back.
			if stored, ok := resolve(ctx, st, id, evs); ok && stored {
				unknownStored++
				ack(id, evs)
			}
		}
	}
	fmt.Printf("done conflicts=%d errors=%d unknown=%d unknown_stored=%d\n", conflicts, failoverErrors, unknown, unknownStored)
}

// failoverErrors counts the errors a writer saw.
var failoverErrors int

// unreachable ends the writer on an error a failover does not explain,
// and waits a little on one it does (the server gone, none writable
// yet); it prints the first three.
func unreachable(ctx context.Context, err error) {
	failoverErrors++
	if failoverErrors <= 3 {
		fmt.Printf("error %s\n", strings.ReplaceAll(err.Error(), "\n", " | "))
	}
	for _, class := range []error{eventlog.ErrInvalid, eventlog.ErrCorrupt, eventlog.ErrNotFound, eventlog.ErrReadOnly, eventlog.ErrClosed} {
		if errors.Is(err, class) {
			failoverFatal(err)
		}
	}
	select {
	case <-ctx.Done():
	case <-time.After(50 * time.Millisecond):
	}
}

// resolve learns whether evs, whose append failed without a class, are
// stored: once a writable server answers, the session holds them at
// their seqs, byte for byte, or not at all (a seq taken by other bytes,
// or not reached). ok is false when ctx ended first.
func resolve(ctx context.Context, st store, id string, evs []codec.Event) (stored, ok bool) {
	first := evs[0].Seq
	for ctx.Err() == nil {
		head, err := st.Head(ctx, id)
		if err != nil {
			unreachable(ctx, err)
			continue
		}
		if head.Next < first+int64(len(evs)) {
			return false, true
		}
		got, err := readSession(ctx, st, id, first)
		if err != nil {
			unreachable(ctx, err)
			continue
		}
		for i := range evs {
			if !bytes.Equal(got[i].Raw, evs[i].Raw) {
				return false, true
			}
		}
		return true, true
	}
	return false, false
}

func failoverFatal(err error) {
	fmt.Printf("fatal %s\n", strings.ReplaceAll(fmt.Sprintf("%+v", err), "\n", " | "))
	os.Exit(3)
}
