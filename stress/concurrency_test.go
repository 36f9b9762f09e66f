package stress

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/verify"
)

// Knobs of TestConcurrentAppends.
const (
	concSessions = 32 // sessions in the store; the even ones have racing writers
	concWriters  = 4  // writers per session
	concAttempts = 12 // appends each writer attempts
	concReaders  = 4  // goroutines scanning sessions while the writers run
)

// TestConcurrentAppends has concWriters writers per session append whole
// turns (turn/start, user/message, context messages, turn/end; one Append
// each) to concSessions sessions of one store at once, while readers scan.
// On the even sessions the writers race: each round, all of them read the
// head, wait for each other, then append at the same next seq, so exactly
// one must win. On the odd ones they run freely, and now and then append
// at a seq that is already taken or not yet reached.
//
// It proves: every Append succeeds or fails with ErrConflict, never another
// error; each race has exactly one winner; every session reads back
// contiguous, every batch's events adjacent, intact and at the seq its
// writer chose, and no refused batch is stored; the events acknowledged add
// up to the events stored; readers only ever see whole batches; verify
// finds nothing, not even a structure warning. Meanwhile a forker forks
// sessions at their last turn/end as they grow: every fork holds exactly
// its source's events up to that point. It runs with the default
// validator cache, and with one far too small for the sessions, so that
// appends keep rebuilding validator states from the store while others
// write.
func TestConcurrentAppends(t *testing.T) {
	tests := []struct {
		name     string
		sessions int
		cache    int
	}{
		{name: "default validator cache", sessions: concSessions},
		// Every cache miss replays the session: fewer sessions keep it short.
		{name: "validator cache of 4", sessions: concSessions / 2, cache: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { concurrentAppends(t, tt.sessions, tt.cache) })
	}
}

