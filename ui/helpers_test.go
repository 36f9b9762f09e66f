package ui_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/scenario"
	"github.com/sessionlog/sessionlog/ui"
)

// Hostile content: every string a log can carry into a page, built to
// run script or break out of its element or attribute if it were not
// escaped.
const (
	hostileID     = `"><script>alert("id")</script>javascript:alert(1)`
	hostilePrompt = `<script>alert("prompt")</script> "q" 'q' <a href="javascript:alert(2)">x</a>`
	hostileTool   = `<img src=x onerror=alert(3)>`
	hostileCall   = `"><svg onload=alert(4)>`
	hostileResult = `</pre></details><script>alert(5)</script><iframe src="javascript:alert(6)">`
	hostileSystem = `</title><script>alert(7)</script>`
)

// markers are substrings that appear in a page only if hostile content
// escaped the templates (the pages themselves have no script, no img, no
// iframe and no event handler attributes).
var markers = []string{"<script", "<img", "<iframe", "<svg onload", "<a href=\"javascript", `href="javascript:`, `src="javascript:`}

func scenarioJSON(system, tool, call, prompt, result string) []byte {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return []byte(fmt.Sprintf(`{"config":{"provider":"p","model":"m-1"},
 "system":%s,
 "tools":[{"name":%s,"description":"d","parameters":{"type":"object"}},{"name":"ls","description":"List files.","parameters":{"type":"object"}}],
 "turns":[
  {"prompt":%s,
   "replies":[[{"type":"tool-call","id":%s,"name":%s,"arguments":"{}"}],[{"type":"text","text":"done"}]],
   "toolResults":{%s:{"content":[{"type":"text","text":%s}]}}},
  {"prompt":"second","system":"Be brief.",
   "replies":[[{"type":"text","text":"ok"}]]},
  {"prompt":"third","tools":[{"name":"ls","description":"List files.","parameters":{"type":"object"}}],
   "replies":[[{"type":"text","text":"fine"}]]}]}`,
		q(system), q(tool), q(prompt), q(call), q(tool), q(call), q(result)))
}

// fixture is a store with a plain session, a hostile one and a fork.
type fixture struct {
	path string
	st   *boltlog.Log
	srv  *ui.Server
	logs *strings.Builder
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	w, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := 1767225600000.0
	clock := func() float64 { now += 1000; return now }
	for _, c := range []struct{ id, system, tool, call, prompt, result string }{
		{"plain", "Be brief.\nBe right.", "cat", "c1", "list the files", "a.go\nb.go"},
		{hostileID, hostileSystem, hostileTool, hostileCall, hostilePrompt, hostileResult},
	} {
		sc, err := scenario.Parse(scenarioJSON(c.system, c.tool, c.call, c.prompt, c.result))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := scenario.Run(ctx, w, sc, scenario.Options{Session: c.id, Now: clock}); err != nil {
			t.Fatalf("scenario %q: %v", c.id, err)
		}
	}
	// A fork of the plain session at its first turn/end.
	at := int64(-1)
	it, err := w.Scan(ctx, "plain", 0)
	if err != nil {
		t.Fatal(err)
	}
	for at < 0 {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == codec.TypeTurnEnd {
			at = ev.Seq
		}
	}
	it.Close()
	if err := w.Fork(ctx, "plain", at, codec.NewSessionHeader("plain-child", now, "", "plain", at+1)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{path: path, st: st, logs: &strings.Builder{}}
	f.srv, err = ui.New(st, &ui.Options{Logger: newLogger(f.logs), Renderers: ui.WireRenderers()})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// get serves one request in process.
func (f *fixture) get(t testing.TB, target string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, localRequest(http.MethodGet, target, nil))
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// localRequest is an incoming request for target as a browser on this
// machine sends it: with the Host of a loopback server (httptest's
// default, example.com, is answered 421).
func localRequest(method, target string, body io.Reader) *http.Request {
	r := httptest.NewRequest(method, target, body)
	r.Host = "127.0.0.1:8080"
	return r
}
