package transcript_test

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/transcript"
	"github.com/sessionlog/sessionlog/wire"
)

// The tests of the gateway's mapping (docs/gateway.md#sessions and docs/gateway.md#what-is-recorded) run scripted
// conversations, written once in a neutral form, through each API: the
// test renders every request body the way the API's clients do and every
// answer as the API streams it, maps both through a Lane, appends the
// events to a real store (which validates them), and checks that rebuild
// gives each step the conversation its body sent.

// turnItem is one item of a neutral conversation.
type turnItem struct {
	role string // user, assistant, result
	text string
	// calls are an assistant's tool calls: id, name, arguments.
	calls [][3]string
	// id is a result's call id.
	id string
}

func user(s string) turnItem       { return turnItem{role: "user", text: s} }
func result(id, s string) turnItem { return turnItem{role: "result", id: id, text: s} }
func said(s string, calls ...[3]string) turnItem {
	return turnItem{role: "assistant", text: s, calls: calls}
}

// tokens is the canonical form both sides are compared in: one line per
// text, tool call and tool result, in order.
func tokens(conv []turnItem) []string {
	var out []string
	for _, it := range conv {
		switch it.role {
		case "user":
			out = append(out, "user "+it.text)
		case "result":
			out = append(out, "result "+it.id+" "+it.text)
		case "assistant":
			if it.text != "" {
				out = append(out, "assistant "+it.text)
			}
			for _, c := range it.calls {
				out = append(out, "call "+c[0]+" "+c[1]+" "+canonical(c[2]))
			}
		}
	}
	return out
}

func canonical(js string) string {
	mp, err := codec.FromJSON(nil, []byte(js), codec.Limits{})
	if err != nil {
		return js
	}
	out, _, _ := codec.ToJSON(nil, mp)
	return string(out)
}

