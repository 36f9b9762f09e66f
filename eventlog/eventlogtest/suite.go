package eventlogtest

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"

	"errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
)

// Run runs the conformance suite. open must return a new, empty Store for
// each call, validating with NewValidator, and register its own cleanup
// with t.Cleanup. Subtests run sequentially; some start goroutines of
// their own and wait for them.
func Run(t *testing.T, open func(t *testing.T) eventlog.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s eventlog.Store)
	}{
		{"ValidatorInstalled", testValidatorInstalled},
		{"CreateEmpty", testCreateEmpty},
		{"RoundTrip", testRoundTrip},
		{"CreateRefused", testCreateRefused},
		{"RefusedAppendChangesNothing", testRefusedAppend},
		{"AppendAtomic", testAppendAtomic},
		{"ScanFrom", testScanFrom},
		{"NotFound", testNotFound},
		{"Sessions", testSessions},
		{"Fork", testFork},
		{"ForkRefused", testForkRefused},
		{"Import", testImport},
		{"ImportRefused", testImportRefused},
		{"SessionIDs", testSessionIDs},
		{"ConcurrentSessions", testConcurrentSessions},
		{"RacingAppends", testRacingAppends},
		{"Closed", testClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
}

func testValidatorInstalled(t *testing.T, s eventlog.Store) {
	mustCreate(t, s, "v", nil)
	err := s.Append(context.Background(), "v", []codec.Event{refuse(t, 0)})
	if !errors.Is(err, ErrRefused) || !errors.Is(err, eventlog.ErrInvalid) {
		t.Fatalf("Append(refused event) = %v, want ErrRefused marked ErrInvalid: "+
			"the store must validate with eventlogtest.NewValidator", err)
	}
}

func testCreateEmpty(t *testing.T, s eventlog.Store) {
	h := header("empty")
	mustCreate(t, s, "empty", nil)
	got, err := s.Head(context.Background(), "empty")
	if err != nil {
		t.Fatalf("Head = %v", err)
	}
	wantHead(t, got, h, nil)
	if got.LastTime != CreatedAt {
		t.Errorf("Head.LastTime = %v, want createdAt %v", got.LastTime, float64(CreatedAt))
	}
	if got.Header.ID != "empty" || got.Header.CreatedAt != CreatedAt {
		t.Errorf("Head.Header = %+v", got.Header)
	}
	if evs := scanAll(t, s, "empty", 0); len(evs) != 0 {
		t.Errorf("Scan of an empty session = %d events", len(evs))
	}
}

func testRoundTrip(t *testing.T, s eventlog.Store) {
	ctx := context.Background()
	h := header("rt")
	if err := s.Create(ctx, h); err != nil {
		t.Fatalf("Create = %v", err)
	}
	evs := turns(t, 3)
	evs = append(evs, note(t, 9, "tail"))
	// One event, then a batch, then the rest one by one.
	batches := [][]codec.Event{evs[:1], evs[1:6], evs[6:7], evs[7:8], evs[8:]}
	for _, b := range batches {
		if err := s.Append(ctx, "rt", b); err != nil {
			t.Fatalf("Append(seqs %d..) = %v", b[0].Seq, err)
		}
	}
	got := scanAll(t, s, "rt", 0)
	if !equalRaws(got, raws(evs)) {
		t.Fatalf("Scan returned payloads that differ from the appended ones")
	}
	for i, p := range got {
		line, _, err := codec.ToJSON(nil, p)
		if err != nil {
			t.Fatalf("ToJSON(seq %d) = %v", i, err)
		}
		want, _ := evs[i].AppendJSON(nil)
		if string(line) != string(want) {
			t.Errorf("seq %d: JSON %s, want %s", i, line, want)
		}
	}
	head, err := s.Head(ctx, "rt")
	if err != nil {
		t.Fatalf("Head = %v", err)
	}
	wantHead(t, head, h, raws(evs))
	if head.Turns != 3 {
		t.Errorf("Head.Turns = %d, want 3", head.Turns)
	}
}

func testCreateRefused(t *testing.T, s eventlog.Store) {
	ctx := context.Background()
	mustCreate(t, s, "dup", turns(t, 1))
	before := snap(t, s, "dup")
	// Headers built by hand: Create must decode Raw, not trust the view.
	noVersion := codec.SessionHeader{ID: "nv", Raw: codec.AppendMapHeader(nil, 3)}
	noVersion.Raw = codec.AppendString(codec.AppendString(noVersion.Raw, "type"), "session")
	noVersion.Raw = codec.AppendString(codec.AppendString(noVersion.Raw, "id"), "nv")
	noVersion.Raw = codec.AppendInt(codec.AppendString(noVersion.Raw, "createdAt"), 1)
	version1 := codec.SessionHeader{ID: "v1", Raw: codec.AppendMapHeader(nil, 4)}
	version1.Raw = codec.AppendString(codec.AppendString(version1.Raw, "type"), "session")
	version1.Raw = codec.AppendInt(codec.AppendString(version1.Raw, "version"), 1)
	version1.Raw = codec.AppendString(codec.AppendString(version1.Raw, "id"), "v1")
	version1.Raw = codec.AppendInt(codec.AppendString(version1.Raw, "createdAt"), 1)
	tests := []struct {
		name string
		h    codec.SessionHeader
		want error
	}{
		{name: "existing id", h: header("dup"), want: eventlog.ErrConflict},
		{name: "existing id, other header", h: codec.NewSessionHeader("dup", 5, "", "", 0), want: eventlog.ErrConflict},
		{name: "no version", h: noVersion, want: eventlog.ErrUnsupported},
		{name: "version 1", h: version1, want: eventlog.ErrUnsupported},
		{name: "empty raw", h: codec.SessionHeader{ID: "x"}, want: eventlog.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.Create(ctx, tt.h); !errors.Is(err, tt.want) {
				t.Fatalf("Create = %v, want %v", err, tt.want)
			}
		})
	}
	if after := snap(t, s, "dup"); !after.equal(before) {
		t.Errorf("a refused Create changed the existing session")
	}
	for _, id := range []string{"nv", "v1", "x"} {
		if _, err := s.Head(ctx, id); !errors.Is(err, eventlog.ErrNotFound) {
			t.Errorf("Head(%q) after a refused Create = %v, want ErrNotFound", id, err)
		}
	}
}

