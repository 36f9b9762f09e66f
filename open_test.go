package sessionlog_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/pgtest"
)

// TestOpenValidatesWithRebuildFold: the store sessionlog.Open returns
// refuses what the rebuild fold refuses (docs/rules.md#validation), before and after a
// restart, and leaves the log unchanged; on both stores, a bbolt path and
// a postgres:// URL.
func TestOpenValidatesWithRebuildFold(t *testing.T) {
	targets := []struct {
		name   string
		target func(t *testing.T) string
	}{
		{"bbolt", func(t *testing.T) string { return filepath.Join(t.TempDir(), "s.db") }},
		{"postgres", func(t *testing.T) string { u, _ := pgtest.Schema(t); return u }},
	}
	for _, tt := range targets {
		t.Run(tt.name, func(t *testing.T) { testOpenValidates(t, tt.target(t)) })
	}
}

func testOpenValidates(t *testing.T, path string) {
	ctx := context.Background()
	parse := func(lines ...string) []codec.Event {
		var evs []codec.Event
		for _, l := range lines {
			ev, err := codec.ParseEvent([]byte(l), codec.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, ev)
		}
		return evs
	}
	delta := `{"type":"request/header-delta","seq":1,"time":0,"data":{"system":{"keepStart":0,"keepEnd":0,"insert":["x"]}}}`
	for round := 0; round < 2; round++ {
		l, err := sessionlog.Open(context.Background(), path, &eventlog.Options{NoSync: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if round == 0 {
			if err := l.Create(ctx, codec.NewSessionHeader("s", 1, "", "", 0)); err != nil {
				t.Fatal(err)
			}
			if err := l.Append(ctx, "s", parse(`{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}`)); err != nil {
				t.Fatal(err)
			}
		}
		err = l.Append(ctx, "s", parse(delta))
		if !errors.Is(err, eventlog.ErrInvalid) {
			t.Fatalf("round %d: a delta before any snapshot: Append = %v, want ErrInvalid", round, err)
		}
		head, _ := l.Head(ctx, "s")
		if head.Next != 1 {
			t.Fatalf("round %d: a refused append changed the log (next %d)", round, head.Next)
		}
		ok := `{"type":"request/header","seq":1,"time":0,"data":{"header":{"config":{"model":"m"}},"reason":"initial"}}`
		if round == 1 {
			if err := l.Append(ctx, "s", parse(ok)); err != nil {
				t.Fatalf("after a restart, a valid append: %v", err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpenValidation: a writable store without validation is refused
// unless it is asked for by name, and a validator constructor that
// returns nil never means "accept everything".
func TestOpenValidation(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := boltlog.Open(filepath.Join(dir, "a.db"), &eventlog.Options{NoSync: true}, nil); !errors.Is(err, eventlog.ErrNoValidation) {
		t.Fatalf("boltlog.Open without a validator = %v, want ErrNoValidation", err)
	}
	bad := `{"type":"request/header-delta","seq":0,"time":0,"data":{"system":{"keepStart":0,"keepEnd":0,"insert":["x"]}}}`
	ev, err := codec.ParseEvent([]byte(bad), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		opts    eventlog.Options
		wantErr bool
	}{
		{"unvalidated accepts", eventlog.Options{NoSync: true, Unvalidated: true}, false},
		{"nil validator refuses", eventlog.Options{NoSync: true,
			NewValidator: func(codec.SessionHeader) eventlog.Validator { return nil }}, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := sessionlog.Open(context.Background(), filepath.Join(dir, fmt.Sprintf("%d.db", i)), &tt.opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if err := l.Create(ctx, codec.NewSessionHeader("s", 1, "", "", 0)); err != nil {
				t.Fatal(err)
			}
			err = l.Append(ctx, "s", []codec.Event{ev})
			if (err != nil) != tt.wantErr {
				t.Fatalf("Append = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}
