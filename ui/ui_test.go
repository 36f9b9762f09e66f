package ui_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/ui"
)

// lockedWriter lets concurrent handlers log into one builder.
type lockedWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func newLogger(b *strings.Builder) *slog.Logger {
	return slog.New(slog.NewTextHandler(&lockedWriter{b: b}, nil))
}

func esc(id string) string { return url.PathEscape(id) }

// TestRoutes requests every page and API route of the plain session and
// checks the status, the content type and what the answer says.
func TestRoutes(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name, target string
		status       int
		ctype        string
		want         []string
	}{
		{"sessions", "/", 200, "text/html", []string{`href="/s/plain"`, "plain-child", "fork of", "1 fork"}},
		{"sessions filtered", "/?q=child", 200, "text/html", []string{"plain-child"}},
		{"sessions sorted", "/?sort=-events", 200, "text/html", []string{"plain"}},
		{"sessions bad sort", "/?sort=size", 400, "text/html", []string{"sort is id"}},
		{"session", "/s/plain", 200, "text/html", []string{"Timeline: events 0–", "seq 3 initial", "seq 27 delta", "step/start 1.1", `href="/s/plain-child"`}},
		{"session page 2", "/s/plain?from=10", 200, "text/html", []string{"Timeline: events 10–", "← earlier"}},
		{"session bad from", "/s/plain?from=x", 400, "text/html", []string{"from is an integer from 0 to"}},
		{"fork child", "/s/plain-child", 200, "text/html", []string{`href="/s/plain"`, "inheriting"}},
		{"no session", "/s/nope", 404, "text/html", []string{"no session nope in this store"}},
		{"verify", "/s/plain/verify", 200, "text/html", []string{"OK:", "No findings."}},
		{"verify child", "/s/plain-child/verify", 200, "text/html", []string{"OK:"}},
		{"step", "/s/plain/step/1.2", 200, "text/html", []string{"Step 1.2", "matches", "new", "request-1.2.json", "Header in force", "anthropic-messages", "openai-chat", `&#34;stream&#34;:true`}},
		{"first step", "/s/plain/step/1.1", 200, "text/html", []string{"the first request of the session"}},
		{"no step", "/s/plain/step/9.9", 404, "text/html", []string{"no step 9.9"}},
		{"bad step", "/s/plain/step/x", 400, "text/html", []string{"T.S"}},
		{"raw request", "/s/plain/step/1.1/request.json", 200, "application/json", []string{`{"provider":"p","model":"m-1","messages":[`}},
		{"cache", "/s/plain/cache", 200, "text/html", []string{"<svg", "first", "system", "tools", "reusable"}},
		{"cache page", "/s/plain/cache?from=1&limit=2", 200, "text/html", []string{"for the steps shown", "later steps"}},
		{"diff default", "/s/plain/diff", 200, "text/html", []string{"step 1.1 → step 1.2", "appended"}},
		{"diff", "/s/plain/diff?a=1.2&b=2.1", 200, "text/html", []string{"system", "first different line"}},
		{"diff null", "/s/plain/diff?a=1.1&b=7.1", 404, "text/html", []string{"no step 7.1"}},
		{"static", "/static/style.css", 200, "text/css", []string{"svg.chart"}},
		{"api doc", "/api/", 200, "text/plain", []string{"GET /api/sessions"}},
		{"api sessions", "/api/sessions", 200, "application/json", []string{`{"id":"plain","events":`, `"parent":"plain"`}},
		{"api session", "/api/sessions/plain", 200, "application/json", []string{`"forks":["plain-child"]`, `"reason":"initial"`}},
		{"api events", "/api/sessions/plain/events?from=0&limit=3", 200, "application/json", []string{`{"events":[{"type":"turn/start","seq":0`, `"next":3`}},
		{"api steps", "/api/sessions/plain/steps", 200, "application/json", []string{`"turn":1,"step":1`, `"match":true`}},
		{"api step", "/api/sessions/plain/steps/1.2", 200, "application/json", []string{`"same":1`, `"bodies":[{"wire":"anthropic-messages","body":"{\"model\":\"m-1\"`, `"request":{"provider":"p"`}},
		{"api cache", "/api/sessions/plain/cache", 200, "application/json", []string{`"reason":"first"`, `"total":{"requests":`}},
		{"api diff", "/api/sessions/plain/diff?a=1.1&b=1.2", 200, "application/json", []string{`"relation":"appended"`}},
		{"api verify", "/api/sessions/plain/verify", 200, "application/json", []string{`"failed":false`}},
		{"api no session", "/api/sessions/nope", 404, "application/json", []string{`{"error":"no session nope in this store"}`}},
		{"api bad step", "/api/sessions/plain/steps/0.1", 400, "application/json", []string{`"error"`}},
		{"unknown", "/nowhere", 404, "text/plain", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, body := f.get(t, tt.target)
			if res.StatusCode != tt.status {
				t.Fatalf("GET %s = %d, want %d\n%s", tt.target, res.StatusCode, tt.status, body)
			}
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, tt.ctype) {
				t.Errorf("Content-Type = %q, want %s…", ct, tt.ctype)
			}
			if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
				t.Errorf("Content-Security-Policy = %q", csp)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("GET %s lacks %q:\n%s", tt.target, w, body)
				}
			}
			if strings.HasPrefix(tt.ctype, "application/json") && !json.Valid([]byte(body)) {
				t.Errorf("GET %s is not JSON:\n%s", tt.target, body)
			}
		})
	}
}

