package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/gateway"
	"github.com/sessionlog/sessionlog/internal/fakemodel"
	"github.com/sessionlog/sessionlog/internal/ssegen"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/transcript"
	"github.com/sessionlog/sessionlog/verify"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

// item is one item of a neutral conversation: a user prompt, an
// assistant's text and calls (id, name, arguments), or a tool result.
type item struct {
	role, text, id string
	calls          [][3]string
}

// lanesClient renders a conversation as one API's clients send it.
type lanesClient struct {
	api, path string
	body      func(conv []item) string
	callID    *regexp.Regexp
}

func qj(s string) string { return strconv.Quote(s) }

var lanesClients = []lanesClient{
	{"anthropic-messages", "/v1/messages", func(conv []item) string {
		var ms []string
		for _, it := range conv {
			switch it.role {
			case "user":
				ms = append(ms, `{"role":"user","content":[{"type":"text","text":`+qj(it.text)+`,"cache_control":{"type":"ephemeral"}}]}`)
			case "result":
				ms = append(ms, `{"role":"user","content":[{"type":"tool_result","tool_use_id":`+qj(it.id)+`,"content":`+qj(it.text)+`}]}`)
			case "assistant":
				bs := []string{`{"type":"text","text":` + qj(it.text) + `}`}
				for _, c := range it.calls {
					bs = append(bs, `{"type":"tool_use","id":`+qj(c[0])+`,"name":`+qj(c[1])+`,"input":`+c[2]+`}`)
				}
				ms = append(ms, `{"role":"assistant","content":[`+strings.Join(bs, ",")+`]}`)
			}
		}
		return `{"model":"claude-x","max_tokens":1000,"stream":true,"system":"be brief","messages":[` + strings.Join(ms, ",") +
			`],"tools":[{"name":"ls","description":"list","input_schema":{"type":"object"}}]}`
	}, regexp.MustCompile(`toolu_fake[0-9]+`)},
	{"openai-chat", "/v1/chat/completions", func(conv []item) string {
		ms := []string{`{"role":"system","content":"be brief"}`}
		for _, it := range conv {
			switch it.role {
			case "user":
				ms = append(ms, `{"role":"user","content":`+qj(it.text)+`}`)
			case "result":
				ms = append(ms, `{"role":"tool","tool_call_id":`+qj(it.id)+`,"content":`+qj(it.text)+`}`)
			case "assistant":
				m := `{"role":"assistant","content":` + qj(it.text)
				if len(it.calls) > 0 {
					var cs []string
					for _, c := range it.calls {
						cs = append(cs, `{"id":`+qj(c[0])+`,"type":"function","function":{"name":`+qj(c[1])+`,"arguments":`+qj(c[2])+`}}`)
					}
					m += `,"tool_calls":[` + strings.Join(cs, ",") + `]`
				}
				ms = append(ms, m+`}`)
			}
		}
		return `{"model":"gpt-x","stream":true,"stream_options":{"include_usage":true},"messages":[` + strings.Join(ms, ",") +
			`],"tools":[{"type":"function","function":{"name":"ls","description":"list","parameters":{"type":"object"}}}]}`
	}, regexp.MustCompile(`call_fake[0-9]+`)},
	{"openai-responses", "/v1/responses", func(conv []item) string {
		var in []string
		for _, it := range conv {
			switch it.role {
			case "user":
				in = append(in, `{"type":"message","role":"user","content":[{"type":"input_text","text":`+qj(it.text)+`}]}`)
			case "result":
				in = append(in, `{"type":"function_call_output","call_id":`+qj(it.id)+`,"output":`+qj(it.text)+`}`)
			case "assistant":
				in = append(in, `{"type":"message","role":"assistant","content":[{"type":"output_text","text":`+qj(it.text)+`}]}`)
				for _, c := range it.calls {
					in = append(in, `{"type":"function_call","call_id":`+qj(c[0])+`,"name":`+qj(c[1])+`,"arguments":`+qj(c[2])+`}`)
				}
			}
		}
		return `{"model":"gpt-5","stream":true,"instructions":"be brief","input":[` + strings.Join(in, ",") +
			`],"tools":[{"type":"function","name":"ls","description":"list","parameters":{"type":"object"}}]}`
	}, regexp.MustCompile(`call_fake[0-9]+`)},
}