func testRefusedAppend(t *testing.T, s eventlog.Store) {
	ctx := context.Background()
	base := turns(t, 2) // seqs 0..5
	mustCreate(t, s, "r", base)
	mismatch := note(t, 6, "view")
	mismatch.Seq = 7 // the view says 7, the payload 6
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		evs  []codec.Event
		want error
	}{
		{name: "first seq behind", evs: []codec.Event{note(t, 5, "a")}, want: eventlog.ErrConflict},
		{name: "first seq ahead", evs: []codec.Event{note(t, 7, "a")}, want: eventlog.ErrConflict},
		{name: "first seq zero", evs: turns(t, 1), want: eventlog.ErrConflict},
		{name: "gap", evs: []codec.Event{note(t, 6, "a"), note(t, 8, "b")}, want: eventlog.ErrInvalid},
		{name: "repeat", evs: []codec.Event{note(t, 6, "a"), note(t, 6, "b")}, want: eventlog.ErrInvalid},
		{name: "reorder", evs: []codec.Event{note(t, 7, "a"), note(t, 6, "b")}, want: eventlog.ErrInvalid},
		{name: "empty batch", evs: nil, want: eventlog.ErrInvalid},
		{name: "view seq differs from payload", evs: []codec.Event{mismatch}, want: eventlog.ErrInvalid},
		{name: "payload not an event", evs: []codec.Event{{Raw: codec.AppendInt(nil, 6), Seq: 6}}, want: eventlog.ErrInvalid},
		{name: "validator refuses first", evs: []codec.Event{refuse(t, 6)}, want: ErrRefused},
		{name: "validator refuses last", evs: []codec.Event{note(t, 6, "a"), note(t, 7, "b"), refuse(t, 8)}, want: ErrRefused},
		{name: "cancelled context", ctx: cancelled, evs: []codec.Event{note(t, 6, "a")}, want: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snap(t, s, "r")
			c := tt.ctx
			if c == nil {
				c = ctx
			}
			if err := s.Append(c, "r", tt.evs); !errors.Is(err, tt.want) {
				t.Fatalf("Append = %v, want %v", err, tt.want)
			}
			if after := snap(t, s, "r"); !after.equal(before) {
				t.Fatalf("a refused Append changed the session")
			}
		})
	}
	// Nothing of the refusals remains, in the store or in memory: the
	// next append lands at seq 6 and the validator sees it in order.
	next := []codec.Event{note(t, 6, "a"), note(t, 7, "b")}
	if err := s.Append(ctx, "r", next); err != nil {
		t.Fatalf("Append after the refusals = %v", err)
	}
	got := scanAll(t, s, "r", 0)
	if !equalRaws(got, raws(append(base, next...))) {
		t.Fatalf("session after the refusals differs")
	}
	head, err := s.Head(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	wantHead(t, head, header("r"), got)
}

