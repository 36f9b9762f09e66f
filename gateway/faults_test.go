package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/gateway"
	"github.com/sessionlog/sessionlog/internal/ssegen"
	"github.com/sessionlog/sessionlog/verify"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

// only returns the one exchange of the store's one session, after the
// gateway's handlers are done.
func (r *rig) only(t *testing.T) (*recorded.Session, recorded.Exchange) {
	t.Helper()
	r.gw.Wait()
	ids := r.sessions()
	if len(ids) != 1 {
		t.Fatalf("sessions %v, want one", ids)
	}
	s, probs := read(t, r.store, ids[0])
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	if len(s.Exchanges()) != 1 {
		t.Fatalf("%d exchanges, want 1", len(s.Exchanges()))
	}
	return s, s.Exchanges()[0]
}

// TestGatewayLogFirst: when the upstream receives a request, its
// wire/request is in the store already.
func TestGatewayLogFirst(t *testing.T) {
	up := newUpstream(t, []byte("data: {}\n\n"))
	st := &slow{Store: openStore(t, filepath.Join(t.TempDir(), "s.db"))}
	r := newRig(t, gateway.Options{Store: st}, up)
	var held []int
	up.hook = func(w http.ResponseWriter, req *http.Request) bool {
		held = append(held, int(st.done.Load()))
		ids := r.sessions()
		if len(ids) == 1 {
			s, _ := read(t, r.store, ids[0])
			held = append(held, len(s.Exchanges()))
		}
		return false
	}
	for i := 0; i < 3; i++ {
		if _, _, err := r.post("/v1/messages", map[string]string{"X-Claude-Code-Session-Id": "a"}, []byte(`{"n":1}`)); err != nil {
			t.Fatal(err)
		}
	}
	// Each request's append (1, then 2 more per exchange: the answer's,
	// then the next request's) had returned, and its exchange was in the
	// store, when the upstream got it.
	if fmt.Sprint(held) != "[1 1 3 2 5 3]" {
		t.Errorf("appends done and exchanges stored as the upstream got each request: %v, want [1 1 3 2 5 3]", held)
	}
}

// slow is a store whose appends take a while, and count when they are
// done.
type slow struct {
	eventlog.Store
	done atomic.Int64
}

func (s *slow) Append(ctx context.Context, id string, evs []codec.Event) error {
	time.Sleep(30 * time.Millisecond)
	err := s.Store.Append(ctx, id, evs)
	s.done.Add(1)
	return err
}

// TestGatewayUpstreamCut: the upstream dies mid-stream; the client sees
// the cut, and the log records cut "upstream" with what came.
func TestGatewayUpstreamCut(t *testing.T) {
	up := newUpstream(t, nil)
	half := ssegen.Anthropic(64 << 10)
	up.hook = func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.Write(half)
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
		return true
	}
	r := newRig(t, gateway.Options{}, up)
	resp, got, err := r.post("/v1/messages", nil, []byte(`{}`))
	if err == nil {
		t.Fatalf("the client read %d bytes and no error; want the cut to show", len(got))
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	s, x := r.only(t)
	if x.Response.Cut != recorded.CutUpstream {
		t.Errorf("cut %q, want upstream", x.Response.Cut)
	}
	if b := body(t, s, x.Response.Chunks); !bytes.Equal(b, half) {
		t.Errorf("recorded %d bytes of the answer, want the %d that came", len(b), len(half))
	}
}

// TestGatewayClientGone: the client leaves mid-stream; the upstream's
// request is cancelled and the log records cut "client".
func TestGatewayClientGone(t *testing.T) {
	up := newUpstream(t, nil)
	cancelled := make(chan struct{})
	up.hook = func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for i := 0; ; i++ {
			select {
			case <-r.Context().Done():
				close(cancelled)
				return true
			case <-time.After(5 * time.Millisecond):
			}
			fmt.Fprintf(w, "data: {\"i\":%d}\n\n", i)
			w.(http.Flusher).Flush()
		}
	}
	r := newRig(t, gateway.Options{}, up)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", r.srv.URL+"/v1/chat/completions", bytes.NewReader([]byte(`{}`)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if _, err := io.ReadAtLeast(resp.Body, buf, 20); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream's request was not cancelled")
	}
	_, x := r.only(t)
	if x.Response.Cut != recorded.CutClient {
		t.Errorf("cut %q, want client", x.Response.Cut)
	}
}

