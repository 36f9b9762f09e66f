package loop_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/loop"
)

const toolCallReply = `[{"type":"tool-call","id":"c1","name":"t","arguments":"{}"}]`

// withTool offers one tool, "t", that runs run.
func withTool(h *harness, run func(ctx context.Context, c loop.Call) (loop.Result, error)) {
	h.host.spec.Tools = []loop.Tool{{Name: "t", Description: "d", Parameters: []byte(`{"type":"object"}`), Run: run}}
}

func TestDisposeFromCallback(t *testing.T) {
	for _, tc := range []struct {
		name string
		// ctxOf returns the context the tool passes to Dispose.
		ctxOf func(toolCtx context.Context) (context.Context, context.CancelFunc)
		want  error
	}{
		{"turn context", func(c context.Context) (context.Context, context.CancelFunc) { return c, func() {} }, loop.ErrInTurn},
		{"unrelated context with a deadline", func(context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			var l *loop.Loop
			var disposeErr error
			withTool(h, func(ctx context.Context, c loop.Call) (loop.Result, error) {
				dctx, cancel := tc.ctxOf(ctx)
				defer cancel()
				disposeErr = l.Dispose(dctx)
				return loop.Result{Content: []byte(text("done"))}, nil
			})
			l = h.open("s", nil)
			h.prov.p.SetReplies([][]byte{[]byte(toolCallReply), []byte(text("never"))})
			done := make(chan struct{})
			var out loop.Outcome
			var err error
			go func() {
				defer close(done)
				out, err = l.Send(context.Background(), loop.Text("hi"), loop.User)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Send did not return: Dispose from a tool deadlocked")
			}
			if err != nil {
				t.Fatal(err)
			}
			if !errors.Is(disposeErr, tc.want) {
				t.Fatalf("Dispose from the tool = %v, want %v", disposeErr, tc.want)
			}
			if out.Reason != "disposed" {
				t.Fatalf("outcome %+v, want disposed", out)
			}
			if _, err := l.Send(context.Background(), loop.Text("again"), loop.User); !errors.Is(err, loop.ErrDisposed) {
				t.Fatalf("Send after Dispose = %v", err)
			}
			// From outside, Dispose now returns at once: nothing is in flight.
			if err := l.Dispose(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// hungStore blocks Append from the armed call on until released, ignoring
// ctx when ignoreCtx (a store stuck in a syscall), else answering ctx's
// end. On release the blocked append goes on to the real store when land.
type hungStore struct {
	loop.Store
	ignoreCtx bool
	land      bool
	armed     atomic.Bool
	blocked   chan struct{} // closed when an append blocks
	release   chan struct{}
	once      sync.Once
	finished  chan error // the blocked append's result, once released
}

func newHungStore(s loop.Store, ignoreCtx, land bool) *hungStore {
	return &hungStore{Store: s, ignoreCtx: ignoreCtx, land: land, blocked: make(chan struct{}),
		release: make(chan struct{}), finished: make(chan error, 1)}
}

func (s *hungStore) Append(ctx context.Context, id string, evs []codec.Event) error {
	if !s.armed.Load() {
		return s.Store.Append(ctx, id, evs)
	}
	s.once.Do(func() { close(s.blocked) })
	if s.ignoreCtx {
		<-s.release
	} else {
		select {
		case <-s.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var err error
	if s.land {
		err = s.Store.Append(context.Background(), id, evs)
	}
	s.finished <- err
	return err
}

func TestHungStoreEndsTurn(t *testing.T) {
	for _, tc := range []struct {
		name            string
		ignoreCtx, land bool
	}{
		{"store answers its context", false, false},
		{"store ignores its context, batch never lands", true, false},
		{"store ignores its context, batch lands late", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			hs := newHungStore(h.store, tc.ignoreCtx, tc.land)
			var before int64
			withTool(h, func(ctx context.Context, c loop.Call) (loop.Result, error) {
				// The tool/call batch is committed; the result's batch hangs.
				hs.armed.Store(true)
				return loop.Result{Content: []byte(text("r"))}, nil
			})
			// The bound must also hold for the appends before the hang, on
			// a loaded machine under -race: half a second.
			o := loop.Options{Provider: h.prov, Host: h.host, Now: func() float64 { return 7 },
				StoreTimeout: 500 * time.Millisecond}
			l, err := loop.Create(context.Background(), hs, "s", o)
			if err != nil {
				t.Fatal(err)
			}
			h.prov.p.SetReplies([][]byte{[]byte(toolCallReply), []byte(text("ok"))})
			start := time.Now()
			_, err = l.Send(context.Background(), loop.Text("hi"), loop.User)
			if !errors.Is(err, loop.ErrStoreTimeout) {
				t.Fatalf("Send over a hung store = %v, want ErrStoreTimeout", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("Send took %s with a 500ms store bound", d)
			}
			select {
			case <-hs.blocked:
			default:
				t.Fatal("the store never blocked: the test proved nothing")
			}
			before = l.Next()
			// The instance is broken: it refuses more turns, and Dispose
			// says so rather than write over an unknown log.
			if _, err := l.Send(context.Background(), loop.Text("again"), loop.User); !errors.Is(err, loop.ErrStoreTimeout) {
				t.Fatalf("Send after the timeout = %v", err)
			}
			if err := l.Dispose(context.Background()); !errors.Is(err, loop.ErrStoreTimeout) {
				t.Fatalf("Dispose after the timeout = %v", err)
			}
			hs.armed.Store(false)
			close(hs.release)
			if tc.ignoreCtx {
				if err := <-hs.finished; err != nil {
					t.Fatal(err)
				}
			}
			// A new instance reads the log as it stands and closes the turn.
			_, evs := readSession(t, h.store, "s")
			landed := int64(len(evs)) - before
			if tc.land && landed != 1 || !tc.land && landed != 0 {
				t.Fatalf("%d events past the instance's view, want the whole batch (1) or none", landed)
			}
			o.StoreTimeout = 0 // the default: the real store is not hung
			l2, err := loop.Open(context.Background(), h.store, "s", o)
			if err != nil {
				t.Fatal(err)
			}
			_, evs = readSession(t, h.store, "s")
			if last := evs[len(evs)-1]; last.Type != codec.TypeTurnEnd {
				t.Fatalf("reopened session ends with %s, want the crash closers' turn/end", last.Type)
			}
			checkTheorem(t, h.store, "s", nil)
			h.prov.p.SetReplies([][]byte{[]byte(text("fine"))})
			if out, err := l2.Send(context.Background(), loop.Text("after"), loop.User); err != nil || out.Reason != "completed" {
				t.Fatalf("turn after reopening: %+v, %v", out, err)
			}
		})
	}
}

// A cancellation never fails a write half-way: the batch in flight is
// written, then the turn ends aborted.
func TestCancelDuringSlowAppend(t *testing.T) {
	h := newHarness(t)
	hs := newHungStore(h.store, true, true)
	ctx, cancel := context.WithCancel(context.Background())
	withTool(h, func(context.Context, loop.Call) (loop.Result, error) {
		hs.armed.Store(true)
		go func() {
			<-hs.blocked
			cancel()
			time.Sleep(20 * time.Millisecond)
			hs.armed.Store(false)
			close(hs.release)
		}()
		return loop.Result{Content: []byte(text("r"))}, nil
	})
	o := loop.Options{Provider: h.prov, Host: h.host, Now: func() float64 { return 7 }, StoreTimeout: 10 * time.Second}
	l, err := loop.Create(context.Background(), hs, "s", o)
	if err != nil {
		t.Fatal(err)
	}
	h.prov.p.SetReplies([][]byte{[]byte(toolCallReply), []byte(text("never"))})
	out, err := l.Send(ctx, loop.Text("hi"), loop.User)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-hs.finished; err != nil {
		t.Fatalf("the slow append failed: %v", err)
	}
	if out.Reason != "aborted" {
		t.Fatalf("outcome %+v, want aborted", out)
	}
	_, evs := readSession(t, h.store, "s")
	var results int
	for _, e := range evs {
		if e.Type == codec.TypeToolResult {
			results++
		}
	}
	if results != 1 {
		t.Fatalf("%d tool results, want the one whose write was in flight", results)
	}
	checkTheorem(t, h.store, "s", h.prov.seen)
}

// Next is safe for concurrent use: a goroutine reading it while turns run
// sees it move forward only, and end at the store's head.
func TestNextConcurrent(t *testing.T) {
	h := newHarness(t)
	l := h.open("s", nil)
	stop := make(chan struct{})
	var reads, moves, seen atomic.Int64
	done := make(chan error, 1)
	go func() {
		last := l.Next()
		seen.Store(last)
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			n := l.Next()
			reads.Add(1)
			if n < last {
				done <- errors.Newf("Next went back from %d to %d", last, n)
				return
			}
			if n > last {
				moves.Add(1)
			}
			last = n
			seen.Store(n)
		}
	}()
	for i := 0; i < 5; i++ {
		h.send(l, "hi", text("ok"))
		// Let the reader see this turn's end before the next one starts,
		// so that it races the writes instead of missing them all.
		for seen.Load() != l.Next() {
			runtime.Gosched()
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if reads.Load() == 0 || moves.Load() == 0 {
		t.Fatalf("the reader read %d times and saw %d moves: it raced nothing", reads.Load(), moves.Load())
	}
	head, err := h.store.Head(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if l.Next() != head.Next {
		t.Fatalf("Next %d, store head %d", l.Next(), head.Next)
	}
}

// hungReads blocks Scan, once armed, until its context ends.
type hungReads struct {
	loop.Store
	armed atomic.Bool
	hung  atomic.Int64
}

func (s *hungReads) Scan(ctx context.Context, id string, from int64) (eventlog.Iterator, error) {
	if s.armed.Load() {
		s.hung.Add(1)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.Store.Scan(ctx, id, from)
}

// TestHungReads: a store whose reads hang fails Open, and the invariant
// check of a turn, with ErrStoreTimeout within the bound.
func TestHungReads(t *testing.T) {
	h := newHarness(t)
	hs := &hungReads{Store: h.store}
	o := loop.Options{Provider: h.prov, Host: h.host, Now: func() float64 { return 7 },
		StoreTimeout: 300 * time.Millisecond, Invariant: loop.InvariantIncremental,
		PreStep: []loop.PreStepHook{func(context.Context, loop.PreStep) error { hs.armed.Store(true); return nil }}}
	l, err := loop.Create(context.Background(), hs, "s", o)
	if err != nil {
		t.Fatal(err)
	}
	h.prov.p.SetReplies([][]byte{[]byte(text("never"))})
	if _, err := l.Send(context.Background(), loop.Text("hi"), loop.User); !errors.Is(err, loop.ErrStoreTimeout) {
		t.Fatalf("Send with a hung invariant read = %v, want ErrStoreTimeout", err)
	}
	if _, err := l.Send(context.Background(), loop.Text("again"), loop.User); !errors.Is(err, loop.ErrStoreTimeout) {
		t.Fatalf("the next Send = %v, want ErrStoreTimeout", err)
	}
	start := time.Now()
	if _, err := loop.Open(context.Background(), hs, "s", o); !errors.Is(err, loop.ErrStoreTimeout) {
		t.Fatalf("Open with hung reads = %v, want ErrStoreTimeout", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Open took %s", d)
	}
	if hs.hung.Load() < 2 {
		t.Fatalf("%d reads hung: the test proved nothing", hs.hung.Load())
	}
	if len(h.prov.seen) != 0 {
		t.Fatal("a request went out although its check never finished")
	}
}
