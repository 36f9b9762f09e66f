package scenario_test

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/compact"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/scenario"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, js string
		wantErr  bool
	}{
		{"minimal", `{"turns":[{"prompt":"hi"}]}`, false},
		{"everything", `{"session":"s","config":{"provider":"p","model":"m","temperature":0.5,"maxTokens":9,"stop":[]},
		  "system":"s","tools":[{"name":"t","description":"d","parameters":{"z":1,"a":2}}],
		  "prefix":[[{"role":"user","content":[{"type":"text","text":"p"}]}]],
		  "compaction":{"contextWindow":100,"thresholdRatio":0.5,"retainTokens":10,"charsPerToken":3,"summary":"s"},
		  "turns":[{"prompt":"a","system":"t","tools":[],"config":{"model":"n"},"inject":["i"],
		            "replies":[[{"type":"text","text":"r"}]],"toolResults":{"c":{"content":[],"isError":true}}}]}`, false},
		{"no turns", `{"turns":[]}`, true},
		{"unknown key", `{"turns":[{"prompt":"hi"}],"sistem":"typo"}`, true},
		{"reply not an array", `{"turns":[{"prompt":"hi","replies":[{"type":"text"}]}]}`, true},
		{"config without model", `{"config":{"provider":"p"},"turns":[{"prompt":"hi"}]}`, true},
		{"bad prefix message", `{"prefix":[[{"content":[]}]],"turns":[{"prompt":"hi"}]}`, true},
		{"trailing text", `{"turns":[{"prompt":"hi"}]} {}`, true},
		{"not JSON", `{"turns":`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := scenario.Parse([]byte(tt.js))
			if (err != nil) != tt.wantErr {
				t.Fatalf("Parse = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, codec.ErrInvalid) && !strings.Contains(err.Error(), "header") {
				t.Fatalf("Parse error is not classified: %v", err)
			}
			if err == nil && tt.name == "minimal" && (sc.Config.Model != "scripted-1" || !sc.Config.HasProvider || sc.Config.Provider != "scripted") {
				t.Fatalf("default config %+v", sc.Config)
			}
		})
	}
}

// TestChunks: a reply streams as a live provider would: per block,
// block-start, its deltas (a word at a time), block-end; then usage and
// finish, tool-calls when the reply calls tools.
func TestChunks(t *testing.T) {
	reply := `[{"type":"text","text":"two words"},{"type":"tool-call","id":"c","name":"n","arguments":"{}"}]`
	chunks, err := scenario.Chunks([]byte(reply), compact.Chars{}, []byte(`{"model":"m","messages":[],"sessionId":"s"}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range chunks {
		s := c.Type
		switch c.Type {
		case loop.ChunkTextDelta:
			s += ":" + c.Text
		case loop.ChunkFinish:
			s += ":" + string(c.Reason)
		}
		got = append(got, s)
	}
	want := "block-start,text-delta:two ,text-delta:words,block-end,block-start,tool-call-delta,block-end,usage,finish:" + `{"kind":"tool-calls"}`
	if strings.Join(got, ",") != want {
		t.Fatalf("chunks %s\nwant   %s", strings.Join(got, ","), want)
	}
}

// TestProviderExhausted: no reply left is SCRIPT_EXHAUSTED, and a
// cancelled stream stops.
func TestProviderExhausted(t *testing.T) {
	var p scenario.Provider
	_, err := p.Stream(context.Background(), &loop.Request{JSON: []byte(`{}`)})
	var coded *loop.ProviderError
	if !errors.As(err, &coded) || coded.Code != "SCRIPT_EXHAUSTED" {
		t.Fatalf("Stream with no replies = %v", err)
	}
	p.SetReplies([][]byte{[]byte(`[{"type":"text","text":"a b c"}]`)})
	ctx, cancel := context.WithCancel(context.Background())
	st, err := p.Stream(ctx, &loop.Request{JSON: []byte(`{"model":"m","messages":[],"sessionId":"s"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Next(); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := st.Next(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next after cancel = %v", err)
	}
	if _, err := st.Next(); err == io.EOF {
		t.Fatal("a cancelled stream went on to its end")
	}
}

// TestToolResultsByName: a call whose id has no scripted result is
// answered by the result scripted under its tool's name (docs/cli.md#scenario-files); one
// that matches neither gets an error result naming its id.
func TestToolResultsByName(t *testing.T) {
	st, err := boltlog.Open(filepath.Join(t.TempDir(), "s.db"), &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sc, err := scenario.Parse([]byte(`{"tools":[{"name":"read","description":"d","parameters":{}},{"name":"write","description":"d","parameters":{}}],
	  "turns":[{"prompt":"go","replies":[
	    [{"type":"tool-call","id":"live-1","name":"read","arguments":"{}"},{"type":"tool-call","id":"live-2","name":"write","arguments":"{}"}],
	    [{"type":"text","text":"done"}]],
	   "toolResults":{"read":{"content":[{"type":"text","text":"by name"}]}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := scenario.Run(context.Background(), st, sc, scenario.Options{Session: "s", Now: func() float64 { return 1 }})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Steps) != 2 {
		t.Fatalf("%d steps, want 2", len(rep.Steps))
	}
	second := string(rep.Steps[1].Request)
	for _, want := range []string{
		`"toolCallId":"live-1","content":[{"type":"text","text":"by name"}],"isError":false`,
		`"toolCallId":"live-2","content":[{"type":"text","text":"scenario: no scripted result for call \"live-2\""`,
	} {
		if !strings.Contains(second, want) {
			t.Errorf("request of step 1.2 lacks %s:\n%s", want, second)
		}
	}
}