// TestGatewayClientLeavesAtEnd: a client that hangs up once it has read
// the answer's last event, before the body's end reaches the gateway (as
// Codex does at response.completed), leaves an answer recorded whole, not
// cut: the gateway reads on for a grace after its client went away.
func TestGatewayClientLeavesAtEnd(t *testing.T) {
	const answer = "data: {\"i\":1}\n\ndata: [DONE]\n\n"
	up := newUpstream(t, nil)
	up.hook = func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		io.WriteString(w, answer)
		w.(http.Flusher).Flush()
		time.Sleep(300 * time.Millisecond) // the body's end comes late
		return true
	}
	r := newRig(t, gateway.Options{}, up)
	resp, err := http.Post(r.srv.URL+"/v1/chat/completions", "application/json", bytes.NewReader([]byte(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(answer))
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != answer {
		t.Fatalf("read %q, %v", buf, err)
	}
	resp.Body.Close() // at [DONE], before the body's end
	_, x := r.only(t)
	if x.Response.Cut != "" || x.Response.Size != int64(len(answer)) {
		t.Errorf("cut %q size %d, want whole and %d", x.Response.Cut, x.Response.Size, len(answer))
	}
}

// TestGatewayIdleTimeout: an upstream silent past the idle bound is cut
// "timeout", and the client sees the cut.
func TestGatewayIdleTimeout(t *testing.T) {
	up := newUpstream(t, nil)
	up.hook = func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.Write([]byte("data: {}\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return true
	}
	r := newRig(t, gateway.Options{IdleTimeout: 100 * time.Millisecond}, up)
	if _, _, err := r.post("/v1/messages", nil, []byte(`{}`)); err == nil {
		t.Error("the client saw no cut")
	}
	_, x := r.only(t)
	if x.Response.Cut != recorded.CutTimeout || x.Response.Size != 10 {
		t.Errorf("cut %q size %d, want timeout and 10", x.Response.Cut, x.Response.Size)
	}
	// An answer that keeps coming is not cut, however long it takes.
	up.hook = func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 15; i++ {
			w.Write([]byte("data: {}\n\n"))
			w.(http.Flusher).Flush()
			time.Sleep(30 * time.Millisecond)
		}
		return true
	}
	if resp, b, err := r.post("/v1/messages", nil, []byte(`{}`)); err != nil || resp.StatusCode != 200 || len(b) != 150 {
		t.Errorf("a steady answer: %v %d bytes", err, len(b))
	}
}

// TestGatewayUnreachable: no upstream answers: 502, and the log records
// an answer without a body, cut "upstream".
func TestGatewayUnreachable(t *testing.T) {
	up := newUpstream(t, nil)
	r := newRig(t, gateway.Options{}, up)
	up.Close()
	resp, _, err := r.post("/v1/messages", nil, []byte(`{}`))
	if err != nil || resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("%v %v, want 502", resp, err)
	}
	_, x := r.only(t)
	if x.Response.Body || x.Response.Status != 0 || x.Response.Cut != recorded.CutUpstream {
		t.Errorf("response %+v, want no body, status 0, cut upstream", x.Response)
	}
}

