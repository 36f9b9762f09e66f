package gateway_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/gateway"
	"github.com/sessionlog/sessionlog/internal/fakemodel"
	"github.com/sessionlog/sessionlog/redact"
	"github.com/sessionlog/sessionlog/verify"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

// gatewaySecrets are generated (never real) secrets: one the user types,
// one a tool prints, one in the query, one only a pattern of one's own
// finds.
func gatewaySecrets() (user, tool, query, own string) {
	r := rand.New(rand.NewPCG(17, 22))
	of := func(set string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = set[r.IntN(len(set))]
		}
		return string(b)
	}
	const b62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	return "sk-ant-api03-" + of(b62+"_-", 93) + "AA", "AKIA" + of("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
		"ghp_" + of(b62, 36), "hunter" + of("0123456789", 6)
}

// TestGatewayRedacts: with a redactor, a lane session of each API is
// recorded with its secrets replaced: the upstream still receives every
// byte the client sent; the recorded body is the redacted body, its
// wire/request keeps the size and digest of the body sent and says what
// the chunks hold; no secret is in the store (events or file); the
// session's steps rebuild to the redacted conversation; verify finds
// nothing but one "redacted" warning per request (findings with strict).
func TestGatewayRedacts(t *testing.T) {
	user, tool, query, own := gatewaySecrets()
	pw, err := redact.Regexp("password", `password (?P<secret>\S+)`)
	if err != nil {
		t.Fatal(err)
	}
	red := redact.New(append(redact.SecretMatchers(), pw)...)
	for _, c := range lanesClients {
		t.Run(c.api, func(t *testing.T) {
			fm := fakemodel.New("All done.", fakemodel.Reply{Text: "Looking.", Calls: []fakemodel.Call{{Name: "env", Arguments: `{}`}}})
			up := httptest.NewServer(fm)
			t.Cleanup(up.Close)
			base, _ := url.Parse(up.URL)
			r := newRig(t, gateway.Options{Upstreams: []gateway.Upstream{{Name: "model", URL: base}}, Redactor: red})
			conv := []item{{role: "user", text: "deploy with " + user + " and password " + own}}
			redConv := []item{{role: "user", text: "deploy with [REDACTED] and password [REDACTED]"}}
			var sent [][]byte
			send := func(conv []item) string {
				b := []byte(c.body(conv))
				sent = append(sent, b)
				resp, got, err := r.post(c.path+"?trace="+query, map[string]string{"Content-Type": "application/json", "Session-Id": "agent-r"}, b)
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("post: %v %v %s", err, resp, got)
				}
				return string(got)
			}
			id := c.callID.FindString(send(conv))
			if id == "" {
				t.Fatal("no call id in the answer")
			}
			conv = append(conv, item{role: "assistant", text: "Looking.", calls: [][3]string{{id, "env", `{}`}}},
				item{role: "result", id: id, text: "AWS_ACCESS_KEY_ID=" + tool})
			redConv = append(redConv, item{role: "assistant", text: "Looking.", calls: [][3]string{{id, "env", `{}`}}},
				item{role: "result", id: id, text: "AWS_ACCESS_KEY_ID=[REDACTED]"})
			send(conv)
			r.gw.Wait()

			// Forwarding is unchanged.
			got := fm.Requests()
			if len(got) != 2 {
				t.Fatalf("the upstream got %d requests", len(got))
			}
			for i, g := range got {
				if !bytes.Equal(g.Body, sent[i]) || g.Query != "trace="+query {
					t.Errorf("request %d reached the upstream changed", i+1)
				}
			}
			// What is recorded is redacted, and says so.
			ids := r.sessions()
			if len(ids) != 1 {
				t.Fatalf("sessions %v", ids)
			}
			s, _ := read(t, r.store, ids[0])
			for i, x := range s.Exchanges() {
				q := x.Request
				want, n, err := red.JSON(sent[i])
				if err != nil {
					t.Fatal(err)
				}
				if rec := body(t, s, q.Chunks); !bytes.Equal(rec, want) {
					t.Errorf("exchange %d: recorded body\n%s\nwant\n%s", x.N, rec, want)
				}
				if q.Size != int64(len(sent[i])) || q.Digest != recorded.Sum(sent[i]) {
					t.Errorf("exchange %d: size and digest are not the body sent's", x.N)
				}
				if rr := q.Redacted; rr == nil || rr.Spans != int64(n+1) || rr.Size != int64(len(want)) || rr.Digest != recorded.Sum(want) {
					t.Errorf("exchange %d: redacted %+v, want %d spans (the query's too) of a %d-byte body", x.N, rr, n+1, len(want))
				}
				if !strings.Contains(q.Path, "trace=[REDACTED]") {
					t.Errorf("exchange %d: path %q", x.N, q.Path)
				}
			}
			checkSteps(t, r.store, ids[0], [][]item{redConv[:1], redConv})
			everything := exportAll(t, r.store)
			for _, sec := range []string{user, tool, query, own} {
				if bytes.Contains(everything, []byte(sec)) {
					t.Errorf("the store holds a secret")
				}
			}
			for _, strict := range []bool{false, true} {
				res, err := verify.Session(context.Background(), r.store.(verify.Store), ids[0], verify.Options{Strict: strict})
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, f := range res.Findings {
					if f.Kind != verify.Redacted || f.Warning == strict || !strings.Contains(f.Message, "digest not checkable (redacted content)") {
						t.Errorf("verify: %s", f)
					}
					n++
				}
				if n != 2 || res.Failed() != strict {
					t.Errorf("strict %v: %d redacted findings, failed %v", strict, n, res.Failed())
				}
			}
			if st := r.gw.Stats(); st.Redacted == 0 {
				t.Error("Stats counts no redaction")
			}
			// The cache audit reads the recorded bodies: a row each, of
			// the recorded bytes, the second reusing the first's prefix.
			var rows []audit.CacheRow
			h, err := r.store.Head(context.Background(), ids[0])
			if err != nil {
				t.Fatal(err)
			}
			if _, err := audit.Cache(context.Background(), r.store.(audit.Store), h, audit.Window{}, func(row audit.CacheRow) error {
				rows = append(rows, row)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(rows) != 2 || rows[0].Reason != "first" || rows[1].Reason != "none" || rows[1].Reusable == 0 ||
				rows[1].Bytes != int(s.Exchanges()[1].Request.Redacted.Size) {
				t.Errorf("cache rows %+v", rows)
			}
		})
	}
}

// TestGatewayRedactsNoise: bodies that are no JSON are redacted as text;
// a request with nothing to redact is recorded as before (no redacted
// member); and no file of the store holds a secret.
func TestGatewayRedactsNoise(t *testing.T) {
	user, _, _, _ := gatewaySecrets()
	up := newUpstream(t, []byte("data: {}\n\n"))
	r := newRig(t, gateway.Options{RecordAll: true, Redactor: redact.Secrets()}, up)
	for _, b := range [][]byte{[]byte("key=" + user + "&x=1"), []byte(`{"model":"m","messages":[]}`)} {
		if resp, got, err := r.post("/upload", nil, b); err != nil || resp.StatusCode != 200 {
			t.Fatalf("post: %v %v %s", err, resp, got)
		}
	}
	r.gw.Wait()
	if g := up.requests(); len(g) != 2 || !bytes.Contains(g[0].body, []byte(user)) {
		t.Fatal("the upstream did not get the body sent")
	}
	ids := r.sessions()
	s, probs := read(t, r.store, ids[0])
	xs := s.Exchanges()
	if len(xs) != 2 {
		t.Fatalf("%d exchanges", len(xs))
	}
	if rec := body(t, s, xs[0].Request.Chunks); string(rec) != "key=[REDACTED]&x=1" || xs[0].Request.Redacted == nil {
		t.Errorf("a text body is recorded as %q", rec)
	}
	if xs[1].Request.Redacted != nil {
		t.Error("a request with nothing to redact has a redacted member")
	}
	for _, p := range probs {
		if !p.Redacted || p.Seq != xs[0].Seq {
			t.Errorf("problem %+v", p)
		}
	}
	r.store.Close()
	b, err := os.ReadFile(r.path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(user[:24])) {
		t.Error("the store file holds the secret")
	}
}
