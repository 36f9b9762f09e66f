package transcript_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/transcript"
	"github.com/sessionlog/sessionlog/wire"
)

// played runs the scripted session of TestLaneSession up to its third
// answer and returns it with the conversation the third request sent.
func played(t *testing.T, c client) (*session, []turnItem) {
	t.Helper()
	s := newSession(t, c)
	conv := []turnItem{prompt}
	s.request(c.body(conv, system, ""))
	s.answer(c.answer(first))
	conv = append(conv, first, files)
	s.request(c.body(conv, system, ""))
	s.answer(c.answer(final))
	conv = append(conv, final, second)
	s.request(c.body(conv, system, ""))
	s.answer(c.answer(said("Two.")))
	return s, conv
}

// TestLaneEdited edits history in each API: a rewound prompt (the last
// prompt replaced by another), a dropped tail (an older request sent
// again), a compacted history (earlier items gone, the root kept). Each
// request's step rebuilds to exactly its conversation, through surface
// replacements the store accepts; the break is edited, with the index
// of the first item that changed.
func TestLaneEdited(t *testing.T) {
	for _, c := range clients {
		t.Run(c.api, func(t *testing.T) {
			lead := 0 // items before the conversation in the body
			switch c.api {
			case transcript.APIChat:
				lead = 1 // the system message
			case transcript.APIResponses:
				lead = 2 // additional_tools, developer
			}
			s, conv := played(t, c)

			// Rewind: the second prompt edited.
			edited := append(append([]turnItem(nil), conv[:len(conv)-1]...), user("count them twice"))
			brk, start := s.request(c.body(edited, system, ""))
			at := lead + len(conv) - 1
			if c.api == transcript.APIResponses {
				at += 3 // two reasoning items, the call's own item
			}
			if brk.Kind != transcript.BreakEdited || brk.Index != at {
				t.Errorf("rewind: break %+v, want edited at %d", brk, at)
			}
			s.check(start, edited)
			s.answer(c.answer(said("Four.")))

			// A dropped tail: the body of the second request again.
			dropped := conv[:3]
			brk, start = s.request(c.body(dropped, system, ""))
			if brk.Kind != transcript.BreakEdited {
				t.Errorf("dropped tail: break %+v", brk)
			}
			s.check(start, dropped)
			s.answer(c.answer(final))

			// Compacted: the root and a summary, the rest gone.
			compacted := []turnItem{prompt, user("summary: two files listed"), user("go on")}
			brk, start = s.request(c.body(compacted, system, ""))
			if brk.Kind != transcript.BreakEdited {
				t.Errorf("compacted: break %+v", brk)
			}
			s.check(start, compacted)
			s.answer(c.answer(said("Going on.")))
			if b := s.structure(); len(b) > 0 {
				t.Errorf("structure breaks: %+v", b)
			}
		})
	}
}

// TestLaneMarkers is Claude Code's moving cache marker: the same
// conversation sent again with the marker on another message (a
// one-block message switching between a plain string and a list) is no
// edit: no surface event is written again, the break is markers, and the
// step rebuilds to the conversation.
func TestLaneMarkers(t *testing.T) {
	s := newSession(t, clients[0])
	conv := []turnItem{prompt}
	s.request(anthropicBody(conv, system, ""))
	s.answer(anthropicAnswer(said("Hi.")))
	conv = append(conv, said("Hi."), second)
	body := anthropicBody(conv, system, "")
	s.request(body)
	// Sent again (the client retried) with the marker moved to the first
	// message.
	moved := strings.Replace(body, `"text":"count them","cache_control":{"type":"ephemeral"}`, `"text":"count them"`, 1)
	moved = strings.Replace(moved, `{"role":"user","content":"list the files"}`,
		`{"role":"user","content":[{"type":"text","text":"list the files","cache_control":{"type":"ephemeral"}}]}`, 1)
	if moved == body {
		t.Fatal("the marker did not move")
	}
	evs, brk, err := s.lane.MapRequest([]byte(moved), 0, s.next, 0)
	if err != nil {
		t.Fatal(err)
	}
	start := int64(-1)
	for _, ev := range evs {
		if codec.IsSurfaceType(ev.Type) {
			t.Errorf("a marker move wrote a %s", ev.Type)
		}
		if ev.Type == codec.TypeStepStart {
			start = ev.Seq
		}
	}
	if brk.Kind != transcript.BreakMarkers {
		t.Errorf("break %+v, want markers", brk)
	}
	s.append(evs)
	s.check(start, conv)
}