// TestGatewayShutdown: Stop cuts the streams in flight, recorded cut
// "shutdown".
func TestGatewayShutdown(t *testing.T) {
	up := newUpstream(t, nil)
	started := make(chan struct{})
	up.hook = func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.Write([]byte("data: {}\n\n"))
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
		return true
	}
	r := newRig(t, gateway.Options{}, up)
	resp, err := http.Post(r.srv.URL+"/v1/messages", "application/json", bytes.NewReader([]byte(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	<-started
	buf := make([]byte, 10)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	r.gw.Stop()
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("the client saw no cut")
	}
	_, x := r.only(t)
	if x.Response.Cut != recorded.CutShutdown {
		t.Errorf("cut %q, want shutdown", x.Response.Cut)
	}
}

// TestGatewayConcurrentAgents: many agents at once through one gateway,
// each with its own session id, and requests of one agent overlapping:
// one session per agent, every exchange whole, every session verifies.
func TestGatewayConcurrentAgents(t *testing.T) {
	answer := ssegen.OpenAI(40 << 10)
	up := newUpstream(t, answer)
	up.piece = 1000
	r := newRig(t, gateway.Options{}, up)
	const agents, each = 6, 6
	var wg sync.WaitGroup
	errs := make(chan error, agents*each)
	for a := 0; a < agents; a++ {
		for i := 0; i < each; i++ {
			wg.Add(1)
			go func(a, i int) {
				defer wg.Done()
				b := []byte(fmt.Sprintf(`{"model":"m","input":[%s"agent %d request %d"]}`, bytes.Repeat([]byte(`"shared history ",`), 200*(i+1)), a, i))
				resp, got, err := r.post("/v1/responses", map[string]string{"Session-Id": fmt.Sprintf("agent-%d", a)}, b)
				if err == nil && (resp.StatusCode != 200 || !bytes.Equal(got, answer)) {
					err = fmt.Errorf("agent %d request %d: status %d, answer equal %v", a, i, resp.StatusCode, bytes.Equal(got, answer))
				}
				errs <- err
			}(a, i)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	r.gw.Wait()
	ids := r.sessions()
	if len(ids) != agents {
		t.Fatalf("%d sessions, want %d", len(ids), agents)
	}
	sent := map[string]bool{}
	for _, q := range up.requests() {
		sent[string(q.body)] = true
	}
	for _, id := range ids {
		s, probs := read(t, r.store, id)
		if len(probs) != 0 || len(s.Exchanges()) != each {
			t.Fatalf("session %s: %d exchanges, problems %v", id, len(s.Exchanges()), probs)
		}
		for _, x := range s.Exchanges() {
			if !sent[string(body(t, s, x.Request.Chunks))] || !bytes.Equal(body(t, s, x.Response.Chunks), answer) {
				t.Errorf("session %s exchange %d: bytes differ from those sent", id, x.N)
			}
		}
		res, err := verify.Session(context.Background(), r.store.(verify.Store), id, verify.Options{Strict: true})
		if err != nil || res.Failed() {
			t.Fatalf("verify %s: %v %v", id, err, res.Findings)
		}
	}
}

// TestGatewayManySessions: more agents than the gateway keeps writers
// for: an idle writer is dropped and read back from the store when its
// agent returns, whose exchanges then go on in the same session.
func TestGatewayManySessions(t *testing.T) {
	up := newUpstream(t, []byte("data: {}\n\n"))
	r := newRig(t, gateway.Options{}, up)
	const agents = 140 // more than the gateway keeps idle
	for round := 0; round < 2; round++ {
		for a := 0; a < agents; a++ {
			b := []byte(fmt.Sprintf(`{"agent":%d,"round":%d,"history":"%s"}`, a, round, bytes.Repeat([]byte("x"), 2000)))
			resp, _, err := r.post("/v1/messages", map[string]string{"X-Claude-Code-Session-Id": fmt.Sprint("agent-", a)}, b)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("agent %d round %d: %v %v", a, round, resp, err)
			}
		}
	}
	r.gw.Wait()
	if r.gw.Failed() != nil {
		t.Fatal(r.gw.Failed())
	}
	if n := r.gw.Stats().Writers; n > 128 {
		t.Errorf("the gateway holds %d writers, want at most 128", n)
	}
	ids := r.sessions()
	if len(ids) != agents {
		t.Fatalf("%d sessions, want %d", len(ids), agents)
	}
	for _, id := range ids {
		s, probs := read(t, r.store, id)
		if len(probs) != 0 || len(s.Exchanges()) != 2 {
			t.Fatalf("session %s: %d exchanges, %v", id, len(s.Exchanges()), probs)
		}
	}
}