func testAppendAtomic(t *testing.T, s eventlog.Store) {
	ctx := context.Background()
	mustCreate(t, s, "a", nil)
	batch := turns(t, 2)
	batch = append(batch, refuse(t, 6), note(t, 7, "after"))
	if err := s.Append(ctx, "a", batch); !errors.Is(err, ErrRefused) {
		t.Fatalf("Append(batch with a refused event) = %v, want ErrRefused", err)
	}
	if got := scanAll(t, s, "a", 0); len(got) != 0 {
		t.Fatalf("a refused batch left %d events", len(got))
	}
	head, err := s.Head(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	wantHead(t, head, header("a"), nil)
	// The six good events as one batch land atomically.
	if err := s.Append(ctx, "a", batch[:6]); err != nil {
		t.Fatalf("Append(6 events) = %v", err)
	}
	if got := scanAll(t, s, "a", 0); !equalRaws(got, raws(batch[:6])) {
		t.Fatalf("session differs after a 6-event append")
	}
}

func testScanFrom(t *testing.T, s eventlog.Store) {
	ctx := context.Background()
	evs := turns(t, 100) // 300 events: more than one read chunk in most stores
	mustCreate(t, s, "s", evs)
	tests := []struct {
		name string
		from int64
		want [][]byte
	}{
		{name: "start", from: 0, want: raws(evs)},
		{name: "middle", from: 151, want: raws(evs[151:])},
		{name: "last", from: 299, want: raws(evs[299:])},
		{name: "end", from: 300, want: nil},
		{name: "past the end", from: 1000, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := scanAll(t, s, "s", tt.from); !equalRaws(got, tt.want) {
				t.Fatalf("Scan(from %d) = %d events, want %d", tt.from, len(got), len(tt.want))
			}
		})
	}
	if _, err := s.Scan(ctx, "s", -1); !errors.Is(err, eventlog.ErrInvalid) {
		t.Errorf("Scan(from -1) = %v, want ErrInvalid", err)
	}
	// An iterator sees the session as it was when the scan began.
	it, err := s.Scan(ctx, "s", 298)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, "s", []codec.Event{note(t, 300, "late")}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		_, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Next = %v", err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("scan from 298 begun before an append saw %d events, want 2", n)
	}
	if err := it.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if err := it.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func testNotFound(t *testing.T, s eventlog.Store) {
	ctx := context.Background()
	mustCreate(t, s, "exists", turns(t, 1))
	calls := []struct {
		name string
		fn   func() error
	}{
		{"Head", func() error { _, err := s.Head(ctx, "nope"); return err }},
		{"Scan", func() error { _, err := s.Scan(ctx, "nope", 0); return err }},
		{"Append", func() error { return s.Append(ctx, "nope", []codec.Event{note(t, 0, "x")}) }},
		{"Fork", func() error { return s.Fork(ctx, "nope", 2, childHeader("c", "nope", 2)) }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			if err := c.fn(); !errors.Is(err, eventlog.ErrNotFound) {
				t.Fatalf("%s(unknown session) = %v, want ErrNotFound", c.name, err)
			}
		})
	}
	if _, err := s.Head(ctx, "c"); !errors.Is(err, eventlog.ErrNotFound) {
		t.Errorf("a fork of an unknown session left a child: %v", err)
	}
}

