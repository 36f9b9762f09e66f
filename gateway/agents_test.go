package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/gateway"
	"github.com/sessionlog/sessionlog/internal/agenttest"
	"github.com/sessionlog/sessionlog/verify"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

// tap is a handler that records what passes through it: per request, in
// the order they arrive, the body as the handler read it and the answer
// as the handler wrote it.
type tap struct {
	h  http.Handler
	mu sync.Mutex
	xs []*tapped
}

type tapped struct {
	method, path string
	status       int
	body, answer []byte
}

func (p *tap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := &tapped{method: r.Method, path: r.URL.Path}
	p.mu.Lock()
	p.xs = append(p.xs, x)
	p.mu.Unlock()
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(r.Body, tapWriter{p, &x.body}), r.Body}
	p.h.ServeHTTP(&tapResponse{ResponseWriter: w, p: p, x: x}, r)
}

// exchanges returns copies of what passed so far.
func (p *tap) exchanges() []tapped {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]tapped, len(p.xs))
	for i, x := range p.xs {
		out[i] = *x
		out[i].body, out[i].answer = bytes.Clone(x.body), bytes.Clone(x.answer)
	}
	return out
}

type tapWriter struct {
	p *tap
	b *[]byte
}

func (w tapWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	*w.b = append(*w.b, b...)
	w.p.mu.Unlock()
	return len(b), nil
}

type tapResponse struct {
	http.ResponseWriter
	p *tap
	x *tapped
}

func (w *tapResponse) WriteHeader(status int) {
	w.p.mu.Lock()
	if w.x.status == 0 {
		w.x.status = status
	}
	w.p.mu.Unlock()
	w.ResponseWriter.WriteHeader(status)
}

func (w *tapResponse) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	if w.x.status == 0 {
		w.x.status = http.StatusOK // Write's implicit WriteHeader
	}
	w.p.mu.Unlock()
	n, err := w.ResponseWriter.Write(b)
	tapWriter{w.p, &w.x.answer}.Write(b[:n])
	return n, err
}

func (w *tapResponse) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *tapResponse) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// agentRun is one agent's scripted session through the gateway: what it
// sent and received (front, between the agent and the gateway) and what
// the model received and answered (model).
type agentRun struct {
	name         string
	s            *agenttest.Session
	front, model *tap
	// transcripts are the agent's own transcripts of the session, read
	// before its temporary home goes.
	transcripts map[string][]byte
}