// TestLaneConfig: a model change is a config break and a change snapshot;
// Codex's client_metadata re-ordered, or a stream flag, is neither.
func TestLaneConfig(t *testing.T) {
	c := clients[2]
	s := newSession(t, c)
	conv := []turnItem{prompt}
	s.request(c.body(conv, system, `{"a":"1","b":"2"}`))
	s.answer(c.answer(said("Hi.")))
	conv = append(conv, said("Hi."), second)
	evs, brk, err := s.lane.MapRequest([]byte(c.body(conv, system, `{"b":"2","a":"1"}`)), 0, s.next, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.append(evs)
	for _, ev := range evs {
		if ev.Type == codec.TypeRequestHeader {
			t.Error("re-ordered client_metadata wrote a header")
		}
	}
	if brk.Kind != transcript.BreakNone {
		t.Errorf("re-ordered client_metadata: break %+v", brk)
	}
	s.answer(c.answer(said("Two.")))
	conv = append(conv, said("Two."), user("again"))
	body := strings.Replace(c.body(conv, system, ""), `"model":"gpt-5-codex"`, `"model":"gpt-5.1-codex"`, 1)
	evs, brk, err = s.lane.MapRequest([]byte(body), 0, s.next, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.append(evs)
	var reasons []string
	for _, ev := range evs {
		if ev.Type == codec.TypeRequestHeader {
			reasons = append(reasons, string(ev.Raw))
		}
	}
	if brk.Kind != transcript.BreakConfig || len(reasons) != 1 || !strings.Contains(reasons[0], "change") || !strings.Contains(reasons[0], "gpt-5.1-codex") {
		t.Errorf("model change: break %+v, headers %q", brk, reasons)
	}
	// A system change is a system break at the first differing byte.
	s.answer(c.answer(said("Three.")))
	chat := newSession(t, clients[1])
	chat.request(chatBody([]turnItem{prompt}, "be brief", ""))
	chat.answer(chatAnswer(said("Hi.")))
	_, brk, err = chat.lane.MapRequest([]byte(chatBody([]turnItem{prompt, said("Hi."), second}, "be terse", "")), 0, chat.next, 0)
	if err != nil {
		t.Fatal(err)
	}
	if brk.Kind != transcript.BreakSystem || brk.Offset != 3 {
		t.Errorf("system change: break %+v, want system at 3", brk)
	}
}

// TestLaneFailures: an answer that fails (an HTTP error, a stream cut by
// the upstream) ends its step and turn with the error, one the client
// abandoned as aborted; the retry that follows maps and rebuilds.
func TestLaneFailures(t *testing.T) {
	for _, c := range clients {
		t.Run(c.api, func(t *testing.T) {
			s := newSession(t, c)
			conv := []turnItem{prompt}
			s.request(c.body(conv, system, ""))
			evs := s.answerBody(529, false, `{"error":{"type":"overloaded_error","message":"busy"}}`)
			end := evs[len(evs)-1]
			if end.Type != codec.TypeTurnEnd || !bytes.Contains(end.Raw, []byte("error")) || !bytes.Contains(end.Raw, []byte("busy")) {
				t.Errorf("a failed answer ends with %s", end.Type)
			}
			var a transcript.Answer
			// The retry: the same body.
			_, start := s.request(c.body(conv, system, ""))
			s.check(start, conv)
			s.answer(c.answer(first)[:len(c.answer(first))/2]) // the upstream went mid-stream
			_, start = s.request(c.body(conv, system, ""))
			s.check(start, conv)
			var cut transcript.Answer
			cut.Cut(transcript.CutClient)
			evs = s.mapAnswer(&cut)
			if end := evs[len(evs)-1]; !bytes.Contains(end.Raw, []byte("aborted")) {
				t.Errorf("a cut answer ends with %s", end.Type)
			}
			_, start = s.request(c.body(conv, system, ""))
			s.check(start, conv)
			s.answer(c.answer(said("Hi.")))
			if b := s.structure(); len(b) > 0 {
				t.Errorf("structure breaks: %+v", b)
			}
			if _, err := s.lane.MapAnswer(&a, s.origin, s.next, 0); !errors.Is(err, transcript.ErrStale) || !errors.Is(err, codec.ErrInvalid) {
				t.Errorf("an answer with no request waiting: %v", err)
			}
			// Two requests of the lane in flight: the first one's answer,
			// arriving late, maps to nothing; the second's maps.
			conv = append(conv, said("Hi."), second)
			s.request(c.body(conv, system, ""))
			stale := s.origin
			s.request(c.body(conv, system, ""))
			var late transcript.Answer
			if _, err := s.lane.MapAnswer(&late, stale, s.next, 0); !errors.Is(err, transcript.ErrStale) {
				t.Errorf("a late answer: %v", err)
			}
			s.answer(c.answer(said("Two.")))
			if b := s.structure(); len(b) > 0 {
				t.Errorf("structure breaks: %+v", b)
			}
		})
	}
}

func (s *session) mapAnswer(a *transcript.Answer) []codec.Event {
	s.t.Helper()
	s.wireEvent("wire/response")
	evs, err := s.lane.MapAnswer(a, s.origin, s.next, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	s.append(evs)
	return evs
}

// TestLaneFrom restores a lane from its stored events at every point of
// a session and maps the rest of the session with it: the events are
// byte for byte those of the lane that never stopped.
func TestLaneFrom(t *testing.T) {
	for _, c := range clients {
		t.Run(c.api, func(t *testing.T) {
			type exchange struct {
				body   string
				answer string
			}
			conv := []turnItem{prompt}
			var script []exchange
			script = append(script, exchange{c.body(conv, system, ""), c.answer(first)})
			conv = append(conv, first, files)
			script = append(script, exchange{c.body(conv, system, ""), c.answer(final)})
			conv = append(conv, final, second)
			script = append(script, exchange{c.body(conv, system, ""), c.answer(said("Two."))})
			edited := append(append([]turnItem(nil), conv[:len(conv)-1]...), user("count them twice"))
			script = append(script, exchange{c.body(edited, system, ""), c.answer(said("Four."))})
			whole := newSession(t, c)
			for _, x := range script {
				whole.request(x.body)
				whole.answer(x.answer)
			}
			_, want := whole.stored()
			for cut := 1; cut < len(script); cut++ {
				s := newSession(t, c)
				for _, x := range script[:cut] {
					s.request(x.body)
					s.answer(x.answer)
				}
				_, evs := s.stored()
				lane, err := transcript.LaneFrom(c.api, evs)
				if err != nil {
					t.Fatal(err)
				}
				if lane.Awaiting() {
					t.Errorf("restored after %d exchanges: awaiting", cut)
				}
				s.lane = lane
				for _, x := range script[cut:] {
					s.request(x.body)
					s.answer(x.answer)
				}
				_, got := s.stored()
				if len(got) != len(want) {
					t.Fatalf("restored after %d exchanges: %d events, want %d", cut, len(got), len(want))
				}
				for i := range got {
					if !bytes.Equal(got[i].Raw, want[i].Raw) {
						t.Fatalf("restored after %d exchanges: seq %d differs:\n%s\nwant\n%s", cut, i, got[i].Raw, want[i].Raw)
					}
				}
			}
			// A request whose answer a crash lost: Close ends it.
			s := newSession(t, c)
			s.request(script[0].body)
			_, evs := s.stored()
			lane, err := transcript.LaneFrom(c.api, evs)
			if err != nil {
				t.Fatal(err)
			}
			if !lane.Awaiting() {
				t.Fatal("a request without answer: not awaiting")
			}
			closers, err := lane.Close("interrupted", 0, s.next, 0)
			if err != nil {
				t.Fatal(err)
			}
			s.append(closers)
			if len(closers) != 2 || closers[0].Type != codec.TypeStepEnd || closers[1].Type != codec.TypeTurnEnd {
				t.Errorf("closers: %d events", len(closers))
			}
		})
	}
}

// TestRoot: the lane key is the first user message in normal form.
func TestRoot(t *testing.T) {
	root := func(api, body string) string {
		t.Helper()
		r, err := transcript.Root(api, []byte(body))
		if err != nil {
			t.Fatalf("%s: %v", api, err)
		}
		return r
	}
	a := root(transcript.APIAnthropic, `{"messages":[{"role":"user","content":"hi"}]}`)
	for _, body := range []string{
		`{"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]},{"role":"assistant","content":"x"}]}`,
		`{"system":"other","messages":[{"role":"system","content":"ctx"},{"role":"user","content":[{"type":"text","text":"hi"}]}]}`,
	} {
		if r := root(transcript.APIAnthropic, body); r != a {
			t.Errorf("%s: another root", body)
		}
	}
	if root(transcript.APIAnthropic, `{"messages":[{"role":"user","content":"title?"}]}`) == a {
		t.Error("a side call has the conversation's root")
	}
	if r := root(transcript.APIChat, `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"}]}`); r != a {
		t.Error("chat: another root")
	}
	if r := root(transcript.APIResponses, `{"input":[{"type":"additional_tools","tools":[]},{"type":"message","role":"developer","content":"d"},{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}`); r != a {
		t.Error("responses: another root")
	}
	if r := root(transcript.APIResponses, `{"input":"hi"}`); r != a {
		t.Error("responses: a string input has another root")
	}
}

// TestLaneRefuses: bodies of the wrong shape are refused as invalid,
// naming the API and the item, never content; the lane is unchanged.
func TestLaneRefuses(t *testing.T) {
	for _, tt := range []struct {
		api, body, want string
	}{
		{transcript.APIAnthropic, `not json SECRET`, "not a JSON object"},
		{transcript.APIAnthropic, `{"messages":"SECRET"}`, "messages is not a list"},
		{transcript.APIAnthropic, `{"messages":[{"role":"user","content":[{"text":"SECRET"}]}]}`, "message 0"},
		{transcript.APIAnthropic, `{"messages":[]}`, "empty"},
		{transcript.APIChat, `{"messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"id":"SECRET"}]}]}`, "message 1: tool call 0"},
		{transcript.APIChat, `{"messages":[{"role":"tool","content":"SECRET"}]}`, "message 0"},
		{transcript.APIResponses, `{"input":[{"role":"user","content":"a"},{"type":"function_call","name":"SECRET"}]}`, "input item 1"},
		{transcript.APIResponses, `{"input":[{"content":"SECRET"}]}`, "input item 0"},
		{transcript.APIResponses, `{"input":{"SECRET":1}}`, "input is neither"},
		{transcript.APIResponses, `{"tools":[1],"input":"a"}`, "tool 0"},
	} {
		lane, err := transcript.NewLane(tt.api)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = lane.MapRequest([]byte(tt.body), 0, 0, 0)
		if !errors.Is(err, codec.ErrInvalid) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.api) || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s %s: %v", tt.api, tt.body, err)
		}
		if lane.Awaiting() {
			t.Errorf("%s %s: a refused request changed the lane", tt.api, tt.body)
		}
	}
	if _, err := transcript.NewLane("gemini"); !errors.Is(err, codec.ErrInvalid) {
		t.Errorf("unknown api: %v", err)
	}
	var a transcript.Answer
	if err := a.Add(wire.Chunk{Type: wire.ChunkBlockEnd, Block: []byte("{")}); !errors.Is(err, codec.ErrInvalid) {
		t.Errorf("a block-end that is not JSON: %v", err)
	}
}

// TestLaneAnswerShapes: an answer a client sends back as several
// assistant messages, or with its reasoning dropped, continues the
// conversation (no edit); an answer of reasoning alone is no node the
// client must send back.
func TestLaneAnswerShapes(t *testing.T) {
	s := newSession(t, clients[0])
	conv := []turnItem{prompt}
	s.request(anthropicBody(conv, system, ""))
	s.answer(anthropicAnswer(first))
	body := `{"model":"claude-x","messages":[{"role":"user","content":"list the files"},` +
		`{"role":"assistant","content":[{"type":"text","text":"Looking."}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"ls","input":{"path":"."}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"a.txt b.txt"}]}]}`
	evs, brk, err := s.lane.MapRequest([]byte(body), s.next, s.next, 0)
	if err != nil {
		t.Fatal(err)
	}
	if brk.Kind == transcript.BreakEdited {
		t.Errorf("an answer sent back as two messages: break %+v", brk)
	}
	for _, ev := range evs {
		if ev.Type == codec.TypeAssistantMessage || ev.Type == codec.TypeUserMessage {
			t.Errorf("an answer sent back as two messages wrote a %s", ev.Type)
		}
	}
	s.origin = s.next
	s.append(evs)
	// Reasoning alone.
	s.wireEvent("wire/response")
	var a transcript.Answer
	if err := a.Add(wire.Chunk{Type: wire.ChunkBlockEnd, Index: 0, Block: []byte(`{"type":"reasoning","text":"hmm"}`)},
		wire.Chunk{Type: wire.ChunkFinish, Reason: []byte(`{"kind":"stop"}`)}); err != nil {
		t.Fatal(err)
	}
	evs, err = s.lane.MapAnswer(&a, s.origin, s.next, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.append(evs)
	conv = append(conv, first, files, second)
	_, start := s.request(anthropicBody(conv, system, ""))
	_, all := s.stored()
	for _, ev := range all[start-3:] {
		if codec.IsSurfaceType(ev.Type) && ev.Type != codec.TypeUserMessage {
			t.Errorf("after an answer of reasoning alone: a %s", ev.Type)
		}
	}
	s.check(start, conv)
	if b := s.structure(); len(b) > 0 {
		t.Errorf("structure breaks: %+v", b)
	}
}

// TestLaneAnswerJSON: an answer that was not streamed maps to the events
// of the same answer streamed.
func TestLaneAnswerJSON(t *testing.T) {
	for _, c := range clients {
		t.Run(c.api, func(t *testing.T) {
			var got [2][]string
			for i, streamed := range []bool{true, false} {
				s := newSession(t, c)
				conv := []turnItem{prompt}
				s.request(c.body(conv, system, ""))
				for _, it := range []turnItem{first, final} {
					body := c.answer(it)
					if !streamed {
						body = c.json(it)
					}
					for _, ev := range s.answerBody(200, streamed, body) {
						j, _, err := codec.ToJSON(nil, ev.Raw)
						if err != nil {
							t.Fatal(err)
						}
						// The streamed arguments of the test's Anthropic
						// answers have spaces; the object's are compact.
						got[i] = append(got[i], strings.ReplaceAll(string(j), `\": \"`, `\":\"`))
					}
					conv = append(conv, it, files)
					if it.role == first.role && len(it.calls) > 0 {
						s.request(c.body(conv, system, ""))
					}
				}
			}
			if strings.Join(got[0], "\n") != strings.Join(got[1], "\n") {
				t.Errorf("streamed:\n%s\nnot streamed:\n%s", strings.Join(got[0], "\n"), strings.Join(got[1], "\n"))
			}
			if len(got[0]) < 5 {
				t.Errorf("%d events", len(got[0]))
			}
		})
	}
}

// TestLaneContext: a system-role message inside Anthropic's messages
// (Claude Code puts one there) and a later system message of Chat
// Completions are context/message events in place, envelope raw, source
// their role; the step rebuilds with them where the body had them.
func TestLaneContext(t *testing.T) {
	for _, tt := range []struct{ api, body string }{
		{transcript.APIAnthropic, `{"model":"claude-x","messages":[{"role":"user","content":"list the files"},{"role":"system","content":[{"type":"text","text":"note","cache_control":{"type":"ephemeral"}}]},{"role":"user","content":"count them"}]}`},
		{transcript.APIChat, `{"model":"gpt-x","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"list the files"},{"role":"system","content":"note"},{"role":"user","content":"count them"}]}`},
	} {
		c := clients[0]
		if tt.api == transcript.APIChat {
			c = clients[1]
		}
		s := newSession(t, c)
		evs, _, err := s.lane.MapRequest([]byte(tt.body), s.next, s.next, 0)
		if err != nil {
			t.Fatal(err)
		}
		s.append(evs)
		var ctx []string
		start := int64(-1)
		for _, ev := range evs {
			if ev.Type == codec.TypeContextMessage {
				j, _, _ := codec.ToJSON(nil, ev.Raw)
				ctx = append(ctx, string(j))
			}
			if ev.Type == codec.TypeStepStart {
				start = ev.Seq
			}
		}
		if len(ctx) != 1 || !strings.Contains(ctx[0], `"content":[{"type":"text","text":"note"}],"source":{"kind":"system"},"envelope":"raw"`) {
			t.Errorf("%s: context messages %q", tt.api, ctx)
		}
		s.check(start, []turnItem{prompt, user("note"), second})
	}
}

// TestLaneErrorFinish: a stream that ends with a finish of kind error (a
// failed Responses answer) ends the step and turn with that error, and
// writes no assistant message.
func TestLaneErrorFinish(t *testing.T) {
	c := clients[2]
	s := newSession(t, c)
	s.request(c.body([]turnItem{prompt}, system, ""))
	evs := s.answerBody(200, true, sse(`{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"boom"},"output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"partial"}]}]}}`))
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type)
	}
	if strings.Join(types, " ") != "step/end turn/end" || !bytes.Contains(evs[1].Raw, []byte("SERVER_ERROR")) {
		t.Errorf("a failed answer: %v", types)
	}
}
