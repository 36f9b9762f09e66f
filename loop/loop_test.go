package loop_test

import (
	"context"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/scenario"
)

func mustScenario(t *testing.T, js string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestScenarioSmoke(t *testing.T) {
	s := openStore(t)
	sc := mustScenario(t, `{"session":"smoke","system":"You are terse.","tools":[{"name":"read","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}],
	 "prefix":[[{"role":"user","content":[{"type":"text","text":"AGENTS.md says hi"}]}]],
	 "turns":[{"prompt":"read a.txt","replies":[[{"type":"tool-call","id":"c1","name":"read","arguments":"{\"path\":\"a.txt\"}"}],[{"type":"text","text":"It says hello."}]],
	   "toolResults":{"c1":{"content":[{"type":"text","text":"hello"}]}}},
	  {"prompt":"and now?","system":"You are verbose.","inject":["the file changed"],"replies":[[{"type":"text","text":"Still hello."}]]}]}`)
	rep, err := scenario.Run(context.Background(), s, sc, scenario.Options{Now: func() float64 { return 1 }})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Steps) != 3 {
		t.Fatalf("steps = %d, want 3", len(rep.Steps))
	}
	for _, o := range rep.Outcomes {
		if o.Reason != "completed" {
			t.Fatalf("outcome %+v", o)
		}
	}
	checkTheorem(t, s, rep.Session, rep.Steps)
}

// TestOpenCreate: Open never creates (a mistyped id is not found, and the
// store is left as it was); Create never opens an existing session.
func TestOpenCreate(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	o := loop.Options{Provider: h.prov, Host: h.host}
	if _, err := loop.Open(ctx, h.store, "nosuch", o); !errors.Is(err, eventlog.ErrNotFound) {
		t.Fatalf("Open(unknown id) = %v, want ErrNotFound", err)
	}
	if heads, err := h.store.Sessions(ctx); err != nil || len(heads) != 0 {
		t.Fatalf("after Open(unknown id) the store holds %d sessions (%v), want none", len(heads), err)
	}
	l, err := loop.Create(ctx, h.store, "s", o)
	if err != nil {
		t.Fatalf("Create = %v", err)
	}
	if l.ID() != "s" || l.Next() != 0 {
		t.Fatalf("Create: id %q next %d, want \"s\" 0", l.ID(), l.Next())
	}
	if _, err := loop.Create(ctx, h.store, "s", o); !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("Create(existing id) = %v, want ErrConflict", err)
	}
	if _, err := loop.Open(ctx, h.store, "s", o); err != nil {
		t.Fatalf("Open(existing id) = %v", err)
	}
}