// TestAgentsThroughGateway runs the real agents (internal/agenttest)
// through the recording gateway, each on the scripted session (a first
// run with two tool calls, a resumed run with one, a second resumed
// run): Claude Code and Codex through one gateway as logtool gateway
// runs it, Gemini CLI (whose API
// is not a recorded one) through a second with RecordAll, both over one
// bbolt store, one scripted model upstream. Then: each agent's session
// was real (agenttest's Session.Check: the tools ran, the resume sent the
// conversation, nothing reached the proxy sink); the gateway passed every
// body and answer through unchanged; the recorded bytes, read back by
// wire/recorded's reader as replay --wire --recorded reads them, are the
// bodies the model received and the answers the agent received, in
// order; each agent's requests are in sessions of its own, named by its
// session id (Claude Code's X-Claude-Code-Session-Id, Codex's
// Session-Id), the resumed runs' in the first run's session; every
// session verifies strictly; and the key the agents send is in neither
// the store's files nor any session's export.
func TestAgentsThroughGateway(t *testing.T) {
	start := time.Now()
	dir := t.TempDir()
	path := filepath.Join(dir, "sessions.db")
	st := openSyncStore(t, path)
	closed := false
	t.Cleanup(func() {
		if !closed {
			st.Close()
		}
	})

	var mu sync.Mutex
	runs := map[string]*agentRun{}
	var strays []string
	// One upstream, as one provider would be: each agent's API goes to
	// its own scripted model.
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := ""
		switch p := r.URL.Path; {
		case strings.HasSuffix(p, "/v1/messages"):
			name = agenttest.Claude
		case strings.HasSuffix(p, "/v1/responses"):
			name = agenttest.Codex
		case strings.HasSuffix(p, ":streamGenerateContent"), strings.HasSuffix(p, ":generateContent"):
			name = agenttest.Gemini
		}
		mu.Lock()
		run := runs[name]
		if run == nil {
			strays = append(strays, r.Method+" "+r.URL.Path)
		}
		mu.Unlock()
		if run == nil {
			http.NotFound(w, r)
			return
		}
		run.model.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)
	base, err := url.Parse(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	upstreams := []gateway.Upstream{{Name: "model", URL: base}}
	newGateway := func(opts gateway.Options) *gateway.Gateway {
		opts.Store, opts.Upstreams, opts.LoopbackHostsOnly = st, upstreams, true
		gw, err := gateway.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		return gw
	}
	gws := map[string]*gateway.Gateway{
		agenttest.Claude: newGateway(gateway.Options{}),
		agenttest.Gemini: newGateway(gateway.Options{RecordAll: true}),
	}
	gws[agenttest.Codex] = gws[agenttest.Claude]
	var fronts []*httptest.Server

	t.Run("agents", func(t *testing.T) {
		for _, name := range []string{agenttest.Claude, agenttest.Codex, agenttest.Gemini} {
			front := &tap{h: gws[name]}
			srv := httptest.NewServer(front)
			fronts = append(fronts, srv)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				env := agenttest.NewEnv(t)
				a := agenttest.NewAgent(t, env, name, srv.URL)
				run := &agentRun{name: name, front: front}
				fm := agenttest.Script(t, a)
				run.model = &tap{h: fm}
				mu.Lock()
				runs[name] = run
				mu.Unlock()
				run.s = agenttest.RunSession(t, a, fm)
				run.s.Report(t)
				run.s.Check(t)
				checkPassThrough(t, run)
				run.transcripts = map[string][]byte{}
				for _, p := range a.Transcripts(t) {
					b, err := os.ReadFile(p)
					if err != nil {
						t.Fatal(err)
					}
					run.transcripts[filepath.Base(p)] = b
				}
			})
		}
	})
	for _, srv := range fronts {
		srv.Close() // waits for the requests in flight
	}
	for _, gw := range gws {
		gw.Wait()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(strays) > 0 {
		t.Errorf("the model got requests of no agent's API: %q", strays)
	}
	var done []*agentRun
	for _, name := range []string{agenttest.Claude, agenttest.Codex, agenttest.Gemini} {
		if r := runs[name]; r != nil && r.s != nil {
			done = append(done, r)
		}
	}
	if t.Failed() {
		return
	}
	if len(done) == 0 {
		t.Skip("no agent installed (.ci/agents.sh installs them)")
	}
	checkRecorded(t, st, done)
	compareTranscripts(t, st, done)
	exported := checkStore(t, st, done)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	checkNoKey(t, dir, exported)
	t.Logf("%d agents through the gateway in %v", len(done), time.Since(start).Round(time.Millisecond))
}

// checkPassThrough: the model received each body the agent sent, and
// the agent received each answer the model gave, byte for byte.
func checkPassThrough(t *testing.T, run *agentRun) {
	t.Helper()
	front, model := run.front.exchanges(), run.model.exchanges()
	if len(front) != len(model) || len(front) != len(run.s.Requests) {
		t.Fatalf("%d requests through the gateway, %d at the model (%d recorded by it)", len(front), len(model), len(run.s.Requests))
	}
	for i := range front {
		f, m := front[i], model[i]
		if !bytes.Equal(f.body, m.body) || !bytes.Equal(m.body, run.s.Requests[i].Body) {
			t.Errorf("request %d: the model received a body of %d bytes, the agent sent %d (equal %v)", i, len(m.body), len(f.body), bytes.Equal(f.body, m.body))
		}
		if f.status != m.status || !bytes.Equal(f.answer, m.answer) {
			t.Errorf("request %d: the agent received status %d and %d bytes, the model sent %d and %d (equal %v)", i, f.status, len(f.answer), m.status, len(m.answer), bytes.Equal(f.answer, m.answer))
		}
		if m.status != http.StatusOK {
			t.Errorf("request %d: %s %s answered %d", i, m.method, m.path, m.status)
		}
	}
	var keyIn []string
	for k, v := range run.s.Requests[0].Header {
		if strings.Contains(strings.Join(v, " "), agenttest.Key) {
			keyIn = append(keyIn, k)
		}
	}
	if len(keyIn) == 0 {
		t.Errorf("the key never reached the model: a test of its absence from the store would prove nothing")
	}
}

// gatewayHeader is the gateway member of a recorded session's header.
type gatewayHeader struct {
	Gateway struct {
		Upstream     string `json:"upstream"`
		AgentSession string `json:"agentSession"`
		From         string `json:"from"`
		Run          string `json:"run"`
	} `json:"gateway"`
	ParentSession string `json:"parentSession"`
}

