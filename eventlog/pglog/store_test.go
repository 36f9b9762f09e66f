package pglog_test

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/eventlogtest"
	"github.com/sessionlog/sessionlog/eventlog/pglog"
	"github.com/sessionlog/sessionlog/internal/pgtest"
)

// note returns an event of a type the engine does not know.
func note(t testing.TB, seq int64) codec.Event {
	t.Helper()
	ev, err := codec.ParseEvent([]byte(fmt.Sprintf(`{"type":"x/note","seq":%d,"time":%d,"data":{"n":%d}}`, seq, 1000+seq, seq)), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func openAt(t *testing.T, u string, o eventlog.Options) *pglog.Store {
	t.Helper()
	s, err := pglog.Open(context.Background(), u, &o, nil)
	if err != nil {
		t.Fatalf("Open = %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var unvalidated = eventlog.Options{Unvalidated: true}

// TestConformanceSerializable runs the suite with every transaction
// SERIALIZABLE, the isolation CockroachDB always uses: racing writers
// then meet serialization failures (40001), which the store retries.
func TestConformanceSerializable(t *testing.T) {
	eventlogtest.Run(t, func(t *testing.T) eventlog.Store {
		u, _ := pgtest.Schema(t)
		return openAt(t, u+"&default_transaction_isolation=serializable",
			eventlog.Options{NewValidator: eventlogtest.NewValidator})
	})
}

// TestTwoStoresOneSession: two Stores on one database (as two processes
// on two machines) share a session. Each sees the other's appends: an
// append at a seq the other took is a conflict, one at the true next seq
// succeeds although this store's cached state was behind.
func TestTwoStoresOneSession(t *testing.T) {
	u, _ := pgtest.Schema(t)
	a, b := openAt(t, u, unvalidated), openAt(t, u, unvalidated)
	ctx := context.Background()
	if err := a.Create(ctx, codec.NewSessionHeader("s", 1, "", "", 0)); err != nil {
		t.Fatal(err)
	}
	if err := b.Create(ctx, codec.NewSessionHeader("s", 1, "", "", 0)); !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("second Create = %v, want ErrConflict", err)
	}
	if err := a.Append(ctx, "s", []codec.Event{note(t, 0), note(t, 1)}); err != nil {
		t.Fatal(err)
	}
	if err := b.Append(ctx, "s", []codec.Event{note(t, 2)}); err != nil {
		t.Fatalf("b appends after a: %v", err)
	}
	if err := a.Append(ctx, "s", []codec.Event{note(t, 2)}); !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("a appends at a taken seq: %v, want ErrConflict", err)
	}
	if err := a.Append(ctx, "s", []codec.Event{note(t, 3)}); err != nil {
		t.Fatalf("a appends at the true next seq: %v", err)
	}
	ha, _ := a.Head(ctx, "s")
	hb, _ := b.Head(ctx, "s")
	if ha.Chain != hb.Chain || ha.Next != hb.Next || ha.StoredBytes != hb.StoredBytes || ha.Next != 4 {
		t.Fatalf("heads differ or wrong: %+v / %+v", ha, hb)
	}
}

// TestRaceAcrossStores: writers on several Stores race for the same seqs
// of shared sessions. Each seq has one winner, every error is a conflict,
// and the log holds exactly the winners' events; also with every
// transaction SERIALIZABLE, where the losers' transactions fail with
// 40001 and are retried (the transaction count shows the reruns).
func TestRaceAcrossStores(t *testing.T) {
	for _, tt := range []struct{ name, params string }{
		{"read committed", ""},
		{"serializable", "&default_transaction_isolation=serializable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u, _ := pgtest.Schema(t)
			raceAcrossStores(t, u+tt.params)
		})
	}
}

func raceAcrossStores(t *testing.T, u string) {
	const stores, sessions, rounds = 4, 3, 30
	ss := make([]*pglog.Store, stores)
	for i := range ss {
		ss[i] = openAt(t, u, unvalidated)
	}
	ctx := context.Background()
	for j := 0; j < sessions; j++ {
		if err := ss[0].Create(ctx, codec.NewSessionHeader(fmt.Sprintf("s%d", j), 1, "", "", 0)); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	wins := map[string]int{}
	var wg sync.WaitGroup
	for i := range ss {
		for j := 0; j < sessions; j++ {
			wg.Add(1)
			go func(s *pglog.Store, id string) {
				defer wg.Done()
				for r := 0; r < rounds; r++ {
					h, err := s.Head(ctx, id)
					if err != nil {
						t.Error(err)
						return
					}
					err = s.Append(ctx, id, []codec.Event{note(t, h.Next)})
					switch {
					case err == nil:
						mu.Lock()
						wins[id]++
						mu.Unlock()
					case !errors.Is(err, eventlog.ErrConflict):
						t.Errorf("append: %v", err)
						return
					}
				}
			}(ss[i], fmt.Sprintf("s%d", j))
		}
	}
	wg.Wait()
	total := 0
	for j := 0; j < sessions; j++ {
		id := fmt.Sprintf("s%d", j)
		h, err := ss[1].Head(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if h.Next != int64(wins[id]) || h.Next < rounds {
			t.Errorf("%s: %d events stored, %d appends won (want at least %d)", id, h.Next, wins[id], rounds)
		}
		it, err := ss[2].Scan(ctx, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := int64(0)
		for {
			ev, err := it.Next()
			if err == io.EOF {
				break
			}
			if err != nil || ev.Seq != n {
				t.Fatalf("%s: scan at %d: %v (seq %d)", id, n, err, ev.Seq)
			}
			n++
		}
		total += int(n)
	}
	if total < sessions*rounds {
		t.Fatalf("only %d events", total)
	}
	var txs, writes int64
	for _, s := range ss {
		tx, w := s.CommitStats()
		txs, writes = txs+tx, writes+w
	}
	t.Logf("%d events; %d writes committed in %d transactions (reruns and conflicts included)", total, writes, txs)
}

// TestStagedImport: an import is invisible until published; what a
// crashed importer left is removed by a read-write Open once its lease has
// run out, and reserves its id until then.
func TestStagedImport(t *testing.T) {
	u, _ := pgtest.Schema(t)
	ctx := context.Background()
	s := openAt(t, u, eventlog.Options{Unvalidated: true, ImportBatch: 2})
	block := make(chan struct{})
	seen := make(chan struct{})
	src := &gate{evs: []codec.Event{note(t, 0), note(t, 1), note(t, 2), note(t, 3), note(t, 4)}, at: 3, seen: seen, block: block}
	done := make(chan error, 1)
	go func() {
		_, err := s.Import(ctx, codec.NewSessionHeader("imp", 1, "", "", 0), src)
		done <- err
	}()
	<-seen // two batches are stored, unpublished
	other := openAt(t, u, unvalidated)
	if _, err := other.Head(ctx, "imp"); !errors.Is(err, eventlog.ErrNotFound) {
		t.Errorf("Head of a staged session = %v, want ErrNotFound", err)
	}
	if heads, _ := other.Sessions(ctx); len(heads) != 0 {
		t.Errorf("Sessions lists a staged session")
	}
	if err := other.Create(ctx, codec.NewSessionHeader("imp", 1, "", "", 0)); !errors.Is(err, eventlog.ErrConflict) {
		t.Errorf("Create of a staged id = %v, want ErrConflict", err)
	}
	close(block)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if h, err := other.Head(ctx, "imp"); err != nil || h.Next != 5 {
		t.Fatalf("published: %+v, %v", h, err)
	}

	// A crashed import: an unpublished row and its events, lease expired.
	pgtest.Exec(t, u, `INSERT INTO sessionlog_sessions SELECT 'dead', header, false, '\x01', now() - interval '1 second',
		0, 0, 0, chain, 0 FROM sessionlog_sessions WHERE id = 'imp';
		INSERT INTO sessionlog_events SELECT 'dead', seq, rec FROM sessionlog_events WHERE session = 'imp'`)
	if err := other.Create(ctx, codec.NewSessionHeader("dead", 1, "", "", 0)); !errors.Is(err, eventlog.ErrConflict) {
		t.Errorf("Create of a crashed import's id = %v, want ErrConflict", err)
	}
	openAt(t, u, unvalidated) // removes it
	if err := other.Create(ctx, codec.NewSessionHeader("dead", 1, "", "", 0)); err != nil {
		t.Fatalf("Create after the cleanup = %v", err)
	}
	if h, _ := other.Head(ctx, "dead"); h.Next != 0 {
		t.Fatalf("the crashed import's events survived: %+v", h)
	}
}

// gate is a Source that stops before event at until block is closed.
type gate struct {
	evs         []codec.Event
	at          int
	i           int
	seen, block chan struct{}
}

func (g *gate) Next() (codec.Event, error) {
	if g.i == len(g.evs) {
		return codec.Event{}, io.EOF
	}
	if g.i == g.at {
		close(g.seen)
		<-g.block
	}
	g.i++
	return g.evs[g.i-1], nil
}

// TestReadOnlyAndFormat: a read-only Store refuses writes, runs read-only
// transactions, and a schema newer than the code is ErrUnsupported.
func TestReadOnlyAndFormat(t *testing.T) {
	u, _ := pgtest.Schema(t)
	ctx := context.Background()
	if _, err := pglog.Open(ctx, u, &eventlog.Options{ReadOnly: true}, nil); !errors.Is(err, eventlog.ErrNotFound) {
		t.Fatalf("read-only Open of an empty schema = %v, want ErrNotFound", err)
	}
	if _, err := pglog.Open(ctx, u, nil, nil); !errors.Is(err, eventlog.ErrNoValidation) {
		t.Fatalf("writable Open without a validator = %v, want ErrNoValidation", err)
	}
	w := openAt(t, u, unvalidated)
	if err := w.Create(ctx, codec.NewSessionHeader("s", 1, "", "", 0)); err != nil {
		t.Fatal(err)
	}
	r := openAt(t, u, eventlog.Options{ReadOnly: true})
	if err := r.Create(ctx, codec.NewSessionHeader("t", 1, "", "", 0)); !errors.Is(err, eventlog.ErrReadOnly) {
		t.Fatalf("Create on a read-only store = %v, want ErrReadOnly", err)
	}
	if _, err := r.Head(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	// A version 1 schema reads as it is and is upgraded by a read-write
	// Open.
	pgtest.Exec(t, u, `UPDATE sessionlog_meta SET value = 1 WHERE name = 'format'`)
	r1 := openAt(t, u, eventlog.Options{ReadOnly: true})
	if _, err := r1.Head(ctx, "s"); err != nil {
		t.Fatalf("Head on a version 1 schema: %v", err)
	}
	u2 := openAt(t, u, unvalidated)
	if _, err := u2.Head(ctx, "s"); err != nil {
		t.Fatalf("Head after the upgrade: %v", err)
	}
	if v := pgtest.QueryInt(t, u, `SELECT value FROM sessionlog_meta WHERE name = 'format'`); v != pglog.FormatVersion {
		t.Fatalf("after a read-write Open the schema version is %d, want %d", v, pglog.FormatVersion)
	}
	pgtest.Exec(t, u, fmt.Sprintf(`UPDATE sessionlog_meta SET value = %d WHERE name = 'format'`, pglog.FormatVersion+1))
	for _, o := range []eventlog.Options{{ReadOnly: true}, unvalidated} {
		if _, err := pglog.Open(ctx, u, &o, nil); !errors.Is(err, eventlog.ErrUnsupported) {
			t.Fatalf("Open of a newer schema = %v, want ErrUnsupported", err)
		}
	}
}

// TestCancel: a cancelled context stops a scan and an append before it
// is queued, and leaves the store as it was.
func TestCancel(t *testing.T) {
	u, _ := pgtest.Schema(t)
	s := openAt(t, u, unvalidated)
	ctx := context.Background()
	if err := s.Create(ctx, codec.NewSessionHeader("s", 1, "", "", 0)); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Append(cctx, "s", []codec.Event{note(t, 0)}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Append(cancelled) = %v", err)
	}
	if _, err := s.Scan(cctx, "s", 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Scan(cancelled) = %v", err)
	}
	tctx, cancel2 := context.WithTimeout(ctx, time.Nanosecond)
	defer cancel2()
	time.Sleep(time.Millisecond)
	if _, err := s.Head(tctx, "s"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Head(expired) = %v", err)
	}
	if h, _ := s.Head(ctx, "s"); h.Next != 0 {
		t.Fatalf("a cancelled append wrote: %+v", h)
	}
}