// tokensOf is a conversation in the form historyOf reads a rebuilt
// request in: one line per text, call and result.
func tokensOf(conv []item) []string {
	var out []string
	for _, it := range conv {
		switch it.role {
		case "result":
			out = append(out, "result "+it.id+" "+it.text)
		case "assistant":
			out = append(out, "assistant "+it.text)
			for _, c := range it.calls {
				out = append(out, "call "+c[0]+" "+c[1])
			}
		default:
			out = append(out, it.role+" "+it.text)
		}
	}
	return out
}

// historyOf reads a rebuilt request's messages as tokensOf writes them.
func historyOf(t *testing.T, request []byte) []string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type, Text, ID, Name, ToolCallID string
				Content                          []struct{ Text string }
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(request, &req); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range req.Messages {
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				out = append(out, m.Role+" "+b.Text)
			case "tool-call":
				out = append(out, "call "+b.ID+" "+b.Name)
			case "tool-result":
				var s string
				for _, c := range b.Content {
					s += c.Text
				}
				out = append(out, "result "+b.ToolCallID+" "+s)
			}
		}
	}
	return out
}

// events returns a session's header and events.
func events(t *testing.T, st eventlog.Store, id string) (codec.SessionHeader, []codec.Event) {
	t.Helper()
	head, err := st.Head(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	it, err := st.Scan(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var evs []codec.Event
	for {
		ev, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return head.Header, evs
}

// checkSteps rebuilds every step of session id and compares it with the
// conversation of the request that began it (convs, in order).
func checkSteps(t *testing.T, st eventlog.Store, id string, convs [][]item) {
	t.Helper()
	h, evs := events(t, st, id)
	var starts []int64
	for _, ev := range evs {
		if ev.Type == codec.TypeStepStart {
			starts = append(starts, ev.Seq)
		}
	}
	if len(starts) != len(convs) {
		t.Fatalf("session %s has %d steps, %d requests were sent", id, len(starts), len(convs))
	}
	for i, start := range starts {
		step, err := rebuild.Request(h, evs, start)
		if err != nil || step.Null {
			t.Fatalf("step at %d: %v (null %v)", start, err, step.Null)
		}
		got, want := strings.Join(historyOf(t, step.Request), "\n"), strings.Join(tokensOf(convs[i]), "\n")
		if got != want {
			t.Errorf("step %d (at seq %d) rebuilds to\n  %s\nwant\n  %s", i+1, start, strings.ReplaceAll(got, "\n", "\n  "), strings.ReplaceAll(want, "\n", "\n  "))
		}
	}
}

// verifyClean verifies session id strictly and fails on any finding or
// warning.
func verifyClean(t *testing.T, st eventlog.Store, id string) {
	t.Helper()
	res, err := verify.Session(context.Background(), st.(verify.Store), id, verify.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Findings {
		t.Errorf("verify: %s", f)
	}
}

// lanesRig is a gateway over a real store in front of h (a
// fakemodel.Server), logging into log when it is not nil.
func lanesRig(t *testing.T, h http.Handler, log ...*syncBuffer) *rig {
	up := httptest.NewServer(h)
	t.Cleanup(up.Close)
	base, _ := url.Parse(up.URL)
	opts := gateway.Options{Upstreams: []gateway.Upstream{{Name: "model", URL: base}}}
	if len(log) > 0 {
		opts.Logger = slog.New(slog.NewTextHandler(log[0], nil))
	}
	return newRig(t, opts)
}

// syncBuffer is a log sink for concurrent handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// send posts conv as c renders it, as agent, and returns the answer.
func (r *rig) send(c lanesClient, agent string, conv []item) string {
	r.t.Helper()
	resp, got, err := r.post(c.path, map[string]string{"Content-Type": "application/json", "Session-Id": agent}, []byte(c.body(conv)))
	if err != nil || resp.StatusCode != 200 {
		r.t.Fatalf("post: %v %v %s", err, resp, got)
	}
	return string(got)
}

// TestGatewayLanes: a multi-step session through the gateway in each API
// (a prompt, a tool call, its result, the final answer, a second prompt)
// is one session whose every step rebuilds to its request's
// conversation, and verifies strictly, without a warning.
func TestGatewayLanes(t *testing.T) {
	for _, c := range lanesClients {
		t.Run(c.api, func(t *testing.T) {
			fm := fakemodel.New("All done.", fakemodel.Reply{Text: "Looking.", Calls: []fakemodel.Call{{Name: "ls", Arguments: `{"path":"."}`}}})
			var log syncBuffer
			r := lanesRig(t, fm, &log)
			conv := []item{{role: "user", text: "list the files"}}
			var convs [][]item
			ans := r.send(c, "agent-1", conv)
			convs = append(convs, conv)
			id := c.callID.FindString(ans)
			if id == "" {
				t.Fatalf("no call id in the answer %q", ans)
			}
			conv = append(conv, item{role: "assistant", text: "Looking.", calls: [][3]string{{id, "ls", `{"path":"."}`}}},
				item{role: "result", id: id, text: "a.txt b.txt"})
			r.send(c, "agent-1", conv)
			convs = append(convs, conv)
			conv = append(conv, item{role: "assistant", text: "All done."}, item{role: "user", text: "and the second?"})
			r.send(c, "agent-1", conv)
			convs = append(convs, conv)
			r.gw.Wait()
			ids := r.sessions()
			if len(ids) != 1 {
				t.Fatalf("sessions %v, want one", ids)
			}
			checkSteps(t, r.store, ids[0], convs)
			verifyClean(t, r.store, ids[0])
			_, evs := events(t, r.store, ids[0])
			var types []string
			for _, ev := range evs {
				if !strings.HasPrefix(ev.Type, "wire/") {
					types = append(types, ev.Type)
				}
			}
			want := "turn/start user/message step/start request/header assistant/message tool/call " +
				"tool/result step/end step/start assistant/message step/end turn/end " +
				"turn/start user/message step/start assistant/message step/end turn/end"
			if got := strings.Join(types, " "); got != want {
				t.Errorf("mapped events\n  %s\nwant\n  %s", got, want)
			}
			if s := r.gw.Stats(); s.Unmapped != 0 {
				t.Errorf("unmapped %d", s.Unmapped)
			}
			// The status lines name the session, the step, the break and
			// the cache reads.
			lines := strings.Split(strings.TrimSpace(log.String()), "\n")
			for i, want := range []string{"step=1.1 .* break=first cacheRead=", "step=1.2 .* break=none cacheRead=", "step=2.1 .* break=none cacheRead="} {
				if i >= len(lines) || !regexp.MustCompile("session="+ids[0]+" exchange="+strconv.Itoa(i+1)+" "+want).MatchString(lines[i]) {
					t.Errorf("status line %d does not match %q:\n%s", i+1, want, log.String())
					break
				}
			}
		})
	}
}

// TestGatewaySideCall: a request of another conversation (a side call:
// another first user message) under the same agent id opens its own
// session, whose header names the agent's first lane as parentSession and
// the lane's root; the main lane goes on mapping unmixed.
func TestGatewaySideCall(t *testing.T) {
	c := lanesClients[0]
	fm := fakemodel.New("Fine.")
	r := lanesRig(t, fm)
	main := []item{{role: "user", text: "hello"}}
	r.send(c, "agent-2", main)
	r.send(c, "agent-2", []item{{role: "user", text: "write a title for: hello"}})
	main = append(main, item{role: "assistant", text: "Fine."}, item{role: "user", text: "again"})
	r.send(c, "agent-2", main)
	r.gw.Wait()
	ids := r.sessions()
	if len(ids) != 2 {
		t.Fatalf("sessions %v, want the lane and the side call's", ids)
	}
	var first, side string
	for _, id := range ids {
		h, _ := events(t, r.store, id)
		if h.ParentSession == "" {
			first = id
		} else {
			side = id
		}
	}
	hs, evs := events(t, r.store, side)
	if hs.ParentSession != first || first == "" {
		t.Fatalf("side call's parentSession %q, the first lane is %q", hs.ParentSession, first)
	}
	if api, root := recorded.HeaderLane(hs.Raw); api != c.api || root == "" {
		t.Errorf("side call's header names lane %q %q", api, root)
	}
	var reqs int
	for _, ev := range evs {
		if ev.Type == recorded.TypeRequest {
			reqs++
		}
	}
	if reqs != 1 {
		t.Errorf("side session has %d requests", reqs)
	}
	checkSteps(t, r.store, first, [][]item{main[:1], main})
	for _, id := range ids {
		verifyClean(t, r.store, id)
	}
}

// TestGatewayEdited: a request whose history the agent edited is mapped
// as a replacement: every step still rebuilds to its request's
// conversation, and the session verifies.
func TestGatewayEdited(t *testing.T) {
	for _, c := range lanesClients {
		t.Run(c.api, func(t *testing.T) {
			r := lanesRig(t, fakemodel.New("Sure."))
			a := []item{{role: "user", text: "one"}}
			r.send(c, "agent-3", a)
			b := append(append([]item(nil), a...), item{role: "assistant", text: "Sure."}, item{role: "user", text: "two"})
			r.send(c, "agent-3", b)
			// Compacted: the earlier answer rewritten by the agent.
			e := []item{{role: "user", text: "one"}, item{role: "assistant", text: "Sure."}, item{role: "user", text: "two (edited)"}}
			r.send(c, "agent-3", e)
			r.gw.Wait()
			ids := r.sessions()
			if len(ids) != 1 {
				t.Fatalf("sessions %v", ids)
			}
			checkSteps(t, r.store, ids[0], [][]item{a, b, e})
			verifyClean(t, r.store, ids[0])
		})
	}
}

// TestGatewayMappingTampered: a session whose mapped events are not the
// mapping of its recorded bytes (here a user message's text changed, as
// valid as the original) fails verify with a mapping finding at that
// event's seq.
func TestGatewayMappingTampered(t *testing.T) {
	c := lanesClients[1]
	r := lanesRig(t, fakemodel.New("Sure."))
	r.send(c, "agent-4", []item{{role: "user", text: "list the files"}})
	r.gw.Wait()
	id := r.sessions()[0]
	h, evs := events(t, r.store, id)
	raw := append([]byte(nil), h.Raw...)
	raw = []byte(strings.Replace(string(raw), id, "gw-0000000000000000", 1))
	th, err := codec.DecodeSessionHeader(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.store.Create(context.Background(), th); err != nil {
		t.Fatal(err)
	}
	at := int64(-1)
	for i := range evs {
		if evs[i].Type == codec.TypeUserMessage {
			evs[i].Raw = []byte(strings.Replace(string(evs[i].Raw), "list the files", "list the filez", 1))
			at = evs[i].Seq
		}
	}
	if err := r.store.Append(context.Background(), th.ID, evs); err != nil {
		t.Fatal(err)
	}
	verifyClean(t, r.store, id)
	res, err := verify.Session(context.Background(), r.store.(verify.Store), th.ID, verify.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 || res.Findings[0].Kind != verify.Mapping || res.Findings[0].Seq != at || !res.Failed() {
		t.Fatalf("findings %v, want one mapping finding at seq %d", res.Findings, at)
	}
}

// TestGatewayParallel: a request whose lane has an exchange in flight
// (a parallel call with the same first message) is mapped in a lane
// session of its own, parentSession the first lane, so that neither
// mapping is broken; the conversation's next request returns to its lane.
func TestGatewayParallel(t *testing.T) {
	c := lanesClients[0]
	fm := fakemodel.New("Fine.")
	release := make(chan struct{})
	var first sync.Once
	r := lanesRig(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		hold := false
		first.Do(func() { hold = true })
		if hold {
			<-release
		}
		fm.ServeHTTP(w, req)
	}))
	var released sync.Once
	free := func() { released.Do(func() { close(release) }) }
	t.Cleanup(free) // before the rig's cleanup, which waits for the handler
	main := []item{{role: "user", text: "hello"}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.send(c, "agent-5", main)
	}()
	waitFor(t, "the first request upstream", func() bool { return len(fm.Requests()) == 0 && r.gw.Stats().Recorded == 1 })
	r.send(c, "agent-5", main) // the same root while the first streams
	free()
	<-done
	main = append(main, item{role: "assistant", text: "Fine."}, item{role: "user", text: "more"})
	r.send(c, "agent-5", main)
	r.gw.Wait()
	ids := r.sessions()
	if len(ids) != 2 {
		t.Fatalf("sessions %v, want the lane and the parallel call's", ids)
	}
	var base, side string
	for _, id := range ids {
		if h, _ := events(t, r.store, id); h.ParentSession == "" {
			base = id
		} else {
			side = id
		}
	}
	if h, _ := events(t, r.store, side); h.ParentSession != base {
		t.Errorf("parallel lane's parent %q, want %q", h.ParentSession, base)
	}
	checkSteps(t, r.store, base, [][]item{main[:1], main})
	checkSteps(t, r.store, side, [][]item{main[:1]})
	for _, id := range ids {
		verifyClean(t, r.store, id)
	}
}

// TestGatewayLongAnswer: a streamed answer over transcript.MaxStreamed is
// forwarded and recorded whole, but mapped only that far: its turn ends
// with an error, and verify's re-run (the whole body fed at once, where
// the gateway fed it as it streamed) gives the same events.
func TestGatewayLongAnswer(t *testing.T) {
	up := newUpstream(t, ssegen.Anthropic(transcript.MaxStreamed+(1<<20)))
	r := newRig(t, gateway.Options{}, up)
	body := []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"write a lot"}]}`)
	resp, got, err := r.post("/v1/messages", map[string]string{"Session-Id": "long"}, body)
	if err != nil || resp.StatusCode != 200 || len(got) != len(up.answer) {
		t.Fatalf("post: %v, %d bytes of %d", err, len(got), len(up.answer))
	}
	r.gw.Wait()
	id := r.sessions()[0]
	verifyClean(t, r.store, id)
	_, evs := events(t, r.store, id)
	last := evs[len(evs)-1]
	if last.Type != codec.TypeTurnEnd || !strings.Contains(string(last.Raw), "over 8 MiB") {
		t.Errorf("the session ends with %s %q, want turn/end with the error", last.Type, last.Raw)
	}
}

// TestGatewayRestartLanes: a gateway started over a store that holds an
// agent's lanes routes its requests to them again (the base's lane from
// its header, the side lane's from its id) and maps on from the events
// (transcript.LaneFrom), so every step still rebuilds and verifies.
func TestGatewayRestartLanes(t *testing.T) {
	c := lanesClients[2]
	fm := fakemodel.New("Fine.")
	model := httptest.NewServer(fm)
	defer model.Close()
	base, _ := url.Parse(model.URL)
	st := openStore(t, filepath.Join(t.TempDir(), "sessions.db"))
	defer st.Close()
	start := func() *rig {
		gw, err := gateway.New(gateway.Options{Store: st, Upstreams: []gateway.Upstream{{Name: "model", URL: base}}})
		if err != nil {
			t.Fatal(err)
		}
		return &rig{t: t, store: st, gw: gw, srv: httptest.NewServer(gw)}
	}
	main := []item{{role: "user", text: "hello"}}
	side := []item{{role: "user", text: "title?"}}
	a := start()
	a.send(c, "agent-6", main)
	a.send(c, "agent-6", side)
	a.srv.Close()
	a.gw.Wait()

	b := start()
	main2 := append(append([]item(nil), main...), item{role: "assistant", text: "Fine."}, item{role: "user", text: "again"})
	side2 := append(append([]item(nil), side...), item{role: "assistant", text: "Fine."}, item{role: "user", text: "shorter"})
	b.send(c, "agent-6", main2)
	b.send(c, "agent-6", side2)
	b.srv.Close()
	b.gw.Wait()
	ids := b.sessions()
	if len(ids) != 2 {
		t.Fatalf("sessions %v after the restart, want the same two", ids)
	}
	for _, id := range ids {
		h, _ := events(t, st, id)
		if h.ParentSession == "" {
			checkSteps(t, st, id, [][]item{main, main2})
		} else {
			checkSteps(t, st, id, [][]item{side, side2})
		}
		verifyClean(t, st, id)
	}
}

// TestGatewayUnmapped: a body the mapping refuses (no conversation, a
// field of the wrong shape) is forwarded and recorded as bytes alone,
// counted as Unmapped; the lane maps on, and the session verifies.
func TestGatewayUnmapped(t *testing.T) {
	c := lanesClients[0]
	r := lanesRig(t, fakemodel.New("Fine."))
	main := []item{{role: "user", text: "hello"}}
	r.send(c, "agent-7", main)
	for _, b := range []string{`{"model":"claude-x","stream":true,"messages":[]}`, `{"model":"claude-x","stream":true,"messages":"oops"}`} {
		if resp, _, err := r.post(c.path, map[string]string{"Session-Id": "agent-7"}, []byte(b)); err != nil || resp.StatusCode != 200 {
			t.Fatalf("post %s: %v", b, err)
		}
	}
	main = append(main, item{role: "assistant", text: "Fine."}, item{role: "user", text: "again"})
	r.send(c, "agent-7", main)
	r.gw.Wait()
	if s := r.gw.Stats(); s.Unmapped != 2 || s.Recorded != 4 {
		t.Errorf("stats %+v, want 4 recorded, 2 unmapped", s)
	}
	ids := r.sessions()
	if len(ids) != 1 {
		t.Fatalf("sessions %v", ids)
	}
	checkSteps(t, r.store, ids[0], [][]item{main[:1], main})
	verifyClean(t, r.store, ids[0])
}

// TestGatewayPromptCacheKey: a client that names its session by no header
// but by its body's prompt_cache_key (docs/gateway.md#sessions) has its requests
// recorded under that key, read from the body the gateway parses once for
// its mapping: the same key, one session; another key, another.
func TestGatewayPromptCacheKey(t *testing.T) {
	var c lanesClient
	for _, lc := range lanesClients {
		if lc.api == transcript.APIResponses {
			c = lc
		}
	}
	fm := fakemodel.New("Fine.")
	r := lanesRig(t, fm)
	post := func(key string, conv []item) {
		t.Helper()
		body := `{"prompt_cache_key":` + qj(key) + `,` + strings.TrimPrefix(c.body(conv), "{")
		resp, got, err := r.post(c.path, map[string]string{"Content-Type": "application/json"}, []byte(body))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("post: %v %v %s", err, resp, got)
		}
	}
	conv := []item{{role: "user", text: "hello"}}
	post("key-1", conv)
	post("key-1", append(conv, item{role: "assistant", text: "Fine."}, item{role: "user", text: "again"}))
	post("key-2", []item{{role: "user", text: "hello"}})
	r.gw.Wait()
	ids := r.sessions()
	if len(ids) != 2 {
		t.Fatalf("sessions %v, want one for each prompt_cache_key", ids)
	}
	agents := map[string]int{}
	for _, id := range ids {
		h, evs := events(t, r.store, id)
		agent, from := agentOf(t, h.Raw)
		if from != "prompt_cache_key" {
			t.Errorf("session %s names its agent from %q", id, from)
		}
		for _, ev := range evs {
			if ev.Type == recorded.TypeRequest {
				agents[agent]++
			}
		}
		verifyClean(t, r.store, id)
	}
	if agents["key-1"] != 2 || agents["key-2"] != 1 {
		t.Errorf("requests by agent %v, want key-1: 2, key-2: 1", agents)
	}
}

// agentOf reads the agent's session id of a recorded session's header,
// and where the gateway found it.
func agentOf(t *testing.T, raw []byte) (agent, from string) {
	t.Helper()
	f := codec.NewFields(raw, codec.PrefixCodec)
	err := f.Object("header", func(k []byte) error {
		if string(k) != recorded.HeaderKey {
			return f.Skip()
		}
		return f.Object(recorded.HeaderKey, func(k []byte) error {
			var err error
			switch string(k) {
			case "agentSession":
				agent, err = f.Str("agentSession")
			case "from":
				from, err = f.Str("from")
			default:
				err = f.Skip()
			}
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return agent, from
}