// historyTokens reads a rebuilt request's messages in the same form.
func historyTokens(t *testing.T, request []byte) []string {
	t.Helper()
	mp, err := codec.FromJSON(nil, request, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	r := codec.NewReader(mp)
	for _, m := range elemsOf(t, field(t, mp, "messages")) {
		role := mpText(field(t, m, "role"))
		var text string
		flush := func() {
			if text != "" {
				out = append(out, role+" "+text)
				text = ""
			}
		}
		for _, b := range elemsOf(t, field(t, m, "content")) {
			switch mpText(field(t, b, "type")) {
			case "text":
				text += mpText(field(t, b, "text"))
				if role == "user" {
					flush()
				}
			case "tool-call":
				flush()
				out = append(out, "call "+mpText(field(t, b, "id"))+" "+mpText(field(t, b, "name"))+" "+canonical(mpText(field(t, b, "arguments"))))
			case "tool-result":
				flush()
				var in string
				for _, x := range elemsOf(t, field(t, b, "content")) {
					in += mpText(field(t, x, "text"))
				}
				out = append(out, "result "+mpText(field(t, b, "toolCallId"))+" "+in)
			}
		}
		flush()
	}
	_ = r
	return out
}

func field(t *testing.T, mp []byte, key string) []byte {
	t.Helper()
	r := codec.NewReader(mp)
	tok, err := r.Next()
	if err != nil || tok.Kind != codec.KindObject {
		return nil
	}
	for i := 0; i < tok.N; i++ {
		k, _, err := r.Key()
		if err != nil {
			t.Fatal(err)
		}
		v, err := r.Value(64)
		if err != nil {
			t.Fatal(err)
		}
		if string(k) == key {
			return v
		}
	}
	return nil
}

func elemsOf(t *testing.T, mp []byte) [][]byte {
	t.Helper()
	r := codec.NewReader(mp)
	tok, err := r.Next()
	if err != nil || tok.Kind != codec.KindArray {
		return nil
	}
	var out [][]byte
	for i := 0; i < tok.N; i++ {
		v, err := r.Value(64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func mpText(mp []byte) string {
	tok, err := codec.NewReader(mp).Next()
	if err != nil || tok.Kind != codec.KindString {
		return ""
	}
	return string(tok.Str)
}

// q quotes a string as JSON.
func q(s string) string { return strconv.Quote(s) }

// client renders one API's request bodies and answers.
type client struct {
	api string
	// body renders a request of the conversation; marker moves a cache
	// marker to the last message (Claude Code's way); meta is an extra
	// top-level member (Codex's client_metadata).
	body   func(conv []turnItem, system, meta string) string
	answer func(it turnItem) string
	// json renders an answer that was not streamed.
	json  func(it turnItem) string
	trans func() *wire.Translator
	// inline: the client sends the system prompt as a developer message
	// inside the conversation (Codex), which rebuild gives in place.
	inline bool
}

var clients = []client{
	{api: transcript.APIAnthropic, body: anthropicBody, answer: anthropicAnswer, json: anthropicJSON, trans: renderer("anthropic-messages")},
	{api: transcript.APIChat, body: chatBody, answer: chatAnswer, json: chatJSON, trans: renderer("openai-chat")},
	{api: transcript.APIResponses, body: responsesBody, answer: responsesAnswer, json: responsesJSON, trans: wire.NewResponsesTranslator, inline: true},
}

func renderer(name string) func() *wire.Translator {
	return func() *wire.Translator {
		r, err := wire.Lookup(name)
		if err != nil {
			panic(err)
		}
		return r.NewTranslator()
	}
}

// anthropicBody renders as Claude Code does: system as text blocks with a
// marker, the last message's last block marked, a one-text-block message
// without the marker as a plain string, a system-role message inside.
func anthropicBody(conv []turnItem, system, _ string) string {
	var msgs []string
	for i, it := range conv {
		last := i == len(conv)-1
		mark := ""
		if last {
			mark = `,"cache_control":{"type":"ephemeral"}`
		}
		switch it.role {
		case "user":
			if last {
				msgs = append(msgs, `{"role":"user","content":[{"type":"text","text":`+q(it.text)+mark+`}]}`)
			} else {
				msgs = append(msgs, `{"role":"user","content":`+q(it.text)+`}`)
			}
		case "result":
			msgs = append(msgs, `{"role":"user","content":[{"type":"tool_result","tool_use_id":`+q(it.id)+`,"content":`+q(it.text)+mark+`}]}`)
		case "assistant":
			var bs []string
			bs = append(bs, `{"type":"thinking","thinking":"hmm","signature":"sig"}`)
			if it.text != "" {
				bs = append(bs, `{"type":"text","text":`+q(it.text)+`}`)
			}
			for _, c := range it.calls {
				bs = append(bs, `{"type":"tool_use","id":`+q(c[0])+`,"name":`+q(c[1])+`,"input":`+c[2]+`}`)
			}
			msgs = append(msgs, `{"role":"assistant","content":[`+strings.Join(bs, ",")+`]}`)
		}
	}
	return `{"model":"claude-x","messages":[` + strings.Join(msgs, ",") + `],"system":[{"type":"text","text":"billing"},{"type":"text","text":` + q(system) + `,"cache_control":{"type":"ephemeral"}}],` +
		`"tools":[{"name":"ls","description":"list","input_schema":{"type":"object","properties":{"path":{"type":"string"}}},"cache_control":{"type":"ephemeral"}}],` +
		`"metadata":{"user_id":"u"},"max_tokens":32000,"thinking":{"type":"enabled","budget_tokens":1024},"stream":true}`
}

func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		name := ""
		if i := strings.Index(e, `"type":"`); i >= 0 {
			rest := e[i+8:]
			name = rest[:strings.IndexByte(rest, '"')]
		}
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, e)
	}
	return b.String()
}

func anthropicAnswer(it turnItem) string {
	ev := []string{`{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude-x","content":[],"usage":{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":1}}}`}
	i := 0
	if it.text != "" {
		ev = append(ev, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+q(it.text)+`}}`,
			`{"type":"content_block_stop","index":0}`)
		i++
	}
	stop := "end_turn"
	for _, c := range it.calls {
		// Streamed arguments carry spaces the client's echo drops.
		args := strings.ReplaceAll(c[2], ":", ": ")
		ev = append(ev, `{"type":"content_block_start","index":`+strconv.Itoa(i)+`,"content_block":{"type":"tool_use","id":`+q(c[0])+`,"name":`+q(c[1])+`,"input":{}}}`,
			`{"type":"content_block_delta","index":`+strconv.Itoa(i)+`,"delta":{"type":"input_json_delta","partial_json":`+q(args)+`}}`,
			`{"type":"content_block_stop","index":`+strconv.Itoa(i)+`}`)
		i++
		stop = "tool_use"
	}
	ev = append(ev, `{"type":"message_delta","delta":{"stop_reason":"`+stop+`"},"usage":{"output_tokens":7}}`, `{"type":"message_stop"}`)
	return sse(ev...)
}

// chatBody renders Chat Completions: a leading system message, string
// contents, tool messages.
func chatBody(conv []turnItem, system, _ string) string {
	msgs := []string{`{"role":"system","content":` + q(system) + `}`}
	for _, it := range conv {
		switch it.role {
		case "user":
			msgs = append(msgs, `{"role":"user","content":`+q(it.text)+`}`)
		case "result":
			msgs = append(msgs, `{"role":"tool","tool_call_id":`+q(it.id)+`,"content":`+q(it.text)+`}`)
		case "assistant":
			m := `{"role":"assistant","content":` + q(it.text)
			if len(it.calls) > 0 {
				var cs []string
				for _, c := range it.calls {
					cs = append(cs, `{"id":`+q(c[0])+`,"type":"function","function":{"name":`+q(c[1])+`,"arguments":`+q(c[2])+`}}`)
				}
				m += `,"tool_calls":[` + strings.Join(cs, ",") + `]`
			}
			msgs = append(msgs, m+`}`)
		}
	}
	return `{"model":"gpt-x","messages":[` + strings.Join(msgs, ",") + `],"stream":true,"stream_options":{"include_usage":true},` +
		`"tools":[{"type":"function","function":{"name":"ls","description":"list","parameters":{"type":"object"}}}],"temperature":0.2}`
}

func chatAnswer(it turnItem) string {
	var b strings.Builder
	data := func(s string) { b.WriteString("data: " + s + "\n\n") }
	data(`{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"hmm"}}]}`)
	if it.text != "" {
		data(`{"choices":[{"index":0,"delta":{"content":` + q(it.text) + `}}]}`)
	}
	finish := "stop"
	for i, c := range it.calls {
		data(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":` + strconv.Itoa(i) + `,"id":` + q(c[0]) + `,"type":"function","function":{"name":` + q(c[1]) + `,"arguments":` + q(c[2]) + `}}]}}]}`)
		finish = "tool_calls"
	}
	data(`{"choices":[{"index":0,"delta":{},"finish_reason":"` + finish + `"}]}`)
	data(`{"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":64}}}`)
	data(`[DONE]`)
	return b.String()
}

// responsesBody renders as Codex's responses-lite does: an
// additional_tools item, developer messages, then the conversation as
// items; meta is the client_metadata map, whose key order changes.
func responsesBody(conv []turnItem, system, meta string) string {
	items := []string{`{"type":"additional_tools","role":"developer","tools":[{"type":"function","name":"ls","description":"list","parameters":{"type":"object"},"strict":false}]}`,
		`{"type":"message","role":"developer","content":[{"type":"input_text","text":` + q(system) + `}]}`}
	for _, it := range conv {
		switch it.role {
		case "user":
			items = append(items, `{"type":"message","role":"user","content":[{"type":"input_text","text":`+q(it.text)+`}]}`)
		case "result":
			items = append(items, `{"type":"function_call_output","call_id":`+q(it.id)+`,"output":`+q(it.text)+`}`)
		case "assistant":
			items = append(items, `{"type":"reasoning","summary":[{"type":"summary_text","text":"hmm"}],"encrypted_content":"enc"}`)
			if it.text != "" {
				items = append(items, `{"type":"message","role":"assistant","content":[{"type":"output_text","text":`+q(it.text)+`}]}`)
			}
			for _, c := range it.calls {
				items = append(items, `{"type":"function_call","call_id":`+q(c[0])+`,"name":`+q(c[1])+`,"arguments":`+q(c[2])+`}`)
			}
		}
	}
	if meta == "" {
		meta = `{"a":"1","b":"2"}`
	}
	return `{"model":"gpt-5-codex","input":[` + strings.Join(items, ",") + `],"stream":true,"store":false,"reasoning":{"effort":"medium","summary":"auto"},` +
		`"prompt_cache_key":"s1","client_metadata":` + meta + `}`
}

func responsesAnswer(it turnItem) string {
	out := []string{`{"id":"rs","type":"reasoning","summary":[{"type":"summary_text","text":"hmm"}]}`}
	if it.text != "" {
		out = append(out, `{"id":"msg","type":"message","role":"assistant","content":[{"type":"output_text","text":`+q(it.text)+`}]}`)
	}
	for _, c := range it.calls {
		out = append(out, `{"id":"fc","type":"function_call","call_id":`+q(c[0])+`,"name":`+q(c[1])+`,"arguments":`+q(c[2])+`}`)
	}
	return sse(`{"type":"response.completed","response":{"id":"r","status":"completed","output":[` + strings.Join(out, ",") +
		`],"usage":{"input_tokens":100,"input_tokens_details":{"cached_tokens":64},"output_tokens":5}}}`)
}

// system is the system prompt of the scripted sessions.
const system = "be brief"

// session is a lane recorded into a real store, as the gateway would.
type session struct {
	t    *testing.T
	c    client
	st   eventlog.Store
	id   string
	lane *transcript.Lane
	next int64
	// origin is the seq of the last wire/request: the origin of its
	// exchange's mapped events, the answer's included.
	origin int64
	events []codec.Event
}

func newSession(t *testing.T, c client) *session {
	t.Helper()
	st := openStore(t)
	h := codec.NewSessionHeader("gw-test", 1767225600000, "", "", 0)
	if err := st.Create(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	lane, err := transcript.NewLane(c.api)
	if err != nil {
		t.Fatal(err)
	}
	return &session{t: t, c: c, st: st, id: h.ID, lane: lane}
}

// append stores events, which the store validates.
func (s *session) append(evs []codec.Event) {
	s.t.Helper()
	if len(evs) == 0 {
		return
	}
	if err := s.st.Append(context.Background(), s.id, evs); err != nil {
		s.t.Fatalf("append: %v", err)
	}
	s.next += int64(len(evs))
}

// wireEvent appends an opaque stand-in for the exchange's wire/request
// (or wire/response) and returns its seq.
func (s *session) wireEvent(typ string) int64 {
	s.t.Helper()
	var o codec.Object
	o.Str("api", s.c.api)
	ev, err := codec.NewEvent(typ, s.next, 1767225600000, o.Bytes(), codec.SurfaceOp{}, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	seq := s.next
	s.append([]codec.Event{ev})
	return seq
}

// request maps one request body; it returns the break and the seq of
// the step/start it wrote.
func (s *session) request(body string) (transcript.Break, int64) {
	s.t.Helper()
	s.origin = s.wireEvent("wire/request")
	evs, brk, err := s.lane.MapRequest([]byte(body), s.origin, s.next, 1767225600000)
	if err != nil {
		s.t.Fatalf("map request: %v", err)
	}
	start := int64(-1)
	for _, ev := range evs {
		if ev.Type == codec.TypeStepStart {
			start = ev.Seq
		}
	}
	s.append(evs)
	return brk, start
}

// answer maps an answer streamed in small pieces, as the gateway reads
// it (NewAnswer, Feed, End).
func (s *session) answer(stream string) {
	s.t.Helper()
	s.answerBody(200, true, stream)
}

// answerBody maps an answer of the status given, streamed or not.
func (s *session) answerBody(status int, streamed bool, body string) []codec.Event {
	s.t.Helper()
	s.wireEvent("wire/response")
	a := transcript.NewAnswer(s.c.api, status, streamed)
	for p := []byte(body); len(p) > 0; {
		n := min(len(p), 7)
		a.Feed(p[:n])
		p = p[n:]
	}
	a.End()
	evs, err := s.lane.MapAnswer(a, s.origin, s.next, 1767225600000)
	if err != nil {
		s.t.Fatalf("map answer: %v", err)
	}
	s.append(evs)
	return evs
}

// stored reads the session back from the store.
func (s *session) stored() (codec.SessionHeader, []codec.Event) {
	s.t.Helper()
	it, err := s.st.Scan(context.Background(), s.id, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	defer it.Close()
	var evs []codec.Event
	for {
		ev, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			s.t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	head, err := s.st.Head(context.Background(), s.id)
	if err != nil {
		s.t.Fatal(err)
	}
	return head.Header, evs
}

// check rebuilds the step at start and compares its messages with conv;
// it also says what breaks of docs/rules.md#turns-and-steps's structure the log has.
func (s *session) check(start int64, conv []turnItem) {
	s.t.Helper()
	h, evs := s.stored()
	step, err := rebuild.Request(h, evs, start)
	if err != nil {
		s.t.Fatalf("rebuild step at %d: %v", start, err)
	}
	if step.Null {
		s.t.Fatalf("step at %d has no header", start)
	}
	if s.c.inline {
		conv = append([]turnItem{user(system)}, conv...)
	}
	got, want := historyTokens(s.t, step.Request), tokens(conv)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		s.t.Errorf("step at %d rebuilds to\n  %s\nwant\n  %s", start, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// structure returns the docs/rules.md#turns-and-steps breaks of the stored log.
func (s *session) structure() []rebuild.Break {
	_, evs := s.stored()
	var st rebuild.Structure
	var out []rebuild.Break
	for i := range evs {
		out = append(out, st.Add(&evs[i])...)
	}
	return out
}

var (
	lsCall = [3]string{"call_1", "ls", `{"path":"."}`}
	prompt = user("list the files")
	first  = said("Looking.", lsCall)
	files  = result("call_1", "a.txt b.txt")
	final  = said("Two files.")
	second = user("count them")
)

// TestLaneSession runs a session of two prompts, the first with a tool
// call, through each API: every step rebuilds to its body's
// conversation, the log keeps docs/rules.md#turns-and-steps's structure, and the header is
// written once.
func TestLaneSession(t *testing.T) {
	for _, c := range clients {
		t.Run(c.api, func(t *testing.T) {
			s := newSession(t, c)
			conv := []turnItem{prompt}
			brk, start := s.request(c.body(conv, system, ""))
			if brk.Kind != transcript.BreakFirst {
				t.Errorf("first request: break %+v", brk)
			}
			s.check(start, conv)
			s.answer(c.answer(first))
			conv = append(conv, first, files)
			brk, start = s.request(c.body(conv, system, `{"b":"2","a":"1"}`))
			if want := map[string]string{transcript.APIAnthropic: transcript.BreakMarkers}[c.api]; brk.Kind != want && !(want == "" && brk.Kind == transcript.BreakNone) {
				t.Errorf("second request: break %+v", brk)
			}
			s.check(start, conv)
			s.answer(c.answer(final))
			conv = append(conv, final, second)
			_, start = s.request(c.body(conv, system, ""))
			s.check(start, conv)
			s.answer(c.answer(said("Two.")))
			if b := s.structure(); len(b) > 0 {
				t.Errorf("structure breaks: %+v", b)
			}
			_, evs := s.stored()
			count := map[string]int{}
			for _, ev := range evs {
				count[ev.Type]++
			}
			want := map[string]int{codec.TypeRequestHeader: 1, codec.TypeTurnStart: 2, codec.TypeTurnEnd: 2, codec.TypeStepStart: 3,
				codec.TypeStepEnd: 3, codec.TypeAssistantMessage: 3, codec.TypeToolCall: 1, codec.TypeToolResult: 1, codec.TypeUserMessage: 2}
			for typ, n := range want {
				if count[typ] != n {
					t.Errorf("%d %s events, want %d", count[typ], typ, n)
				}
			}
		})
	}
}

func anthropicJSON(it turnItem) string {
	var bs []string
	if it.text != "" {
		bs = append(bs, `{"type":"text","text":`+q(it.text)+`}`)
	}
	stop := "end_turn"
	for _, c := range it.calls {
		bs = append(bs, `{"type":"tool_use","id":`+q(c[0])+`,"name":`+q(c[1])+`,"input":`+c[2]+`}`)
		stop = "tool_use"
	}
	return `{"id":"m","type":"message","role":"assistant","model":"claude-x","content":[` + strings.Join(bs, ",") + `],"stop_reason":"` + stop +
		`","usage":{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":7}}`
}

func chatJSON(it turnItem) string {
	m := `{"role":"assistant","content":` + q(it.text) + `,"reasoning_content":"hmm"`
	finish := "stop"
	if len(it.calls) > 0 {
		var cs []string
		for _, c := range it.calls {
			cs = append(cs, `{"id":`+q(c[0])+`,"type":"function","function":{"name":`+q(c[1])+`,"arguments":`+q(c[2])+`}}`)
		}
		m += `,"tool_calls":[` + strings.Join(cs, ",") + `]`
		finish = "tool_calls"
	}
	return `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":` + m + `},"finish_reason":"` + finish +
		`"}],"usage":{"prompt_tokens":100,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":64}}}`
}

func responsesJSON(it turnItem) string {
	stream := responsesAnswer(it)
	data := stream[strings.Index(stream, "data: ")+6 : strings.LastIndex(stream, "}")+1]
	return data[strings.Index(data, `"response":`)+11 : len(data)-1]
}