// checkRecorded: every session's recorded exchanges are one agent's,
// their request bodies the model's and their answers the agent's, in
// order; every exchange an agent made is recorded once; each agent's
// sessions name its session id, and its resumed run went on in its first
// run's session. It logs, per agent, the sessions, exchanges and stored
// ÷ raw bytes.
func checkRecorded(t *testing.T, st eventlog.Store, runs []*agentRun) {
	t.Helper()
	ctx := context.Background()
	heads, err := st.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type sent struct {
		run   *agentRun
		xs    []tapped
		taken []bool
		where []string // the session each exchange was recorded in
	}
	agents := map[*agentRun]*sent{}
	for _, r := range runs {
		xs := r.front.exchanges()
		agents[r] = &sent{run: r, xs: xs, taken: make([]bool, len(xs)), where: make([]string, len(xs))}
	}
	type stat struct {
		sessions, exchanges int
		raw, stored         int64
		lanes               []string
	}
	stats := map[*agentRun]*stat{}
	for _, h := range heads {
		id := h.Header.ID
		s, probs := read(t, st, id)
		if len(probs) > 0 {
			t.Errorf("session %s: %v", id, probs)
		}
		cacheAudit(t, st, h, s)
		line, err := h.Header.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		var hdr gatewayHeader
		if err := json.Unmarshal(line, &hdr); err != nil {
			t.Fatal(err)
		}
		var owner *sent
		var raw int64
		prevJ := -1
		for _, x := range s.Exchanges() {
			req := body(t, s, x.Request.Chunks)
			ans := body(t, s, x.Response.Chunks)
			raw += int64(len(req) + len(ans))
			var found *sent
			j := -1
			for _, a := range agents {
				// The first exchange of a not recorded yet with these bytes:
				// in log order, so a session's exchanges are matched in the
				// order the agent sent them.
				for k, y := range a.xs {
					if !a.taken[k] && bytes.Equal(y.body, req) {
						found, j = a, k
						break
					}
				}
				if found != nil {
					break
				}
			}
			if found == nil {
				t.Errorf("session %s exchange %d: a request of %d bytes no agent sent", id, x.N, len(req))
				continue
			}
			if owner == nil {
				owner = found
			} else if owner != found {
				t.Errorf("session %s holds requests of %s and %s", id, owner.run.name, found.run.name)
			}
			found.taken[j], found.where[j] = true, id
			y := found.xs[j]
			if j < prevJ {
				t.Errorf("session %s records %s's request %d after its request %d", id, found.run.name, j, prevJ)
			}
			prevJ = j
			whole := x.ResponseSeq >= 0 && x.Response.Status == y.status && bytes.Equal(ans, y.answer)
			// A whole answer is recorded whole even when the agent hung up
			// at its last event, before the body's end (Codex does).
			if !whole || x.Response.Cut != "" {
				t.Errorf("%s request %d (session %s exchange %d): recorded answer status %d, %d bytes, cut %q; the agent received %d, %d bytes (equal %v)",
					found.run.name, j, id, x.N, x.Response.Status, len(ans), x.Response.Cut, y.status, len(y.answer), bytes.Equal(ans, y.answer))
			}
			if x.Request.Method != y.method {
				t.Errorf("%s request %d: recorded method %s, sent %s", found.run.name, j, x.Request.Method, y.method)
			}
		}
		if owner == nil {
			t.Errorf("session %s holds no agent's exchange (%d exchanges)", id, len(s.Exchanges()))
			continue
		}
		name := owner.run.name
		if hdr.Gateway.Upstream != "model" {
			t.Errorf("session %s of %s: upstream %q, want model", id, name, hdr.Gateway.Upstream)
		}
		if from, ok := agenttest.SessionHeaders[name]; ok {
			want := owner.run.s.Agent.SessionID(owner.run.s.Requests[0].Header)
			want, _, _ = strings.Cut(want, " ") // Codex: Session-Id, equal to Thread-Id
			// A lane of its own (a side query) names its parent instead.
			if (hdr.Gateway.AgentSession != want || hdr.Gateway.From != from[0]) && hdr.ParentSession == "" {
				t.Errorf("session %s of %s names agent session %q from %q; the agent's is %q in %s", id, name, hdr.Gateway.AgentSession, hdr.Gateway.From, want, from[0])
			}
		} else if hdr.Gateway.Run == "" {
			t.Errorf("session %s of %s (no session id on the wire) is no run session: %+v", id, name, hdr.Gateway)
		}
		sa := stats[owner.run]
		if sa == nil {
			sa = &stat{}
			stats[owner.run] = sa
		}
		sa.sessions++
		sa.exchanges += len(s.Exchanges())
		sa.raw += raw
		sa.stored += h.StoredBytes
		sa.lanes = append(sa.lanes, fmt.Sprintf("%s: %d exchanges, %d events, %d raw bytes, %d stored (%.3f)",
			id, len(s.Exchanges()), h.Next, raw, h.StoredBytes, float64(h.StoredBytes)/float64(max(raw, 1))))
	}
	for _, r := range runs {
		a := agents[r]
		for j, ok := range a.taken {
			if !ok {
				t.Errorf("%s request %d (%s %s, %d bytes) is recorded nowhere", r.name, j, a.xs[j].method, a.xs[j].path, len(a.xs[j].body))
			}
		}
		// The resumed runs' first requests are in the first run's session.
		for _, n := range r.s.Starts[1:] {
			if n < len(a.where) && a.where[0] != a.where[n] {
				t.Errorf("%s: the first run is in session %s, a resumed run in %s", r.name, a.where[0], a.where[n])
			}
		}
		sa := stats[r]
		if sa == nil {
			continue
		}
		t.Logf("%s: %d requests recorded in %d session(s); %d raw bytes (requests and answers), %d stored: stored ÷ raw %.4f",
			r.name, sa.exchanges, sa.sessions, sa.raw, sa.stored, float64(sa.stored)/float64(max(sa.raw, 1)))
		for _, l := range sa.lanes {
			t.Logf("  %s", l)
		}
	}
}

