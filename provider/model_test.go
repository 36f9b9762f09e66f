package provider_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sessionlog/sessionlog/wire"
)

// answer is what the fake model says: blocks of text, reasoning and tool
// calls, and how the stream ends.
type answer struct {
	reasoning, text string
	calls           []fakeCall
	finish          string // the API's own finish / stop reason
}

type fakeCall struct{ id, name, args string }

// fakeModel is an HTTP model server for one wire API: it records every
// body it receives and answers with SSE written the way the real APIs
// write it (arguments split across fragments, usage with cache fields).
type fakeModel struct {
	t    *testing.T
	wire string
	key  string // the key it expects, "" for none

	mu     sync.Mutex
	rng    *rand.Rand
	bodies [][]byte
	calls  int
	// fail, when set, answers request n (from 0) with an HTTP error
	// instead: status, body and Retry-After.
	fail func(n int) (int, string, string)
}

func (m *fakeModel) received() [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([][]byte(nil), m.bodies...)
}

func (m *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		m.t.Errorf("fake model: read body: %v", err)
		return
	}
	m.mu.Lock()
	n := len(m.bodies)
	m.bodies = append(m.bodies, body)
	m.mu.Unlock()
	if msg := m.checkRequest(r); msg != "" {
		m.t.Errorf("fake model: request %d: %s", n, msg)
	}
	if m.fail != nil {
		if status, b, retry := m.fail(n); status != 0 {
			if retry != "" {
				w.Header().Set("Retry-After", retry)
			}
			w.WriteHeader(status)
			io.WriteString(w, b)
			return
		}
	}
	a := m.decide(body)
	w.Header().Set("content-type", "text/event-stream")
	for _, ev := range m.events(a) {
		io.WriteString(w, ev)
		w.(http.Flusher).Flush()
	}
}

// checkRequest checks method, path and headers of the renderer.
func (m *fakeModel) checkRequest(r *http.Request) string {
	rr, _ := wire.Lookup(m.wire)
	want := rr.HTTP(nil)
	if r.Method != want.Method || !strings.HasSuffix(r.URL.Path, want.Path) {
		return "got " + r.Method + " " + r.URL.Path
	}
	for _, f := range want.Header {
		if r.Header.Get(f.Name) != f.Value {
			return "header " + f.Name + " = " + r.Header.Get(f.Name)
		}
	}
	if got := r.Header.Get(want.KeyHeader); got != want.KeyPrefix+m.key && !(m.key == "" && got == "") {
		return "wrong key header " + want.KeyHeader
	}
	return ""
}

// decide picks an answer: tool calls (more rarely right after tool
// results, so turns end) or text, from the tools the body offers.
func (m *fakeModel) decide(body []byte) answer {
	var req struct {
		Tools []struct {
			Name     string `json:"name"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		m.t.Errorf("fake model: body is not JSON: %v", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	afterTools := false
	if k := len(req.Messages); k > 0 {
		last := req.Messages[k-1]
		afterTools = last.Role == "tool" || strings.Contains(string(last.Content), `"tool_result"`)
	}
	a := answer{reasoning: "let me think " + strconv.Itoa(m.rng.Intn(100))}
	p := 0.6
	if afterTools {
		p = 0.25
	}
	if len(req.Tools) > 0 && m.rng.Float64() < p {
		for i := 0; i < 1+m.rng.Intn(2); i++ {
			tl := req.Tools[m.rng.Intn(len(req.Tools))]
			name := tl.Name + tl.Function.Name
			m.calls++
			a.calls = append(a.calls, fakeCall{id: fmt.Sprintf("call_%d", m.calls), name: name,
				args: fmt.Sprintf(`{"path":"src/%d.go","n":%d,"q":"a\"b<&>"}`, m.calls, m.rng.Intn(9))})
		}
		if m.rng.Intn(3) == 0 {
			a.text = "I will call a tool."
		}
		return a
	}
	a.text = "Done: " + []string{"all good", "日本 <b>ok</b>", "line\nbreak", "\u2028sep"}[m.rng.Intn(4)]
	return a
}

// split cuts s into up to n fragments.
func split(rng *rand.Rand, s string, n int) []string {
	var out []string
	for len(s) > 0 {
		k := 1 + rng.Intn(max(len(s)/n, 1)+1)
		if k > len(s) {
			k = len(s)
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

func jsonStr(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// events writes the answer as the API's SSE events.
func (m *fakeModel) events(a answer) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.wire == wire.AnthropicMessages {
		return anthropicEvents(m.rng, a)
	}
	return openAIEvents(m.rng, a)
}

func openAIEvents(rng *rand.Rand, a answer) []string {
	var out []string
	data := func(s string) { out = append(out, "data: "+s+"\n\n") }
	delta := func(d string) {
		data(`{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":` + d + `,"finish_reason":null}]}`)
	}
	delta(`{"role":"assistant","content":""}`)
	for _, f := range split(rng, a.reasoning, 3) {
		delta(`{"reasoning_content":` + jsonStr(f) + `}`)
	}
	for _, f := range split(rng, a.text, 3) {
		delta(`{"content":` + jsonStr(f) + `}`)
	}
	for i, c := range a.calls {
		delta(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%s,"type":"function","function":{"name":%s,"arguments":""}}]}`, i, jsonStr(c.id), jsonStr(c.name)))
		for _, f := range split(rng, c.args, 4) {
			delta(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}`, i, jsonStr(f)))
		}
	}
	finish := a.finish
	if finish == "" {
		finish = "stop"
		if len(a.calls) > 0 {
			finish = "tool_calls"
		}
	}
	data(`{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"` + finish + `"}]}`)
	data(`{"id":"x","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":30,"prompt_tokens_details":{"cached_tokens":64},"completion_tokens_details":{"reasoning_tokens":12}}}`)
	data(`[DONE]`)
	return out
}

func anthropicEvents(rng *rand.Rand, a answer) []string {
	var out []string
	ev := func(name, d string) { out = append(out, "event: "+name+"\ndata: "+d+"\n\n") }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","usage":{"input_tokens":56,"cache_read_input_tokens":64,"cache_creation_input_tokens":8,"output_tokens":1}}}`)
	idx := 0
	block := func(start string, deltas []string) {
		ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, idx, start))
		if rng.Intn(2) == 0 {
			ev("ping", `{"type":"ping"}`)
		}
		for _, d := range deltas {
			ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":%s}`, idx, d))
		}
		ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, idx))
		idx++
	}
	var ds []string
	for _, f := range split(rng, a.reasoning, 3) {
		ds = append(ds, `{"type":"thinking_delta","thinking":`+jsonStr(f)+`}`)
	}
	block(`{"type":"thinking","thinking":""}`, append(ds, `{"type":"signature_delta","signature":"c2ln"}`))
	if a.text != "" {
		ds = nil
		for _, f := range split(rng, a.text, 3) {
			ds = append(ds, `{"type":"text_delta","text":`+jsonStr(f)+`}`)
		}
		block(`{"type":"text","text":""}`, ds)
	}
	for _, c := range a.calls {
		ds = nil
		for _, f := range split(rng, c.args, 4) {
			ds = append(ds, `{"type":"input_json_delta","partial_json":`+jsonStr(f)+`}`)
		}
		block(fmt.Sprintf(`{"type":"tool_use","id":%s,"name":%s,"input":{}}`, jsonStr(c.id), jsonStr(c.name)), ds)
	}
	stop := a.finish
	if stop == "" {
		stop = "end_turn"
		if len(a.calls) > 0 {
			stop = "tool_use"
		}
	}
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stop+`","stop_sequence":null},"usage":{"output_tokens":30}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	return out
}
