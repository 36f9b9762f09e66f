package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/scenario"
	"github.com/sessionlog/sessionlog/ui"
)

// storeOf writes one session per id, each running scenario sc[id], and
// returns the store opened read-only.
func storeOf(t testing.TB, sc map[string][]byte) *boltlog.Log {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	w, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := 1767225600000.0
	for id, js := range sc {
		s, err := scenario.Parse(js)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := scenario.Run(ctx, w, s, scenario.Options{Session: id, Now: func() float64 { now++; return now }}); err != nil {
			t.Fatalf("scenario %q: %v", id, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// fetch GETs target from a real server with the given Host header.
func fetch(t testing.TB, base, target, host string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// TestHostHeader (issue 19, item 9) serves the UI on a real loopback
// server and sends requests with the Host a browser sends for each name:
// only the loopback names (any port, or none) are answered; any other
// name, as a page whose name was rebound to 127.0.0.1 would send, is 421
// and reads nothing. A server given Hosts answers those names only.
func TestHostHeader(t *testing.T) {
	f := newFixture(t)
	ts := httptest.NewServer(f.srv)
	defer ts.Close()
	port := ts.URL[strings.LastIndexByte(ts.URL, ':'):]
	tests := []struct {
		host string
		ok   bool
	}{
		{"127.0.0.1" + port, true},
		{"localhost" + port, true},
		{"LocalHost" + port, true},
		{"[::1]" + port, true},
		{"[0:0:0:0:0:0:0:1]:8080", true},
		{"localhost", true},
		{"127.0.0.1", true},
		{"[::1]", true},
		{"evil.example" + port, false},
		{"evil.example", false},
		{"localhost.evil.example" + port, false},
		{"127.0.0.1.nip.io" + port, false},
		{"localhost." + port, false},
		{"127.0.0.2" + port, false},
		{"localhost:80x", false},
		{"[::1", false},
		{"[127.0.0.1]:80", false},
		{"local host", false},
	}
	for _, tt := range tests {
		for _, target := range []string{"/", "/api/sessions/plain", "/s/plain/step/1.2"} {
			res, body := fetch(t, ts.URL, target, tt.host)
			if tt.ok && res.StatusCode != http.StatusOK {
				t.Errorf("Host %q: GET %s = %d, want 200", tt.host, target, res.StatusCode)
			}
			if !tt.ok && (res.StatusCode != http.StatusMisdirectedRequest || strings.Contains(body, "plain")) {
				t.Errorf("Host %q: GET %s = %d, want 421 and nothing read:\n%s", tt.host, target, res.StatusCode, body)
			}
		}
	}
	// Without any Host (HTTP/1.0): refused too.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Host = ""
	f.srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusMisdirectedRequest {
		t.Errorf("no Host: %d, want 421", rec.Code)
	}

	named, err := ui.New(f.st, &ui.Options{Hosts: []string{"audit.example.org", "192.0.2.7", "::1"}})
	if err != nil {
		t.Fatal(err)
	}
	ts2 := httptest.NewServer(named)
	defer ts2.Close()
	for host, want := range map[string]int{"audit.example.org": 200, "AUDIT.example.org:443": 200, "192.0.2.7:8080": 200, "[::1]:1": 200,
		"127.0.0.1:8080": 421, "evil.example": 421, "audit.example.org.evil.example": 421} {
		if res, _ := fetch(t, ts2.URL, "/api/sessions", host); res.StatusCode != want {
			t.Errorf("Hosts option, Host %q: %d, want %d", host, res.StatusCode, want)
		}
	}
	for _, bad := range []string{"", "a b", "http://x", "x/y"} {
		if _, err := ui.New(f.st, &ui.Options{Hosts: []string{bad}}); err == nil || !errors.Is(err, ui.ErrBadRequest) {
			t.Errorf("Hosts %q: %v, want a bad-request error", bad, err)
		}
	}
}

// TestHugeParameters (issue 19, item 11) asks every paged route for from
// and limit near MaxInt64, negative or past the end: each is a 400 with
// the bounds, never a page with negative ranges or a negative next; and
// cache?limit=0, which folded a whole session, is a 400 too.
func TestHugeParameters(t *testing.T) {
	f := newFixture(t)
	ts := httptest.NewServer(f.srv)
	defer ts.Close()
	huge := strconv.FormatInt(math.MaxInt64, 10)
	nearly := strconv.FormatInt(math.MaxInt64-10, 10)
	for _, route := range []string{"/s/plain", "/api/sessions/plain/events", "/api/sessions/plain/steps", "/s/plain/cache", "/api/sessions/plain/cache"} {
		for _, q := range []string{"from=" + huge, "from=" + nearly, "from=" + nearly + "&limit=" + huge, "limit=" + huge, "limit=" + nearly,
			"from=-1", "limit=-1", "from=1000", "limit=0", "from=99999999999999999999"} {
			if route == "/s/plain" && strings.HasPrefix(q, "limit") {
				continue // the timeline's page is the server's
			}
			res, body := fetch(t, ts.URL, route+"?"+q, "")
			if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "is an integer from") {
				t.Errorf("GET %s?%s = %d, want 400 naming the bounds:\n%.300s", route, q, res.StatusCode, body)
			}
		}
	}
	// At the very end: an empty page, and no next.
	res, body := fetch(t, ts.URL, "/api/sessions/plain", "")
	var s struct{ Events, Steps int64 }
	if err := json.Unmarshal([]byte(body), &s); err != nil || res.StatusCode != 200 {
		t.Fatalf("session: %d %v", res.StatusCode, err)
	}
	for target, want := range map[string]string{
		fmt.Sprintf("/api/sessions/plain/events?from=%d&limit=1000", s.Events):   `{"events":[],"next":null}`,
		fmt.Sprintf("/api/sessions/plain/events?from=%d&limit=1000", s.Events-1): `"next":null}`,
		fmt.Sprintf("/api/sessions/plain/steps?from=%d&limit=10000", s.Steps):    `{"steps":[],"total":`,
		fmt.Sprintf("/api/sessions/plain/cache?from=%d&limit=500", s.Steps):      `{"rows":[],"total":{"requests":0`,
		fmt.Sprintf("/s/plain?from=%d", s.Events):                                fmt.Sprintf("events %d–%d of %d", s.Events, s.Events-1, s.Events),
	} {
		res, body := fetch(t, ts.URL, target, "")
		if res.StatusCode != 200 || !strings.Contains(body, want) || regexp.MustCompile(`"next":-|from=-`).MatchString(body) {
			t.Errorf("GET %s = %d, want %q:\n%.500s", target, res.StatusCode, want, body)
		}
	}
}

// TestDotSessionIDs (issue 19, item 11): sessions named ".", ".." and
// "~x" get links that a browser does not resolve away (it removes . and
// .. segments, and %2E ones, before it asks): each link, resolved as a
// browser resolves it (RFC 3986), reaches its own session on a real
// server, and so do the links on that session's pages.
func TestDotSessionIDs(t *testing.T) {
	one := []byte(`{"system":"s","turns":[{"prompt":"hello","replies":[[{"type":"text","text":"hi"}]]},{"prompt":"again","replies":[[{"type":"text","text":"ok"}]]}]}`)
	ids := []string{".", "..", "~x", "~", "...", "a.b"}
	sc := map[string][]byte{}
	for _, id := range ids {
		sc[id] = one
	}
	srv, err := ui.New(storeOf(t, sc), nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	base, _ := url.Parse(ts.URL + "/")
	_, list := fetch(t, ts.URL, "/", "")
	hrefs := regexp.MustCompile(`<a class="session" href="([^"]*)">([^<]*)</a>`).FindAllStringSubmatch(list, -1)
	if len(hrefs) != len(ids) {
		t.Fatalf("%d session links, want %d:\n%s", len(hrefs), len(ids), list)
	}
	for _, h := range hrefs {
		ref, err := url.Parse(h[1])
		if err != nil {
			t.Fatal(err)
		}
		u := base.ResolveReference(ref).String()
		res, page := fetch(t, u, "", "")
		if res.StatusCode != 200 || !strings.Contains(page, "<h1>Session "+h[2]+"</h1>") {
			t.Errorf("session %q: link %s resolves to %s: %d\n%.400s", h[2], h[1], u, res.StatusCode, page)
			continue
		}
		// The session page's own links: the step, the cache chart, the API.
		for _, link := range regexp.MustCompile(`href="(/[^"]*(?:/step/1\.1|/cache|/api/sessions/[^"]*))"`).FindAllStringSubmatch(page, -1) {
			r2, _ := url.Parse(strings.ReplaceAll(link[1], "&amp;", "&"))
			u2 := base.ResolveReference(r2).String()
			res, sub := fetch(t, u2, "", "")
			if res.StatusCode != 200 || !strings.Contains(sub, h[2]) {
				t.Errorf("session %q: link %s resolves to %s: %d", h[2], link[1], u2, res.StatusCode)
			}
		}
	}
	if res, body := fetch(t, ts.URL, "/api/sessions/~..", ""); res.StatusCode != 200 || !strings.Contains(body, `"id":".."`) {
		t.Errorf("API of ..: %d %s", res.StatusCode, body)
	}
}

// blocker is a wire renderer that holds the step page until released.
type blocker struct {
	in      chan struct{}
	release chan struct{}
}

func (b *blocker) renderer() ui.Renderer {
	return ui.Renderer{Name: "block", Body: func(rebuild.Step) ([]byte, error) {
		b.in <- struct{}{}
		<-b.release
		return []byte("{}"), nil
	}}
}

// TestHeavyRequests (issue 19, item 10): with MaxHeavy requests that read
// the log running, one more waits HeavyWait and is answered 429 with
// Retry-After, on pages and the API alike, while the session list still
// answers; once they end, the next heavy request is served.
func TestHeavyRequests(t *testing.T) {
	f := newFixture(t)
	b := &blocker{in: make(chan struct{}), release: make(chan struct{})}
	srv, err := ui.New(f.st, &ui.Options{MaxHeavy: 2, HeavyWait: 50 * time.Millisecond, Renderers: []ui.Renderer{b.renderer()}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := http.Get(ts.URL + "/s/plain/step/1.1")
			if err == nil {
				res.Body.Close()
			}
		}()
		<-b.in
	}
	for _, target := range []string{"/s/plain", "/api/sessions/plain/events", "/s/plain/step/1.2/request.json", "/s/plain/event/0"} {
		res, body := fetch(t, ts.URL, target, "")
		if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "1" {
			t.Errorf("GET %s with 2 heavy requests running = %d (Retry-After %q), want 429:\n%.300s", target, res.StatusCode, res.Header.Get("Retry-After"), body)
		}
	}
	if res, _ := fetch(t, ts.URL, "/", ""); res.StatusCode != 200 {
		t.Errorf("the session list = %d while heavy requests run", res.StatusCode)
	}
	close(b.release)
	wg.Wait()
	if res, _ := fetch(t, ts.URL, "/s/plain", ""); res.StatusCode != 200 {
		t.Errorf("after the heavy requests: %d", res.StatusCode)
	}
}

// TestHTTPServer (issue 19, item 10): the server logtool serve runs has
// a deadline for every phase of a connection.
func TestHTTPServer(t *testing.T) {
	hs := ui.HTTPServer(http.NotFoundHandler())
	if hs.ReadHeaderTimeout <= 0 || hs.ReadTimeout <= 0 || hs.WriteTimeout < time.Minute || hs.IdleTimeout <= 0 || hs.MaxHeaderBytes <= 0 {
		t.Errorf("timeouts: header %v, read %v, write %v, idle %v, header bytes %d",
			hs.ReadHeaderTimeout, hs.ReadTimeout, hs.WriteTimeout, hs.IdleTimeout, hs.MaxHeaderBytes)
	}
}

// bigScenario is a session whose tool returns text bytes long, with
// escapes and characters of every width in it.
func bigScenario(text int) []byte {
	unit := `line "q" \ é € 😀 <b>` + "\n"
	s := strings.Repeat(unit, text/len(unit)+1)
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return []byte(`{"system":"s","tools":[{"name":"cat","description":"d","parameters":{"type":"object"}}],"turns":[
  {"prompt":"read it","replies":[[{"type":"tool-call","id":"c1","name":"cat","arguments":"{}"}],[{"type":"text","text":"read"}]],
   "toolResults":{"c1":{"content":[{"type":"text","text":` + q(s) + `}]}}},
  {"prompt":"again","replies":[[{"type":"text","text":"ok"}]]}]}`)
}

// TestBigEvent (issue 19, item 10): a page shows an event, a message or
// a wire body over ui.BigItem by its first ui.HeadBytes and a link to its
// raw bytes; the links give the exact bytes (the event's canonical JSON,
// streamed; the message as the request holds it; the wire body), and an
// API events page holds about a MiB, with an event over it alone on its
// page, exact.
func TestBigEvent(t *testing.T) {
	st := storeOf(t, map[string][]byte{"big": bigScenario(300 << 10), "huge": bigScenario(3 << 20)})
	srv, err := ui.New(st, &ui.Options{Renderers: ui.WireRenderers()})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()

	// The step after the tool result: its request holds the result twice
	// over (the message, and each wire body).
	_, req := fetch(t, ts.URL, "/s/big/step/1.2/request.json", "")
	if len(req) < 300<<10 {
		t.Fatalf("request of %d bytes", len(req))
	}
	res, page := fetch(t, ts.URL, "/s/big/step/1.2", "")
	if res.StatusCode != 200 || len(page) > 3*ui.BigItem/2 {
		t.Fatalf("step page: %d, %d bytes (the request is %d)", res.StatusCode, len(page), len(req))
	}
	links := regexp.MustCompile(`<a class="raw" href="([^"]*)">`).FindAllStringSubmatch(page, -1)
	if len(links) != 3 || !strings.Contains(page, " bytes: only the first of them are shown here") {
		t.Fatalf("step page has %d raw links, want the message and two wire bodies:\n%s", len(links), page)
	}
	var api struct {
		Request json.RawMessage
		Bodies  []struct {
			Wire, Body, URL string
			Bytes           int
		}
	}
	_, apiStep := fetch(t, ts.URL, "/api/sessions/big/steps/1.2", "")
	if err := json.Unmarshal([]byte(apiStep), &api); err != nil {
		t.Fatal(err)
	}
	if string(api.Request) != req {
		t.Error("the API's request differs from request.json")
	}
	var msgs []json.RawMessage
	var whole struct{ Messages []json.RawMessage }
	if err := json.Unmarshal([]byte(req), &whole); err != nil {
		t.Fatal(err)
	}
	msgs = whole.Messages
	for _, l := range links {
		res, raw := fetch(t, ts.URL, l[1], "")
		if res.StatusCode != 200 || len(raw) < 300<<10 || !json.Valid([]byte(raw)) {
			t.Errorf("GET %s = %d, %d bytes", l[1], res.StatusCode, len(raw))
		}
		if i := strings.Index(l[1], "/message/"); i >= 0 {
			k, _ := strconv.Atoi(l[1][i+len("/message/"):])
			if k >= len(msgs) || raw != string(msgs[k]) {
				t.Errorf("GET %s is not message %d of the request", l[1], k)
			}
		}
		for _, b := range api.Bodies {
			if strings.HasSuffix(l[1], "/wire/"+b.Wire) && (b.URL != l[1] || b.Bytes != len(raw) || b.Body != "") {
				t.Errorf("API body %s: url %q, %d bytes; the page links %s (%d bytes)", b.Wire, b.URL, b.Bytes, l[1], len(raw))
			}
		}
	}

	// The timeline links the big event; its download is the event's JSON
	// line, as the API's events page has it.
	_, timeline := fetch(t, ts.URL, "/s/big", "")
	m := regexp.MustCompile(`<a class="raw" href="(/s/big/event/(\d+))">large event`).FindStringSubmatch(timeline)
	if m == nil {
		t.Fatalf("the timeline does not link the big event:\n%s", timeline)
	}
	_, raw := fetch(t, ts.URL, m[1], "")
	var evs struct {
		Events []json.RawMessage
		Next   *int64
	}
	_, body := fetch(t, ts.URL, "/api/sessions/big/events?from="+m[2]+"&limit=1", "")
	if err := json.Unmarshal([]byte(body), &evs); err != nil || len(evs.Events) != 1 || string(evs.Events[0]) != raw {
		t.Errorf("GET %s (%d bytes) is not the API's event: %v", m[1], len(raw), err)
	}

	// A page of API events ends before an event that would take it past a
	// MiB; that event is alone on the next page, exact.
	_, body = fetch(t, ts.URL, "/api/sessions/huge/events?limit=1000", "")
	if err := json.Unmarshal([]byte(body), &evs); err != nil || evs.Next == nil || len(body) > 1<<20 {
		t.Fatalf("first page: %d bytes, next %v, %v", len(body), evs.Next, err)
	}
	at := *evs.Next
	_, body = fetch(t, ts.URL, fmt.Sprintf("/api/sessions/huge/events?from=%d&limit=1000", at), "")
	_, raw = fetch(t, ts.URL, fmt.Sprintf("/s/huge/event/%d", at), "")
	if err := json.Unmarshal([]byte(body), &evs); err != nil || len(evs.Events) != 1 || string(evs.Events[0]) != raw || len(raw) < 3<<20 ||
		evs.Next == nil || *evs.Next != at+1 {
		t.Errorf("the page of the big event: %d events, next %v, %v", len(evs.Events), evs.Next, err)
	}
	if res, _ := fetch(t, ts.URL, "/s/huge/event/99999", ""); res.StatusCode != 404 {
		t.Errorf("no such event: %d", res.StatusCode)
	}
	if res, _ := fetch(t, ts.URL, "/s/huge/step/1.2/message/99", ""); res.StatusCode != 404 {
		t.Errorf("no such message: %d", res.StatusCode)
	}
}
