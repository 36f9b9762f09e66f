package boltlog_test

import (
	"context"
	"io"
	"sync"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/eventlog/eventlogtest"
)

// counting wraps eventlogtest.NewValidator and counts what the store asks
// of it.
type counting struct {
	mu        sync.Mutex
	created   map[string]int
	validated map[string]int
}

func newCounting() *counting {
	return &counting{created: map[string]int{}, validated: map[string]int{}}
}

func (c *counting) New(h codec.SessionHeader) eventlog.Validator {
	c.mu.Lock()
	c.created[h.ID]++
	c.mu.Unlock()
	return countingValidator{c: c, id: h.ID, v: eventlogtest.NewValidator(h)}
}

func (c *counting) counts(id string) (created, validated int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.created[id], c.validated[id]
}

type countingValidator struct {
	c  *counting
	id string
	v  eventlog.Validator
}

func (v countingValidator) Validate(ev *codec.Event) error {
	v.c.mu.Lock()
	v.c.validated[v.id]++
	v.c.mu.Unlock()
	return v.v.Validate(ev)
}

// TestValidatorCache: a cached session validates only what is appended;
// an evicted or refused one is rebuilt by replaying its stored events into
// a fresh validator, once.
func TestValidatorCache(t *testing.T) {
	ctx := context.Background()
	c := newCounting()
	l, _ := openLog(t, &eventlog.Options{NoSync: true, ValidatorCache: 2, NewValidator: c.New})
	for _, id := range []string{"a", "b"} {
		if err := l.Create(ctx, header(id)); err != nil {
			t.Fatal(err)
		}
	}
	// Cached: 10 appends of 3 events validate 30 events, with one
	// validator.
	for i := int64(0); i < 10; i++ {
		if err := l.Append(ctx, "a", turnEvents(t, 3*i, i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if created, validated := c.counts("a"); created != 1 || validated != 30 {
		t.Errorf("cached session: %d validators, %d validations; want 1, 30", created, validated)
	}
	// A third session evicts the least recently used one (b).
	if err := l.Create(ctx, header("c")); err != nil {
		t.Fatal(err)
	}
	if n := boltlog.CachedStates(l); n != 2 {
		t.Errorf("cached states = %d, want 2", n)
	}
	if err := l.Append(ctx, "a", turnEvents(t, 30, 11)); err != nil {
		t.Fatal(err)
	}
	if created, _ := c.counts("a"); created != 1 {
		t.Errorf("session a was rebuilt although it was recently used")
	}
	// b was evicted: rebuilt with a fresh validator (it has no events).
	if err := l.Append(ctx, "b", turnEvents(t, 0, 1)); err != nil {
		t.Fatal(err)
	}
	if created, validated := c.counts("b"); created != 2 || validated != 3 {
		t.Errorf("evicted session b: %d validators, %d validations; want 2, 3", created, validated)
	}
	// A refusal drops a's state: the next append replays its 33 events
	// into a fresh validator, then validates the new ones.
	err := l.Append(ctx, "a", []codec.Event{noteEvent(t, 33, "ok"), parse(t, `{"type":"`+eventlogtest.RefuseType+`","seq":34,"time":1,"data":{}}`)})
	if !errors.Is(err, eventlogtest.ErrRefused) {
		t.Fatalf("refused Append = %v", err)
	}
	_, before := c.counts("a")
	if err := l.Append(ctx, "a", []codec.Event{noteEvent(t, 33, "ok")}); err != nil {
		t.Fatalf("Append after a refusal = %v", err)
	}
	if created, validated := c.counts("a"); created != 2 || validated-before != 33+1 {
		t.Errorf("after a refusal: %d validators, %d validations; want 2, 34", created, validated-before)
	}
}

// TestValidatorAtImportAndFork: imported and forked sessions are
// validated as they are written and their state is cached, so the first
// append after them replays nothing.
func TestValidatorAtImportAndFork(t *testing.T) {
	ctx := context.Background()
	c := newCounting()
	l, _ := openLog(t, &eventlog.Options{NoSync: true, NewValidator: c.New, ImportBatch: 4})
	var evs []codec.Event
	for i := int64(0); i < 5; i++ {
		evs = append(evs, turnEvents(t, 3*i, i+1)...)
	}
	if n, err := l.Import(ctx, header("src"), &slice{evs: evs}); err != nil || n != 15 {
		t.Fatalf("Import = %d, %v", n, err)
	}
	if err := l.Append(ctx, "src", []codec.Event{noteEvent(t, 15, "x")}); err != nil {
		t.Fatal(err)
	}
	if created, validated := c.counts("src"); created != 1 || validated != 16 {
		t.Errorf("imported session: %d validators, %d validations; want 1, 16", created, validated)
	}
	child := codec.NewSessionHeader("child", 2, "", "src", 9)
	if err := l.Fork(ctx, "src", 8, child); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(ctx, "child", []codec.Event{noteEvent(t, 9, "x")}); err != nil {
		t.Fatal(err)
	}
	if created, validated := c.counts("child"); created != 1 || validated != 10 {
		t.Errorf("fork child: %d validators, %d validations; want 1, 10", created, validated)
	}
}

// slice is a Source over events.
type slice struct{ evs []codec.Event }

func (s *slice) Next() (codec.Event, error) {
	if len(s.evs) == 0 {
		return codec.Event{}, io.EOF
	}
	ev := s.evs[0]
	s.evs = s.evs[1:]
	return ev, nil
}