// TestRawRequestIsTheDigestedBytes checks that the download is exactly
// the bytes the step's digest covers, and the API's request agrees.
func TestRawRequestIsTheDigestedBytes(t *testing.T) {
	f := newFixture(t)
	_, raw := f.get(t, "/s/plain/step/2.1/request.json")
	_, api := f.get(t, "/api/sessions/plain/steps/2.1")
	var v struct {
		Digest  string          `json:"digest"`
		Request json.RawMessage `json:"request"`
	}
	if err := json.Unmarshal([]byte(api), &v); err != nil {
		t.Fatal(err)
	}
	if string(v.Request) != raw {
		t.Fatalf("API request differs from the download:\n%s\n%s", v.Request, raw)
	}
	if got := sha256Hex([]byte(raw)); got != v.Digest {
		t.Fatalf("sha256(download) = %s, digest %s", got, v.Digest)
	}
}

// TestOnlyReads refuses every method that is not GET or HEAD.
func TestOnlyReads(t *testing.T) {
	f := newFixture(t)
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		rec := httptest.NewRecorder()
		f.srv.ServeHTTP(rec, localRequest(m, "/s/plain", strings.NewReader("x")))
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s = %d, want 405", m, rec.Code)
		}
	}
}

func TestCheckAddr(t *testing.T) {
	tests := []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:8080", false, true},
		{"[::1]:8080", false, true},
		{"localhost:0", false, true},
		{"127.3.2.1:80", false, true},
		{":8080", false, false},
		{"0.0.0.0:8080", false, false},
		{"192.168.1.2:8080", false, false},
		{"example.com:80", false, false},
		{":8080", true, true},
		{"0.0.0.0:8080", true, true},
	}
	for _, tt := range tests {
		err := ui.CheckAddr(tt.addr, tt.remote)
		if (err == nil) != tt.ok {
			t.Errorf("CheckAddr(%q, %v) = %v, want ok %v", tt.addr, tt.remote, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ui.ErrRemote) {
			t.Errorf("CheckAddr(%q) = %v, not ErrRemote", tt.addr, err)
		}
	}
	if err := ui.CheckAddr("nohost", false); err == nil || errors.Is(err, ui.ErrRemote) {
		t.Errorf("CheckAddr(nohost) = %v, want a malformed-address error", err)
	}
}

