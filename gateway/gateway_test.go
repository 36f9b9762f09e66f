package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/gateway"
	"github.com/sessionlog/sessionlog/internal/ssegen"
	"github.com/sessionlog/sessionlog/verify"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

// TestGatewayExact: the upstream receives the client's body and headers
// (but hop-by-hop ones, with Accept-Encoding identity and nothing added),
// the client receives the upstream's answer byte for byte, and the
// recorded request and answer are those bytes, for both streaming APIs.
func TestGatewayExact(t *testing.T) {
	for _, tt := range []struct {
		api, path string
		answer    []byte
		hdr       map[string]string
	}{
		{"anthropic-messages", "/v1/messages?beta=true", ssegen.Anthropic(200 << 10),
			map[string]string{"X-Claude-Code-Session-Id": "cc-1", "Anthropic-Version": "2023-06-01", "X-Api-Key": "sk-ant-SECRET1"}},
		{"openai-chat", "/v1/chat/completions", ssegen.OpenAI(200 << 10),
			map[string]string{"Session-Id": "codex-1", "Authorization": "Bearer sk-SECRET2"}},
	} {
		t.Run(tt.api, func(t *testing.T) {
			up := newUpstream(t, tt.answer)
			r := newRig(t, gateway.Options{}, up)
			hdr := map[string]string{"Content-Type": "application/json", "Accept-Encoding": "gzip, br",
				"Connection": "keep-alive, X-Hop", "X-Hop": "drop me", "X-Custom": "kept", "User-Agent": "agent/1.0"}
			for k, v := range tt.hdr {
				hdr[k] = v
			}
			var bodies [][]byte
			for i := 0; i < 3; i++ {
				b := []byte(fmt.Sprintf(`{"model":"m","stream":true,"messages":[%s{"role":"user","content":"turn %d ✓"}]}`,
					strings.Repeat(`{"role":"user","content":"earlier text that repeats itself"},`, 50*(i+1)), i))
				bodies = append(bodies, b)
				resp, got, err := r.post(tt.path, hdr, b)
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != 200 || !bytes.Equal(got, tt.answer) {
					t.Fatalf("status %d, answer of %d bytes equal %v; want 200 and the upstream's %d bytes", resp.StatusCode, len(got), bytes.Equal(got, tt.answer), len(tt.answer))
				}
				if resp.Header.Get("Request-Id") != "req_123" || resp.Header.Get("Content-Type") != "text/event-stream" {
					t.Errorf("answer headers %v", resp.Header)
				}
			}
			r.gw.Wait()
			reqs := up.requests()
			for i, q := range reqs[:3] {
				if !bytes.Equal(q.body, bodies[i]) || q.method != "POST" || q.uri != tt.path {
					t.Fatalf("upstream request %d: %s %s, body equal %v", i, q.method, q.uri, bytes.Equal(q.body, bodies[i]))
				}
				if q.header.Get("Accept-Encoding") != "identity" || q.header.Get("X-Hop") != "" || q.header.Get("X-Custom") != "kept" ||
					q.header.Get("User-Agent") != "agent/1.0" {
					t.Errorf("upstream request %d headers %v", i, q.header)
				}
				for k := range q.header {
					if strings.HasPrefix(k, "X-Forwarded") || k == "Via" || k == "Forwarded" {
						t.Errorf("the gateway added %s", k)
					}
				}
			}
			// A client that sends no User-Agent: the upstream gets none
			// either (Go's transport would add its own).
			if _, _, err := r.post(tt.path, map[string]string{"User-Agent": "", "X-Claude-Code-Session-Id": "other", "Session-Id": "other"}, []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			if q := up.requests()[3]; len(q.header.Values("User-Agent")) != 0 {
				t.Errorf("the upstream got User-Agent %q from a client that sent none", q.header.Values("User-Agent"))
			}
			ids := r.sessions()
			if len(ids) != 2 {
				t.Fatalf("sessions %v, want two", ids)
			}
			sort.Slice(ids, func(i, j int) bool { return len(read2(t, r, ids[i])) > len(read2(t, r, ids[j])) })
			s, probs := read(t, r.store, ids[0])
			if len(probs) != 0 {
				t.Fatalf("problems: %v", probs)
			}
			xs := s.Exchanges()
			if len(xs) != 3 {
				t.Fatalf("%d exchanges, want 3", len(xs))
			}
			for i, x := range xs {
				if got := body(t, s, x.Request.Chunks); !bytes.Equal(got, bodies[i]) {
					t.Errorf("exchange %d: recorded request differs from what the upstream received", x.N)
				}
				if got := body(t, s, x.Response.Chunks); !bytes.Equal(got, tt.answer) {
					t.Errorf("exchange %d: recorded answer differs from what the client received", x.N)
				}
				if x.Request.API != tt.api || x.Request.Path != tt.path || x.Response.Status != 200 || !x.Response.Streamed || x.Response.Cut != "" {
					t.Errorf("exchange %d: %+v %+v", x.N, x.Request, x.Response)
				}
				var names []string
				for _, f := range x.Request.Headers {
					names = append(names, f.Name)
				}
				want := map[string]string{"anthropic-messages": "accept-encoding anthropic-version content-type user-agent x-claude-code-session-id",
					"openai-chat": "accept-encoding content-type session-id user-agent"}[tt.api]
				if got := strings.Join(names, " "); got != want {
					t.Errorf("recorded request headers %q, want %q (the allowlist's)", got, want)
				}
				if x.Request.Headers[0].Value != "gzip, br" {
					t.Errorf("recorded accept-encoding %q, want the client's", x.Request.Headers[0].Value)
				}
			}
			res, err := verify.Session(context.Background(), r.store.(verify.Store), ids[0], verify.Options{Strict: true})
			if err != nil || res.Failed() {
				t.Fatalf("verify: %v %v", err, res.Findings)
			}
		})
	}
}

// TestGatewayAddsNoHeader: an answer without Date or Content-Type
// reaches the client without them (Go's server would add both).
func TestGatewayAddsNoHeader(t *testing.T) {
	up := newUpstream(t, nil)
	up.hook = func(w http.ResponseWriter, r *http.Request) bool {
		w.Header()["Date"] = nil // Go's server would add them here too
		w.Header()["Content-Type"] = nil
		w.WriteHeader(200)
		w.Write([]byte("<html>plain bytes</html>"))
		return true
	}
	r := newRig(t, gateway.Options{}, up)
	resp, b, err := r.post("/v1/messages", nil, []byte(`{}`))
	if err != nil || string(b) != "<html>plain bytes</html>" {
		t.Fatalf("%v %q", err, b)
	}
	for _, k := range []string{"Date", "Content-Type"} {
		if v, ok := resp.Header[k]; ok {
			t.Errorf("the client got %s %q, which the upstream did not send", k, v)
		}
	}
}

// read2 returns a session's exchanges.
func read2(t *testing.T, r *rig, id string) []recorded.Exchange {
	s, _ := read(t, r.store, id)
	return s.Exchanges()
}

// TestGatewayNoKeyStored: keys sent in x-api-key and authorization reach
// the upstream and nowhere in the store's files.
func TestGatewayNoKeyStored(t *testing.T) {
	up := newUpstream(t, []byte("data: {}\n\n"))
	r := newRig(t, gateway.Options{RecordHeaders: []string{"x-custom"}}, up)
	keys := []string{"sk-ant-api03-KEYKEYKEY", "sk-proj-BEARERKEY", "goog-KEY-3", "cookie-KEY-4"}
	_, _, err := r.post("/v1/messages", map[string]string{"X-Api-Key": keys[0], "Authorization": "Bearer " + keys[1],
		"X-Goog-Api-Key": keys[2], "Cookie": "s=" + keys[3], "X-Custom": "fine"}, []byte(`{"model":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	r.gw.Wait()
	if got := up.requests()[0].header.Get("X-Api-Key"); got != keys[0] {
		t.Fatalf("the upstream got key %q", got)
	}
	// A --record-header prefix never reaches a key either.
	r2 := newRig(t, gateway.Options{RecordHeaders: []string{"x-"}}, up)
	if _, _, err := r2.post("/v1/messages", map[string]string{"X-Api-Key": keys[0], "X-Goog-Api-Key": keys[2], "X-Other": "ok"}, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	r2.gw.Wait()
	s2, _ := read(t, r2.store, r2.sessions()[0])
	for _, f := range s2.Exchanges()[0].Request.Headers {
		if f.Name == "x-api-key" || f.Name == "x-goog-api-key" {
			t.Errorf("--record-header x- recorded %s", f.Name)
		}
	}
	if _, err := gateway.New(gateway.Options{Store: r.store, Upstreams: []gateway.Upstream{{Name: "x", URL: up.URL2()}},
		RecordHeaders: []string{"Authorization"}}); !errors.Is(err, gateway.ErrUsage) {
		t.Errorf("--record-header authorization: %v, want refused", err)
	}
	r.srv.Close()
	if err := r.store.Close(); err != nil {
		t.Fatal(err)
	}
	filepath.Walk(filepath.Dir(r.path), func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		for _, k := range keys {
			if bytes.Contains(b, []byte(k)) {
				t.Errorf("%s holds key %q", filepath.Base(p), k)
			}
		}
		return nil
	})
	st := openStore(t, r.path)
	defer st.Close()
	// The store compresses: the export is where a recorded key would show.
	export := exportAll(t, st)
	if !bytes.Contains(export, []byte("x-custom")) {
		t.Fatalf("the export holds no recorded header: %.200s", export)
	}
	for _, k := range keys {
		if bytes.Contains(export, []byte(k)) {
			t.Errorf("the export holds key %q", k)
		}
	}
	s, _ := read(t, st, r.sessionsOf(st)[0])
	var names []string
	for _, f := range s.Exchanges()[0].Request.Headers {
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "accept-encoding,user-agent,x-custom" {
		t.Errorf("recorded headers %v, want accept-encoding, user-agent and x-custom (--record-header)", names)
	}
}

// failing is a store whose appends fail while fail is set.
type failing struct {
	eventlog.Store
	mu   sync.Mutex
	fail bool
}

func (f *failing) Append(ctx context.Context, id string, evs []codec.Event) error {
	f.mu.Lock()
	fail := f.fail
	f.mu.Unlock()
	if fail {
		return errors.New("disk on fire")
	}
	return f.Store.Append(ctx, id, evs)
}

// TestGatewayStoreFails: a store that fails gets 503 and the upstream
// nothing; the failure is sticky; --fail-open forwards anyway.
func TestGatewayStoreFails(t *testing.T) {
	for _, open := range []bool{false, true} {
		t.Run(fmt.Sprintf("fail-open=%v", open), func(t *testing.T) {
			up := newUpstream(t, []byte("data: {}\n\n"))
			st := &failing{Store: openStore(t, filepath.Join(t.TempDir(), "s.db")), fail: true}
			r := newRig(t, gateway.Options{Store: st, FailOpen: open}, up)
			for i := 0; i < 2; i++ {
				resp, b, err := r.post("/v1/chat/completions", nil, []byte(`{"model":"m"}`))
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case !open && (resp.StatusCode != 503 || !strings.Contains(string(b), "log is unavailable")):
					t.Errorf("request %d: %d %q, want 503 saying the log is unavailable", i, resp.StatusCode, b)
				case open && resp.StatusCode != 200:
					t.Errorf("request %d: %d, want 200 (fail-open)", i, resp.StatusCode)
				}
				st.mu.Lock()
				st.fail = false // sticky: the gateway does not try again
				st.mu.Unlock()
			}
			want := 0
			if open {
				want = 2
			}
			if n := len(up.requests()); n != want {
				t.Errorf("the upstream got %d requests, want %d", n, want)
			}
			if r.gw.Failed() == nil {
				t.Error("Failed() is nil after a failed append")
			}
			if s := r.gw.Stats(); s.Recorded != 0 || (open && s.FailedOpen != 2) {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

// TestGatewayBodyLimit: a body over --max-body is 413, nothing forwarded,
// nothing stored.
func TestGatewayBodyLimit(t *testing.T) {
	up := newUpstream(t, []byte("x"))
	r := newRig(t, gateway.Options{MaxBody: 1000}, up)
	for _, chunked := range []bool{false, true} {
		body := bytes.Repeat([]byte("a"), 1001)
		req, _ := http.NewRequest("POST", r.srv.URL+"/v1/messages", bytes.NewReader(body))
		if chunked {
			req.ContentLength = -1
			req.Body = io.NopCloser(struct{ io.Reader }{bytes.NewReader(body)})
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 413 {
			t.Errorf("chunked %v: status %d, want 413", chunked, resp.StatusCode)
		}
	}
	if n := len(up.requests()); n != 0 {
		t.Errorf("the upstream got %d requests", n)
	}
	if ids := r.sessions(); len(ids) != 0 {
		t.Errorf("sessions %v, want none", ids)
	}
	if resp, _, err := r.post("/v1/messages", nil, bytes.Repeat([]byte("a"), 1000)); err != nil || resp.StatusCode != 200 {
		t.Errorf("a body of the limit: %v %v", resp, err)
	}
}

// TestGatewayHost: on a loopback gateway, another Host name is 421 and
// nothing is forwarded.
func TestGatewayHost(t *testing.T) {
	up := newUpstream(t, []byte("x"))
	r := newRig(t, gateway.Options{LoopbackHostsOnly: true}, up)
	req, _ := http.NewRequest("POST", r.srv.URL+"/v1/messages", strings.NewReader("{}"))
	req.Host = "attacker.example:8080"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest || len(up.requests()) != 0 {
		t.Errorf("status %d, %d forwarded; want 421 and none", resp.StatusCode, len(up.requests()))
	}
	if resp, _, err := r.post("/v1/messages", nil, []byte("{}")); err != nil || resp.StatusCode != 200 {
		t.Errorf("127.0.0.1: %v %v", resp, err)
	}
}

var _ = recorded.TypeChunk

// TestGatewayRecordAll: a request of no recorded API is forwarded and
// counted, not recorded; with RecordAll it is recorded as api "other".
func TestGatewayRecordAll(t *testing.T) {
	for _, all := range []bool{false, true} {
		up := newUpstream(t, []byte(`{"data":[]}`))
		r := newRig(t, gateway.Options{RecordAll: all}, up)
		resp, err := http.Get(r.srv.URL + "/v1/models?limit=5")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != `{"data":[]}` || len(up.requests()) != 1 || up.requests()[0].uri != "/v1/models?limit=5" {
			t.Fatalf("record-all %v: %q, upstream got %v", all, b, up.requests())
		}
		r.gw.Wait()
		st := r.gw.Stats()
		if !all {
			if st.Unrecorded != 1 || st.Recorded != 0 || len(r.sessions()) != 0 {
				t.Errorf("stats %+v, sessions %v; want one unrecorded and nothing stored", st, r.sessions())
			}
			continue
		}
		_, x := r.only(t)
		if st.Recorded != 1 || x.Request.API != recorded.APIOther || x.Request.Method != "GET" || x.Request.Size != 0 {
			t.Errorf("stats %+v, request %+v", st, x.Request)
		}
	}
}

// TestGatewayRoute: with several upstreams, a first path segment naming
// one selects it and is dropped; else the Anthropic family goes to
// "anthropic", the rest to "openai"; an upstream's base path comes first.
func TestGatewayRoute(t *testing.T) {
	a, o, x := newUpstream(t, []byte("a")), newUpstream(t, []byte("o")), newUpstream(t, []byte("x"))
	var ups []gateway.Upstream
	for _, s := range []string{"anthropic=" + a.URL + "/base/", "openai=" + o.URL, x.URL} {
		u, err := gateway.ParseUpstream(s)
		if err != nil {
			t.Fatal(err)
		}
		ups = append(ups, u)
	}
	if ups[2].Name != "127.0.0.1" {
		t.Errorf("a bare URL is named %q, want its host", ups[2].Name)
	}
	r := newRig(t, gateway.Options{Upstreams: ups})
	for _, tt := range []struct {
		path   string
		hdr    map[string]string
		answer string
		uri    string
	}{
		{"/v1/messages?beta=true", map[string]string{"Anthropic-Version": "2023-06-01"}, "a", "/base/v1/messages?beta=true"},
		{"/v1/messages/count_tokens", nil, "a", "/base/v1/messages/count_tokens"},
		{"/v1/chat/completions", nil, "o", "/v1/chat/completions"},
		{"/openai/v1/responses", map[string]string{"Anthropic-Version": "x"}, "o", "/v1/responses"},
		{"/127.0.0.1/v1/responses", nil, "x", "/v1/responses"},
		{"/anthropic/v1/a%2Fb", nil, "a", "/base/v1/a%2Fb"},
	} {
		_, b, err := r.post(tt.path, tt.hdr, []byte(`{}`))
		if err != nil || string(b) != tt.answer {
			t.Errorf("%s: answer %q, %v; want %q", tt.path, b, err, tt.answer)
			continue
		}
		var got []received
		switch tt.answer {
		case "a":
			got = a.requests()
		case "o":
			got = o.requests()
		default:
			got = x.requests()
		}
		if uri := got[len(got)-1].uri; uri != tt.uri {
			t.Errorf("%s: the upstream got %s, want %s", tt.path, uri, tt.uri)
		}
	}
	for _, bad := range []string{"ftp://h", "http://", "name=http://h?q=1", "bad name=http://h", "http://u:p@h"} {
		if _, err := gateway.ParseUpstream(bad); err == nil {
			t.Errorf("ParseUpstream(%q) accepted", bad)
		}
	}
}