func testSessions(t *testing.T, s eventlog.Store) {
	ctx := context.Background()
	ids := []string{"m", "b", "z", "a"}
	for i, id := range ids {
		mustCreate(t, s, id, turns(t, i))
	}
	heads, err := s.Sessions(ctx)
	if err != nil {
		t.Fatalf("Sessions = %v", err)
	}
	var got []string
	for _, h := range heads {
		got = append(got, h.Header.ID)
		one, err := s.Head(ctx, h.Header.ID)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(one) != fmt.Sprint(h) {
			t.Errorf("Sessions()[%q] differs from Head(%q)", h.Header.ID, h.Header.ID)
		}
	}
	if want := "[a b m z]"; fmt.Sprint(got) != want {
		t.Errorf("Sessions ids = %v, want %v", got, want)
	}
}

func testFork(t *testing.T, s eventlog.Store) {
	ctx := context.Background()
	src := turns(t, 3)
	src = append(src, note(t, 9, "open turn"))
	mustCreate(t, s, "src", src)
	before := snap(t, s, "src")
	for _, at := range []int64{2, 5, 8} {
		id := fmt.Sprintf("child-%d", at)
		h := childHeader(id, "src", at)
		if err := s.Fork(ctx, "src", at, h); err != nil {
			t.Fatalf("Fork(at %d) = %v", at, err)
		}
		got := scanAll(t, s, id, 0)
		if !equalRaws(got, before.events[:at+1]) {
			t.Fatalf("child at %d: events differ from the source's prefix", at)
		}
		head, err := s.Head(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		wantHead(t, head, h, got)
		if head.Header.ParentSession != "src" || head.Header.SeedLength != at+1 {
			t.Errorf("child header lineage = %q/%d, want src/%d", head.Header.ParentSession, head.Header.SeedLength, at+1)
		}
		if head.Chain == before.head.Chain {
			t.Errorf("child chain equals the source's: it must start from the child's own header")
		}
		// The child is a session of its own: it takes appends, the source
		// is untouched.
		if err := s.Append(ctx, id, []codec.Event{note(t, at+1, "child")}); err != nil {
			t.Fatalf("Append to child = %v", err)
		}
	}
	if after := snap(t, s, "src"); !after.equal(before) {
		t.Errorf("Fork changed the source session")
	}
}

func testForkRefused(t *testing.T, s eventlog.Store) {
	ctx := context.Background()
	mustCreate(t, s, "src", turns(t, 2))
	mustCreate(t, s, "taken", nil)
	tests := []struct {
		name  string
		at    int64
		child codec.SessionHeader
		want  error
	}{
		{name: "at a turn/start", at: 0, child: childHeader("c", "src", 0), want: eventlog.ErrInvalid},
		{name: "at a user/message", at: 1, child: childHeader("c", "src", 1), want: eventlog.ErrInvalid},
		{name: "at past the end", at: 8, child: childHeader("c", "src", 8), want: eventlog.ErrInvalid},
		{name: "at negative", at: -1, child: childHeader("c", "src", -1), want: eventlog.ErrInvalid},
		{name: "wrong parentSession", at: 2, child: childHeader("c", "other", 2), want: eventlog.ErrInvalid},
		{name: "no parentSession", at: 2, child: header("c"), want: eventlog.ErrInvalid},
		{name: "wrong seedLength", at: 2, child: childHeader("c", "src", 3), want: eventlog.ErrInvalid},
		{name: "existing child", at: 2, child: childHeader("taken", "src", 2), want: eventlog.ErrConflict},
		{name: "child is the source", at: 2, child: childHeader("src", "src", 2), want: eventlog.ErrConflict},
	}
	before := snap(t, s, "src")
	taken := snap(t, s, "taken")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.Fork(ctx, "src", tt.at, tt.child); !errors.Is(err, tt.want) {
				t.Fatalf("Fork = %v, want %v", err, tt.want)
			}
			if _, err := s.Head(ctx, "c"); !errors.Is(err, eventlog.ErrNotFound) {
				t.Fatalf("a refused Fork left a child: %v", err)
			}
		})
	}
	if !snap(t, s, "src").equal(before) || !snap(t, s, "taken").equal(taken) {
		t.Errorf("a refused Fork changed a session")
	}
}