func concurrentAppends(t *testing.T, sessions, cache int) {
	ctx := context.Background()
	opts := storeOptions()
	opts.ValidatorCache = cache
	st, err := boltlog.Open(filepath.Join(t.TempDir(), "sessions.db"), opts, storeBoltOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = fmt.Sprintf("conc-%02d", i)
		if err := st.Create(ctx, codec.NewSessionHeader(ids[i], 1.7e12, "/work", "", 0)); err != nil {
			t.Fatal(err)
		}
	}

	var (
		acked    sync.Map // tag → ack: the batches Append accepted
		refused  sync.Map // tag → struct{}: the batches it refused
		stats    concStats
		writers  sync.WaitGroup
		stop     = make(chan struct{})
		readers  sync.WaitGroup
		wins     = make([][concAttempts]atomic.Int32, sessions)
		mismatch atomic.Int64
	)
	start := time.Now()
	for s := range ids {
		var bar *barrier
		if s%2 == 0 {
			bar = newBarrier(concWriters)
		}
		for w := range concWriters {
			writers.Add(1)
			go func() {
				defer writers.Done()
				rng := rand.New(rand.NewSource(int64(s*concWriters + w)))
				for a := range concAttempts {
					head, err := st.Head(ctx, ids[s])
					if err != nil {
						t.Errorf("head %s: %+v", ids[s], err)
						if bar != nil { // keep the round going for the others
							bar.wait()
							bar.wait()
						}
						continue
					}
					first := head.Next
					// On a free session, now and then aim at a seq that is
					// taken already or not reached yet: a conflict, always
					// (aiming 1–3 past the head read cannot meet the head by
					// then, since every batch holds at least 4 events).
					wrong := bar == nil && rng.Intn(8) == 0
					if wrong {
						if first > 0 && rng.Intn(2) == 0 {
							first -= 1 + rng.Int63n(first)
						} else {
							first += 1 + rng.Int63n(3)
						}
					}
					tag := fmt.Sprintf("s%d-w%d-a%d", s, w, a)
					evs := turnBatch(t, tag, first, head.Turns+1, 1+rng.Intn(4))
					if bar != nil {
						bar.wait() // every writer of the session has read the same head
					}
					err = st.Append(ctx, ids[s], evs)
					switch {
					case err == nil && wrong:
						t.Errorf("append %s at seq %d, the next seq being %d: accepted", tag, first, head.Next)
					case err == nil:
						acked.Store(tag, ack{session: s, first: first, n: len(evs)})
						stats.acked.Add(1)
						stats.events.Add(int64(len(evs)))
						if bar != nil {
							wins[s][a].Add(1)
						}
					case errors.Is(err, eventlog.ErrConflict):
						refused.Store(tag, struct{}{})
						stats.conflicts.Add(1)
						if wrong {
							stats.wrongSeq.Add(1)
						}
					default:
						t.Errorf("append %s: %+v (want nil or ErrConflict)", tag, err)
						refused.Store(tag, struct{}{})
					}
					if bar != nil {
						bar.wait() // the round is over for every writer
					}
				}
			}()
		}
	}
	for r := range concReaders {
		readers.Add(1)
		go func() {
			defer readers.Done()
			rng := rand.New(rand.NewSource(int64(1000 + r)))
			for {
				select {
				case <-stop:
					return
				default:
				}
				id := ids[rng.Intn(len(ids))]
				evs, err := readSession(ctx, st, id, 0)
				if err != nil {
					t.Errorf("reader: %s: %+v", id, err)
					return
				}
				if _, err := splitBatches(evs); err != nil {
					t.Errorf("reader saw session %s with %d events: %v", id, len(evs), err)
					mismatch.Add(1)
				}
				stats.scans.Add(1)
			}
		}()
	}
	var forks []forked
	readers.Add(1)
	go func() { // the forker
		defer readers.Done()
		rng := rand.New(rand.NewSource(2000))
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			source := ids[rng.Intn(len(ids))]
			head, err := st.Head(ctx, source)
			if err != nil {
				t.Errorf("forker: %+v", err)
				return
			}
			if head.Next == 0 {
				continue
			}
			// Batches are whole turns: the last event is a turn/end.
			child := fmt.Sprintf("fork-%03d", n)
			h := codec.NewSessionHeader(child, 1.7e12, "", source, head.Next)
			if err := st.Fork(ctx, source, head.Next-1, h); err != nil {
				t.Errorf("fork %s at seq %d: %+v", source, head.Next-1, err)
				return
			}
			forks = append(forks, forked{child: child, source: source, n: head.Next})
		}
	}()
	writers.Wait()
	close(stop)
	readers.Wait()
	took := time.Since(start)
	if t.Failed() {
		return
	}

	// Each race had exactly one winner.
	for s := 0; s < sessions; s += 2 {
		for a := range concAttempts {
			if n := wins[s][a].Load(); n != 1 {
				t.Errorf("session %s round %d: %d writers won the race at one seq, want 1", ids[s], a, n)
			}
		}
	}

	// Read back: contiguous, whole batches at their writers' seqs, nothing
	// refused, and the totals add up.
	var stored int64
	found := map[string]bool{}
	for s, id := range ids {
		head, err := st.Head(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := readSession(ctx, st, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(evs)) != head.Next {
			t.Errorf("session %s: scan returned %d events, head says %d", id, len(evs), head.Next)
		}
		for i := range evs {
			if evs[i].Seq != int64(i) {
				t.Fatalf("session %s: event %d has seq %d", id, i, evs[i].Seq)
			}
		}
		stored += head.Next
		batches, err := splitBatches(evs)
		if err != nil {
			t.Errorf("session %s: %v", id, err)
			continue
		}
		if head.Turns != int64(len(batches)) {
			t.Errorf("session %s: head counts %d turns, the log holds %d batches", id, head.Turns, len(batches))
		}
		for _, b := range batches {
			found[b.tag] = true
			v, ok := acked.Load(b.tag)
			if !ok {
				_, wasRefused := refused.Load(b.tag)
				t.Errorf("session %s seq %d: batch %s is stored, but its Append was not acknowledged (refused: %v)", id, b.first, b.tag, wasRefused)
				continue
			}
			if a := v.(ack); a.session != s || a.first != b.first || a.n != b.n {
				t.Errorf("session %s: batch %s stored at seq %d with %d events, its writer appended %d events at seq %d of %s",
					id, b.tag, b.first, b.n, a.n, a.first, ids[a.session])
			}
		}
		res, err := verify.Session(ctx, st, id, verify.Options{Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range res.Findings {
			t.Errorf("verify %s: %s", id, f)
		}
	}
	for _, f := range forks {
		mine, err := payloadHashes(ctx, st, f.child)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := payloadHashes(ctx, st, f.source)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(mine)) != f.n || fmt.Sprint(mine) != fmt.Sprint(theirs[:f.n]) {
			t.Errorf("fork %s of %s holds %d events, not its source's first %d", f.child, f.source, len(mine), f.n)
		}
		res, err := verify.Session(ctx, st, f.child, verify.Options{Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, fi := range res.Findings {
			t.Errorf("verify %s: %s", f.child, fi)
		}
	}
	acked.Range(func(k, _ any) bool {
		if !found[k.(string)] {
			t.Errorf("batch %s was acknowledged but is not stored", k)
		}
		return true
	})
	if n := stats.events.Load(); n != stored {
		t.Errorf("acknowledged %d events, the store holds %d", n, stored)
	}
	tx, writes := st.CommitStats()
	line := fmt.Sprintf("concurrency: cache=%d sessions=%d writers=%d attempts=%d acked=%d conflicts=%d wrong_seq=%d events=%d stored=%d scans=%d torn_reads=%d forks=%d transactions=%d writes=%d writes_per_tx=%.2f seconds=%.1f",
		cache, sessions, sessions*concWriters, sessions*concWriters*concAttempts, stats.acked.Load(), stats.conflicts.Load(),
		stats.wrongSeq.Load(), stats.events.Load(), stored, stats.scans.Load(), mismatch.Load(), len(forks), tx, writes,
		float64(writes)/float64(max(tx, 1)), took.Seconds())
	t.Log(line)
}

// forked is a fork made while the writers ran: child holds source's
// first n events.
type forked struct {
	child, source string
	n             int64
}

// concStats are TestConcurrentAppends' counters.
type concStats struct {
	acked, conflicts, wrongSeq, events, scans atomic.Int64
}

// ack is an acknowledged batch: its session index, first seq and size.
type ack struct {
	session int
	first   int64
	n       int
}

// turnBatch returns one whole turn as a batch starting at seq first:
// turn/start, a user/message and ctx context messages, turn/end. Every
// message carries "TAG i n": the batch's tag, its index among the batch's
// messages and their count.
func turnBatch(t testing.TB, tag string, first, turn int64, ctx int) []codec.Event {
	msgs := 1 + ctx
	lines := []string{fmt.Sprintf(`{"type":"turn/start","seq":%d,"time":%d,"data":{"turn":%d}}`, first, 1_700_000_000_000+first, turn)}
	for i := range msgs {
		typ, source := "context/message", `{"kind":"plugin","plugin":"stress"}`
		if i == 0 {
			typ, source = "user/message", `{"kind":"user"}`
		}
		seq := first + 1 + int64(i)
		lines = append(lines, fmt.Sprintf(`{"type":"%s","seq":%d,"time":%d,"data":{"content":[{"type":"text","text":"%s %d %d"}],"source":%s},"surfaceOp":"append"}`,
			typ, seq, 1_700_000_000_000+seq, tag, i, msgs, source))
	}
	last := first + 1 + int64(msgs)
	lines = append(lines, fmt.Sprintf(`{"type":"turn/end","seq":%d,"time":%d,"data":{"turn":%d,"reason":{"kind":"completed"}}}`,
		last, 1_700_000_000_000+last, turn))
	evs := make([]codec.Event, len(lines))
	for i, l := range lines {
		ev, err := codec.ParseEvent([]byte(l), codec.Limits{})
		if err != nil {
			t.Errorf("turnBatch: %s: %v", l, err)
			return nil
		}
		evs[i] = ev
	}
	return evs
}

// batch is a whole turn found in a session.
type batch struct {
	tag   string
	first int64
	n     int
}

// splitBatches splits a session's events into the turns turnBatch builds,
// numbered from 1, and fails on anything else: a batch cut short, two
// batches interleaved, a message out of place.
func splitBatches(evs []codec.Event) ([]batch, error) { return splitBatchesFrom(evs, 1) }

// splitBatchesFrom is splitBatches for events of a session that start at
// a turn's start, the first of them turn number turn.
func splitBatchesFrom(evs []codec.Event, turn int64) ([]batch, error) {
	var out []batch
	for i := 0; i < len(evs); {
		ts, ok := evs[i].Data.(*codec.TurnStart)
		if !ok {
			return nil, errors.Newf("seq %d: %s where a batch should start", evs[i].Seq, evs[i].Type)
		}
		if ts.Turn != int64(len(out))+turn {
			return nil, errors.Newf("seq %d: turn %d, want %d", evs[i].Seq, ts.Turn, int64(len(out))+turn)
		}
		b := batch{first: evs[i].Seq}
		msgs := -1
		for j := 0; ; j++ {
			k := i + 1 + j
			if k >= len(evs) {
				return nil, errors.Newf("batch at seq %d is cut short after %d events", b.first, j+1)
			}
			ev := &evs[k]
			if msgs >= 0 && j == msgs {
				if te, ok := ev.Data.(*codec.TurnEnd); !ok || te.Turn != ts.Turn {
					return nil, errors.Newf("seq %d: %s where batch %s should end", ev.Seq, ev.Type, b.tag)
				}
				b.n = msgs + 2
				break
			}
			var content codec.Content
			switch d := ev.Data.(type) {
			case *codec.UserMessage:
				content = d.Content
			case *codec.ContextMessage:
				content = d.Content
			default:
				return nil, errors.Newf("seq %d: %s inside batch %s", ev.Seq, ev.Type, b.tag)
			}
			if len(content.Blocks) != 1 {
				return nil, errors.Newf("seq %d: %d blocks", ev.Seq, len(content.Blocks))
			}
			f := strings.Fields(content.Blocks[0].Text)
			if len(f) != 3 {
				return nil, errors.Newf("seq %d: text %q", ev.Seq, content.Blocks[0].Text)
			}
			idx, err1 := strconv.Atoi(f[1])
			n, err2 := strconv.Atoi(f[2])
			if err1 != nil || err2 != nil {
				return nil, errors.Newf("seq %d: text %q", ev.Seq, content.Blocks[0].Text)
			}
			if j == 0 {
				b.tag, msgs = f[0], n
			}
			if f[0] != b.tag || idx != j || n != msgs || (j == 0) != (ev.Type == codec.TypeUserMessage) {
				return nil, errors.Newf("seq %d: message %q in batch %s at index %d of %d", ev.Seq, content.Blocks[0].Text, b.tag, j, msgs)
			}
		}
		out = append(out, b)
		i += b.n
	}
	return out, nil
}

// barrier is a reusable barrier for n goroutines.
type barrier struct {
	mu    sync.Mutex
	cond  *sync.Cond
	n     int
	count int
	gen   int
}

func newBarrier(n int) *barrier {
	b := &barrier{n: n}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// wait blocks until n goroutines have called it (in this generation).
func (b *barrier) wait() {
	b.mu.Lock()
	defer b.mu.Unlock()
	gen := b.gen
	b.count++
	if b.count == b.n {
		b.count = 0
		b.gen++
		b.cond.Broadcast()
		return
	}
	for gen == b.gen {
		b.cond.Wait()
	}
}

// TestConcurrentCreates races writers that create the same session id at
// once, by Create, Fork and Import mixed (docs/rules.md#import, docs/rules.md#error-classes conflict): for
// each id exactly one wins, every other gets ErrConflict and nothing else,
// and the session stored is the winner's, whole.
func TestConcurrentCreates(t *testing.T) {
	ctx := context.Background()
	opts := storeOptions()
	opts.ImportBatch = 16 // imports and forks stage in several transactions
	st, err := boltlog.Open(filepath.Join(t.TempDir(), "sessions.db"), opts, storeBoltOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The fork source: a few whole turns.
	if err := st.Create(ctx, codec.NewSessionHeader("source", 1.7e12, "", "", 0)); err != nil {
		t.Fatal(err)
	}
	var next int64
	for turn := int64(1); turn <= 8; turn++ {
		evs := turnBatch(t, fmt.Sprintf("source-%d", turn), next, turn, 3)
		if err := st.Append(ctx, "source", evs); err != nil {
			t.Fatal(err)
		}
		next += int64(len(evs))
	}
	const ids, racers = 16, 6
	kinds := []string{"create", "fork", "import"}
	var wins, conflicts atomic.Int64
	winner := make([]atomic.Value, ids)
	var wg sync.WaitGroup
	for i := range ids {
		id := fmt.Sprintf("new-%02d", i)
		for r := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				kind := kinds[(i+r)%len(kinds)]
				var err error
				switch kind {
				case "create":
					err = st.Create(ctx, codec.NewSessionHeader(id, 1.7e12, "", "", 0))
				case "fork":
					err = st.Fork(ctx, "source", next-1, codec.NewSessionHeader(id, 1.7e12, "", "source", next))
				case "import":
					_, err = st.Import(ctx, codec.NewSessionHeader(id, 1.7e12, "", "", 0), &eventSlice{evs: turnBatch(t, id, 0, 1, 40)})
				}
				switch {
				case err == nil:
					wins.Add(1)
					winner[i].Store(kind)
				case errors.Is(err, eventlog.ErrConflict):
					conflicts.Add(1)
				default:
					t.Errorf("%s %s: %+v (want nil or ErrConflict)", kind, id, err)
				}
			}()
		}
	}
	wg.Wait()
	if got := wins.Load(); got != ids {
		t.Errorf("%d creations won for %d ids, want one each", got, ids)
	}
	for i := range ids {
		id := fmt.Sprintf("new-%02d", i)
		kind, _ := winner[i].Load().(string)
		head, err := st.Head(ctx, id)
		if err != nil {
			t.Errorf("%s (won by %s): %+v", id, kind, err)
			continue
		}
		want := map[string]int64{"create": 0, "fork": next, "import": 43}[kind]
		if head.Next != want {
			t.Errorf("%s, won by %s, holds %d events, want %d", id, kind, head.Next, want)
		}
		res, err := verify.Session(ctx, st, id, verify.Options{Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range res.Findings {
			t.Errorf("verify %s (won by %s): %s", id, kind, f)
		}
	}
	t.Logf("creates: ids=%d racers=%d wins=%d conflicts=%d", ids, ids*racers, wins.Load(), conflicts.Load())
}

// eventSlice is an eventlog.Source over events in memory.
type eventSlice struct{ evs []codec.Event }

func (s *eventSlice) Next() (codec.Event, error) {
	if len(s.evs) == 0 {
		return codec.Event{}, io.EOF
	}
	ev := s.evs[0]
	s.evs = s.evs[1:]
	return ev, nil
}

// TestStoreLock proves that one store is never open for writing in two
// processes (docs/rules.md#store): while a child process holds it, Open here fails
// with ErrLocked once the short LockTimeout expires, read-write and
// read-only alike; once the child is gone, whether it closed the store or
// was killed, Open succeeds; and a child fails the same way while this
// process holds the store, as does a second Open in this process.
func TestStoreLock(t *testing.T) {
	ctx := context.Background()
	short := 50 * time.Millisecond
	newStore := func(t *testing.T) string {
		path := filepath.Join(t.TempDir(), "sessions.db")
		st, err := boltlog.Open(path, storeOptions(), storeBoltOptions())
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Create(ctx, codec.NewSessionHeader("held", 1.7e12, "", "", 0)); err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	refused := func(t *testing.T, path string) {
		t.Helper()
		for _, ro := range []bool{false, true} {
			st, err := boltlog.Open(path, &eventlog.Options{ReadOnly: ro, NewValidator: rebuild.NewValidator}, &boltlog.Options{LockTimeout: short})
			if err == nil {
				st.Close()
				t.Fatalf("Open(ReadOnly %v) of a store another process holds succeeded", ro)
			}
			if !errors.Is(err, eventlog.ErrLocked) {
				t.Fatalf("Open(ReadOnly %v) of a store another process holds = %+v, want ErrLocked", ro, err)
			}
		}
	}
	opens := func(t *testing.T, path string) {
		t.Helper()
		st, err := boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, &boltlog.Options{LockTimeout: short})
		if err != nil {
			t.Fatalf("Open after the holder is gone: %+v", err)
		}
		defer st.Close()
		if _, err := st.Head(ctx, "held"); err != nil {
			t.Fatalf("Head after the holder is gone: %+v", err)
		}
	}

	t.Run("child holds, then closes", func(t *testing.T) {
		path := newStore(t)
		c := startChild(t, "TestLockChild", "hold", envStore+"="+path)
		c.expect("holding")
		refused(t, path)
		c.wait()
		opens(t, path)
	})
	t.Run("child holds, then is killed", func(t *testing.T) {
		path := newStore(t)
		c := startChild(t, "TestLockChild", "hold", envStore+"="+path)
		c.expect("holding")
		refused(t, path)
		c.kill()
		if !c.killedBySignal() {
			t.Fatalf("child ended by itself: %v; stderr:\n%s", c.state, c.stderr.String())
		}
		opens(t, path)
	})
	t.Run("this process holds", func(t *testing.T) {
		path := newStore(t)
		st, err := boltlog.Open(path, storeOptions(), storeBoltOptions())
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for _, role := range []string{"probe", "probe-readonly"} {
			c := startChild(t, "TestLockChild", role, envStore+"="+path)
			c.expect("locked")
			c.wait()
		}
		refused(t, path) // a second Log in this process
	})
}

// TestLockChild is the child process of TestStoreLock. As "hold" it opens
// the store, says "holding" and keeps it until its stdin closes; as
// "probe" (or "probe-readonly") it tries to open the store with a short
// LockTimeout and says "locked" when that fails with ErrLocked. Run
// directly, it skips.
func TestLockChild(t *testing.T) {
	role := os.Getenv(envRole)
	path := os.Getenv(envStore)
	switch role {
	case "hold":
		st, err := boltlog.Open(path, storeOptions(), storeBoltOptions())
		if err != nil {
			t.Fatal(err)
		}
		finished := make(chan struct{})
		watchStdin(func() { close(finished) })
		fmt.Println("holding")
		<-finished
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	case "probe", "probe-readonly":
		st, err := boltlog.Open(path, &eventlog.Options{ReadOnly: role == "probe-readonly", NewValidator: rebuild.NewValidator}, &boltlog.Options{LockTimeout: 50 * time.Millisecond})
		switch {
		case err == nil:
			st.Close()
			t.Fatalf("%s: Open of a store another process holds succeeded", role)
		case errors.Is(err, eventlog.ErrLocked):
			fmt.Println("locked")
		default:
			t.Fatalf("%s: Open of a store another process holds = %+v, want ErrLocked", role, err)
		}
	default:
		t.Skip("the child process of TestStoreLock; runs only when TestStoreLock starts it")
	}
}