// TestHostileContent renders every page and API answer of a session whose
// id, system prompt, prompt, tool name, call id and tool result are
// hostile, and checks that none of it comes out as markup, that JSON
// answers stay valid, and that the hostile strings are there, escaped.
func TestHostileContent(t *testing.T) {
	f := newFixture(t)
	id := esc(hostileID)
	pages := []string{
		"/", "/?q=" + url.QueryEscape(`"><script>`), "/s/" + id, "/s/" + id + "/verify",
		"/s/" + id + "/step/1.1", "/s/" + id + "/step/1.2", "/s/" + id + "/step/2.1",
		"/s/" + id + "/cache", "/s/" + id + "/diff", "/s/" + id + "/diff?a=1.1&b=1.2", "/s/" + id + "/diff?a=1.2&b=3.1",
		"/s/" + id + "/step/" + url.PathEscape(`<script>`),
	}
	for _, p := range pages {
		res, body := f.get(t, p)
		if res.StatusCode != 200 && res.StatusCode != 400 {
			t.Errorf("GET %s = %d\n%s", p, res.StatusCode, body)
		}
		for _, m := range markers {
			if strings.Contains(strings.ToLower(body), m) {
				t.Errorf("GET %s: hostile content came out as markup (%q):\n%s", p, m, body)
			}
		}
	}
	// The hostile strings are shown, escaped, where they belong.
	_, step := f.get(t, "/s/"+id+"/step/1.2")
	for _, want := range []string{`&lt;script&gt;alert(\&#34;prompt\&#34;)&lt;/script&gt;`, "&lt;img src=x onerror=alert(3)&gt;", "&lt;/pre&gt;&lt;/details&gt;&lt;script&gt;alert(5)"} {
		if !strings.Contains(step, want) {
			t.Errorf("step page lacks the escaped %q", want)
		}
	}
	_, list := f.get(t, "/")
	if !strings.Contains(list, `href="/s/%22%3E%3Cscript%3Ealert%28%22id%22%29%3C/script%3Ejavascript:alert%281%29"`) &&
		!strings.Contains(list, "/s/"+strings.ReplaceAll(id, "(", "%28")) {
		t.Errorf("the hostile session's link is not a path-escaped /s/ link:\n%s", list)
	}
	for _, p := range []string{"/api/sessions", "/api/sessions/" + id, "/api/sessions/" + id + "/events",
		"/api/sessions/" + id + "/steps/1.2", "/api/sessions/" + id + "/cache", "/api/sessions/" + id + "/diff?a=1.1&b=1.2",
		"/api/sessions/" + id + "/verify"} {
		res, body := f.get(t, p)
		if res.StatusCode != 200 || !json.Valid([]byte(body)) {
			t.Errorf("GET %s = %d, valid JSON %v:\n%s", p, res.StatusCode, json.Valid([]byte(body)), body)
		}
		if ct := res.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("GET %s: Content-Type %q", p, ct)
		}
	}
}

// TestLogsHoldNoContent serves every route of the hostile session and
// checks that the server's log lines hold none of it: not the id, not a
// prompt, not a path.
func TestLogsHoldNoContent(t *testing.T) {
	f := newFixture(t)
	id := esc(hostileID)
	for _, p := range []string{"/s/" + id, "/s/" + id + "/step/1.2", "/s/" + id + "/cache", "/s/" + id + "/diff",
		"/s/" + id + "/verify", "/api/sessions/" + id + "/steps/9.9", "/s/" + id + "/step/1.1/request.json", "/s/nope?q=secret-query"} {
		f.get(t, p)
	}
	logs := f.logs.String()
	if strings.Count(logs, "msg=request") != 8 {
		t.Fatalf("want 8 request lines, got:\n%s", logs)
	}
	for _, bad := range []string{"alert", "script", "javascript", "nope", "secret-query", "prompt", "a.go", "/s/%", "/s/nope"} {
		if strings.Contains(logs, bad) {
			t.Errorf("server log holds %q:\n%s", bad, logs)
		}
	}
	if !strings.Contains(logs, `route="GET /s/{id}/step/{step}"`) || !strings.Contains(logs, "status=404") {
		t.Errorf("server log lacks route patterns or statuses:\n%s", logs)
	}
}