func testImport(t *testing.T, s eventlog.Store) {
	ctx := context.Background()
	tests := []struct {
		name string
		evs  []codec.Event
	}{
		{name: "empty", evs: nil},
		{name: "one turn", evs: turns(t, 1)},
		{name: "open last turn", evs: append(turns(t, 2), note(t, 6, "open"))},
		{name: "5000 events", evs: turns(t, 1667)[:5000]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := header(tt.name)
			n, err := s.Import(ctx, h, &sliceSource{evs: tt.evs})
			if err != nil {
				t.Fatalf("Import = %v", err)
			}
			if n != int64(len(tt.evs)) {
				t.Errorf("Import = %d events, want %d", n, len(tt.evs))
			}
			got := scanAll(t, s, tt.name, 0)
			if !equalRaws(got, raws(tt.evs)) {
				t.Fatalf("imported events differ")
			}
			head, err := s.Head(ctx, tt.name)
			if err != nil {
				t.Fatal(err)
			}
			wantHead(t, head, h, got)
			// An imported session takes appends (its validator state is
			// built from what was imported).
			if err := s.Append(ctx, tt.name, []codec.Event{note(t, n, "after import")}); err != nil {
				t.Fatalf("Append after Import = %v", err)
			}
		})
	}
}

func testImportRefused(t *testing.T, s eventlog.Store) {
	ctx := context.Background()
	mustCreate(t, s, "taken", turns(t, 1))
	taken := snap(t, s, "taken")
	many := turns(t, 1700) // 5100 events: fails after more than one default batch
	gap := turns(t, 2)
	gap[4].Seq, gap[5].Seq = 5, 6
	gapped := append(turns(t, 2)[:4], note(t, 5, "gap"))
	tests := []struct {
		name string
		id   string
		src  eventlog.Source
		want error
	}{
		{name: "existing id", id: "taken", src: &sliceSource{evs: turns(t, 2)}, want: eventlog.ErrConflict},
		{name: "source fails at once", id: "x", src: &sliceSource{err: errSourceBroken}, want: errSourceBroken},
		{name: "source fails midway", id: "x", src: &sliceSource{evs: many[:5000], err: errSourceBroken}, want: errSourceBroken},
		{name: "seq gap", id: "x", src: &sliceSource{evs: gapped}, want: eventlog.ErrInvalid},
		{name: "view seq differs", id: "x", src: &sliceSource{evs: gap}, want: eventlog.ErrInvalid},
		{name: "validator refuses midway", id: "x", src: &sliceSource{evs: append(many[:4999:4999], refuse(t, 4999))}, want: ErrRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.Import(ctx, header(tt.id), tt.src); !errors.Is(err, tt.want) {
				t.Fatalf("Import = %v, want %v", err, tt.want)
			}
			if tt.id != "x" {
				return
			}
			if _, err := s.Head(ctx, "x"); !errors.Is(err, eventlog.ErrNotFound) {
				t.Fatalf("a failed Import left a session: %v", err)
			}
			heads, err := s.Sessions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range heads {
				if h.Header.ID == "x" {
					t.Fatalf("Sessions lists the failed import")
				}
			}
		})
	}
	if !snap(t, s, "taken").equal(taken) {
		t.Errorf("a refused Import changed the existing session")
	}
	// Nothing of the failures remains: the same id imports cleanly.
	if n, err := s.Import(ctx, header("x"), &sliceSource{evs: turns(t, 2)}); err != nil || n != 6 {
		t.Fatalf("Import after the failures = %d, %v", n, err)
	}
}

