package loop_test

import (
	"context"
	"testing"

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