// checkStore verifies the store and every session strictly, and returns
// every session exported as JSONL, as logtool export writes it.
func checkStore(t *testing.T, st eventlog.Store, runs []*agentRun) []byte {
	t.Helper()
	ctx := context.Background()
	if sc, ok := st.(verify.StoreChecker); ok {
		for _, f := range verify.CheckStore(sc) {
			t.Errorf("verify: %s", f)
		}
	} else {
		t.Errorf("the store %T is no verify.StoreChecker", st)
	}
	heads, err := st.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range heads {
		id := h.Header.ID
		res, err := verify.Session(ctx, st.(verify.Store), id, verify.Options{Strict: true})
		if err != nil || len(res.Findings) > 0 {
			t.Errorf("verify --strict %s: %v %v", id, err, res.Findings)
		}
	}
	var out bytes.Buffer
	out.Write(exportAll(t, st))
	// The export is the decompressed text: it holds what the agents sent.
	for _, want := range []string{agenttest.FirstPrompt, agenttest.ResumePrompt, agenttest.LastPrompt, agenttest.ToolSays, agenttest.AgainSays,
		agenttest.NoteSays, agenttest.ResumedText, agenttest.FinalText} {
		if !bytes.Contains(out.Bytes(), []byte(want)) && len(runs) > 0 {
			t.Errorf("the export lacks %q", want)
		}
	}
	return out.Bytes()
}

// checkNoKey: the agents' key is in no file under dir (the store's) and
// nowhere in the export.
func checkNoKey(t *testing.T, dir string, exported []byte) {
	t.Helper()
	key := []byte(agenttest.Key)
	if bytes.Contains(exported, key) {
		t.Errorf("the export of the store's sessions holds the key")
	}
	files := 0
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		t.Logf("store file %s: %d bytes", filepath.Base(p), len(b))
		if bytes.Contains(b, key) {
			t.Errorf("%s holds the key", filepath.Base(p))
		}
		return nil
	})
	if err != nil || files == 0 {
		t.Errorf("walking the store's files: %v, %d files", err, files)
	}
}

// cacheAudit logs the cache audit (docs/gateway.md#cache-audit) of a recorded session, as
// logtool cache prints it, and checks that every exchange of a recorded
// API has its row, the first a first or a new lane.
func cacheAudit(t *testing.T, st eventlog.Store, h eventlog.Head, s *recorded.Session) {
	t.Helper()
	var rows []audit.CacheRow
	tot, err := audit.Cache(context.Background(), st.(audit.Store), h, audit.Window{}, func(r audit.CacheRow) error {
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		t.Errorf("cache audit of %s: %v", h.Header.ID, err)
		return
	}
	mapped := 0
	for _, x := range s.Exchanges() {
		if x.Request.API != "other" {
			mapped++
		}
	}
	if len(rows) != mapped {
		t.Errorf("cache audit of %s: %d rows for %d recorded exchanges", h.Header.ID, len(rows), mapped)
	}
	for i, r := range rows {
		if i == 0 && r.Reason != "first" && r.Reason != "new-lane" {
			t.Errorf("cache audit of %s: the first row's reason is %q", h.Header.ID, r.Reason)
		}
		t.Logf("  cache %s #%d step %d.%d: %d bytes, %d reusable, reason %s (offset %d, index %d), cache read %.0f of %.0f input",
			h.Header.ID, r.Exchange, r.Turn, r.Step, r.Bytes, r.Reusable, r.Reason, r.Offset, r.Index, r.CacheRead, r.InputTokens)
	}
	if len(rows) > 0 {
		t.Logf("  cache %s total: %d of %d bytes reusable; cache reads %.0f of %.0f input tokens", h.Header.ID, tot.Reusable, tot.Bytes, tot.CacheRead, tot.Input)
	}
}