func testConcurrentSessions(t *testing.T, s eventlog.Store) {
	ctx := context.Background()
	const sessions, appends = 16, 12
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for g := 0; g < sessions; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("s%02d", g)
			if err := s.Create(ctx, header(id)); err != nil {
				errs <- err
				return
			}
			for i := 0; i < appends; i++ {
				ev, err := codec.ParseEvent([]byte(fmt.Sprintf(`{"type":"x/note","seq":%d,"time":%d,"data":{"g":%d,"i":%d}}`,
					i, eventTime(int64(i)), g, i)), codec.Limits{})
				if err == nil {
					err = s.Append(ctx, id, []codec.Event{ev})
				}
				if err != nil {
					errs <- fmt.Errorf("session %s append %d: %w", id, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for g := 0; g < sessions; g++ {
		id := fmt.Sprintf("s%02d", g)
		got := scanAll(t, s, id, 0)
		if len(got) != appends {
			t.Errorf("session %s has %d events, want %d", id, len(got), appends)
		}
	}
}

func testRacingAppends(t *testing.T, s eventlog.Store) {
	ctx := context.Background()
	mustCreate(t, s, "race", nil)
	const writers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; {
				h, err := s.Head(ctx, "race")
				if err != nil {
					errs <- err
					return
				}
				ev, err := codec.ParseEvent([]byte(fmt.Sprintf(`{"type":"x/note","seq":%d,"time":%d,"data":{"g":%d,"i":%d}}`,
					h.Next, eventTime(h.Next), g, i)), codec.Limits{})
				if err != nil {
					errs <- err
					return
				}
				err = s.Append(ctx, "race", []codec.Event{ev})
				switch {
				case err == nil:
					i++
				case errors.Is(err, eventlog.ErrConflict):
					// Lost the race for this seq: retry at the new head.
				default:
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := scanAll(t, s, "race", 0)
	if len(got) != writers*each {
		t.Fatalf("session has %d events, want %d", len(got), writers*each)
	}
	// Every (writer, i) landed exactly once, and each writer's in order.
	next := make([]int64, writers)
	for seq, p := range got {
		var w struct{ g, i int64 }
		if err := readNote(p, &w.g, &w.i); err != nil {
			t.Fatalf("seq %d: %v", seq, err)
		}
		if w.i != next[w.g] {
			t.Fatalf("seq %d: writer %d event %d, want %d", seq, w.g, w.i, next[w.g])
		}
		next[w.g]++
	}
	head, err := s.Head(ctx, "race")
	if err != nil {
		t.Fatal(err)
	}
	wantHead(t, head, header("race"), got)
}

// testClosed checks that every method of a closed store fails with
// ErrClosed. The suite tests every class with the standard library's
// errors.Is: a host that imports "errors" must get the answers a host
// that imports cockroachdb/errors gets.
func testClosed(t *testing.T, s eventlog.Store) {
	ctx := context.Background()
	mustCreate(t, s, "c", turns(t, 1))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		name string
		fn   func() error
	}{
		{"Create", func() error { return s.Create(ctx, header("d")) }},
		{"Append", func() error { return s.Append(ctx, "c", []codec.Event{note(t, 3, "late")}) }},
		{"Head", func() error { _, err := s.Head(ctx, "c"); return err }},
		{"Sessions", func() error { _, err := s.Sessions(ctx); return err }},
		{"Scan", func() error { _, err := s.Scan(ctx, "c", 0); return err }},
		{"Fork", func() error { return s.Fork(ctx, "c", 2, childHeader("f", "c", 2)) }},
		{"Import", func() error { _, err := s.Import(ctx, header("i"), &sliceSource{}); return err }},
	}
	for _, c := range calls {
		if err := c.fn(); !errors.Is(err, eventlog.ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", c.name, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("a second Close = %v, want nil", err)
	}
}

// readNote reads data.g and data.i of a racing-append event.
func readNote(p []byte, g, i *int64) error {
	ev, err := codec.DecodeEvent(p)
	if err != nil {
		return err
	}
	if ev.Type != "x/note" {
		return fmt.Errorf("type %s", ev.Type)
	}
	line, _, err := codec.ToJSON(nil, p)
	if err != nil {
		return err
	}
	var seq, tm int64
	if _, err := fmt.Sscanf(string(line), `{"type":"x/note","seq":%d,"time":%d,"data":{"g":%d,"i":%d}}`, &seq, &tm, g, i); err != nil {
		return fmt.Errorf("parse %s: %w", line, err)
	}
	return nil
}
