package boltlog_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
)

// errInjected is the failure injected into a write by the tests.
var errInjected = errors.New("eventlog_test: injected write failure")

// holder holds the committer before the first batch it sees after hold
// was called, until release, so that a test can queue requests behind it
// deterministically. It records the size of every batch.
type holder struct {
	mu    sync.Mutex
	sizes []int
	gate  chan struct{}
	once  sync.Once
}

// hold installs the hooks on l (write is the write hook, or nil).
func hold(t *testing.T, l *boltlog.Log, write func(session string) error) *holder {
	h := &holder{gate: make(chan struct{})}
	boltlog.SetTestHooks(l, func(n int) {
		h.mu.Lock()
		first := len(h.sizes) == 0
		h.sizes = append(h.sizes, n)
		h.mu.Unlock()
		if first {
			<-h.gate
		}
	}, write)
	t.Cleanup(h.release)
	return h
}

func (h *holder) release() { h.once.Do(func() { close(h.gate) }) }

func (h *holder) batches() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int(nil), h.sizes...)
}

// waitHeld yields until the committer is held.
func (h *holder) waitHeld() {
	for len(h.batches()) == 0 {
		runtime.Gosched()
	}
}

// waitQueued yields until n requests wait for the committer.
func waitQueued(l *boltlog.Log, n int) {
	for boltlog.QueueLen(l) < n {
		runtime.Gosched()
	}
}

func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	l, _ := openLog(t, &eventlog.Options{NoSync: true})
	h := hold(t, l, nil)
	const sessions = 10
	// The first Create is taken by the committer and held; the others
	// queue behind it.
	first := make(chan error, 1)
	go func() { first <- l.Create(ctx, header("s00")) }()
	h.waitHeld()
	var wg sync.WaitGroup
	errs := make([]error, sessions)
	for i := 1; i < sessions; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = l.Create(ctx, header(fmt.Sprintf("s%02d", i)))
		}()
	}
	waitQueued(l, sessions-1)
	h.release()
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatalf("Create(s00) = %v", err)
	}
	for i, err := range errs[1:] {
		if err != nil {
			t.Errorf("Create(s%02d) = %v", i+1, err)
		}
	}
	if got := fmt.Sprint(h.batches()); got != "[1 9]" {
		t.Errorf("batches = %s, want [1 9]", got)
	}
	if txs, writes := l.CommitStats(); txs != 2 || writes != sessions {
		t.Errorf("CommitStats = %d transactions, %d writes; want 2, %d", txs, writes, sessions)
	}
	// Appends to every session at once: the queued ones share a commit.
	txs0, _ := l.CommitStats()
	var wg2 sync.WaitGroup
	for i := 0; i < sessions; i++ {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			if err := l.Append(ctx, fmt.Sprintf("s%02d", i), turnEvents(t, 0, 1)); err != nil {
				t.Errorf("Append(s%02d) = %v", i, err)
			}
		}()
	}
	wg2.Wait()
	if txs, _ := l.CommitStats(); txs-txs0 > sessions {
		t.Errorf("%d appends took %d transactions", sessions, txs-txs0)
	}
}

// TestGroupCommitIsolation: in one batch, a request whose write fails
// (an injected failure) fails alone: every other one commits, in one log
// record.
func TestGroupCommitIsolation(t *testing.T) {
	ctx := context.Background()
	l, _ := openLog(t, &eventlog.Options{NoSync: true})
	ids := []string{"a", "b", "bad", "c"}
	for _, id := range append([]string{"first"}, ids...) {
		if err := l.Create(ctx, header(id)); err != nil {
			t.Fatal(err)
		}
	}
	h := hold(t, l, func(session string) error {
		if session == "bad" {
			return errInjected
		}
		return nil
	})
	held := make(chan error, 1)
	go func() { held <- l.Append(ctx, "first", turnEvents(t, 0, 1)) }()
	h.waitHeld()
	results := make(map[string]chan error)
	for _, id := range ids {
		results[id] = make(chan error, 1)
	}
	for _, id := range ids {
		go func() { results[id] <- l.Append(ctx, id, turnEvents(t, 0, 1)) }()
	}
	waitQueued(l, len(ids))
	txs0, _ := l.CommitStats()
	h.release()
	if err := <-held; err != nil {
		t.Fatalf("Append(first) = %v", err)
	}
	for _, id := range ids {
		err := <-results[id]
		if id == "bad" {
			if !errors.Is(err, errInjected) {
				t.Errorf("Append(bad) = %v, want the injected failure", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Append(%s) = %v", id, err)
		}
	}
	if got := fmt.Sprint(h.batches()); got != "[1 4]" {
		t.Errorf("batches = %s, want [1 4]", got)
	}
	// The held batch, then the batch of four: one log record for the
	// three that passed.
	if txs, _ := l.CommitStats(); txs-txs0 != 2 {
		t.Errorf("the two batches took %d commits, want 2", txs-txs0)
	}
	for _, id := range ids {
		hd, err := l.Head(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		want := int64(3)
		if id == "bad" {
			want = 0
		}
		if hd.Next != want {
			t.Errorf("Head(%s).Next = %d, want %d", id, hd.Next, want)
		}
	}
	// The failed session's state was dropped: it appends cleanly at seq 0
	// once writes work again.
	boltlog.SetTestHooks(l, nil, nil)
	if err := l.Append(ctx, "bad", turnEvents(t, 0, 1)); err != nil {
		t.Fatalf("Append(bad) after the failure = %v", err)
	}
}

// TestAppendSameSessionSerialised: appends racing on one session never
// interleave; the loser sees the winner's effect as ErrConflict.
func TestAppendSameSessionSerialised(t *testing.T) {
	ctx := context.Background()
	l, _ := openLog(t, &eventlog.Options{NoSync: true})
	if err := l.Create(ctx, header("s")); err != nil {
		t.Fatal(err)
	}
	const racers = 16
	var wg sync.WaitGroup
	errs := make([]error, racers)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			evs := []codec.Event{noteEvent(t, 0, fmt.Sprintf("r%d-a", i)), noteEvent(t, 1, fmt.Sprintf("r%d-b", i))}
			errs[i] = l.Append(ctx, "s", evs)
		}()
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			t.Fatalf("racers %d and %d both won seq 0", won, i)
		case err == nil:
			won = i
		case !errors.Is(err, eventlog.ErrConflict):
			t.Fatalf("racer %d: %v, want ErrConflict", i, err)
		}
	}
	it, err := l.Scan(ctx, "s", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for seq, suffix := range []string{"a", "b"} {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		line, _ := ev.AppendJSON(nil)
		if want := fmt.Sprintf(`"marker":"r%d-%s"`, won, suffix); !strings.Contains(string(line), want) {
			t.Errorf("seq %d = %s, want the winner's %s", seq, line, want)
		}
	}
}
