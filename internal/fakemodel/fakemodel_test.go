package fakemodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sessionlog/sessionlog/wire"
)

const (
	text = "Here is a longer answer — with ünïcode, to be split into pieces."
	args = `{"command":"echo hello","description":"say hello — twice"}`
)

var withCall = Reply{Text: text, Calls: []Call{{Name: "Bash", Arguments: args}}}

// post sends body to path on a fresh server scripted with script, and
// returns the answer's bytes and the server.
func post(t *testing.T, path, body string, script ...Reply) ([]byte, *http.Response, *Server) {
	t.Helper()
	s := New("final words", script...)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b, resp, s
}

// TestStreamsTranslate feeds the fake's Anthropic and Chat Completions
// streams to this engine's own stream translators (docs/wire.md): they must
// end properly and give back the reply's text, the call's name and
// arguments, the finish reason and usage.
func TestStreamsTranslate(t *testing.T) {
	for _, tc := range []struct {
		renderer, path, body string
		reply                Reply
		reason               string
	}{
		{"anthropic-messages", "/v1/messages?beta=true", `{"model":"m","stream":true,"tools":[{"name":"Bash"}]}`, withCall, "tool"},
		{"anthropic-messages", "/v1/messages", `{"model":"m","stream":true}`, Reply{Text: text}, "stop"},
		{"openai-chat", "/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"tools":[{"type":"function"}]}`, withCall, "tool"},
		{"openai-chat", "/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true}}`, Reply{Text: text}, "stop"},
	} {
		t.Run(tc.renderer+"/"+tc.reason, func(t *testing.T) {
			b, resp, _ := post(t, tc.path, tc.body, tc.reply)
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("content type %q", ct)
			}
			r, err := wire.Lookup(tc.renderer)
			if err != nil {
				t.Fatal(err)
			}
			tr := r.NewTranslator()
			var chunks []wire.Chunk
			for p := b; len(p) > 0; p = p[min(len(p), 7):] { // fed in small splits
				if chunks, err = tr.Feed(chunks, p[:min(len(p), 7)]); err != nil {
					t.Fatalf("translate: %v\n%s", err, b)
				}
			}
			if chunks, err = tr.End(chunks); err != nil || !tr.Done() {
				t.Fatalf("end: %v, done %v", err, tr.Done())
			}
			var got, gotArgs, name, reason string
			var usage wire.Usage
			for _, c := range chunks {
				switch c.Type {
				case "text-delta":
					got += c.Text
				case "tool-call-delta":
					gotArgs += c.ArgumentsDelta
					if c.Name != "" {
						name = c.Name
					}
				case "usage":
					usage = c.Usage
				case "finish":
					reason = string(c.Reason)
				}
			}
			if got != tc.reply.Text {
				t.Errorf("text %q, want %q", got, tc.reply.Text)
			}
			if len(tc.reply.Calls) > 0 && (name != "Bash" || gotArgs != args) {
				t.Errorf("call %q %q, want Bash %q", name, gotArgs, args)
			}
			if !strings.Contains(reason, `"`+tc.reason) {
				t.Errorf("finish reason %s, want kind %s…", reason, tc.reason)
			}
			if usage.InputTokens <= 0 || usage.OutputTokens <= 0 {
				t.Errorf("usage %+v", usage)
			}
		})
	}
}

// events parses an SSE body into its events' names and data.
func events(t *testing.T, b []byte) (names []string, data []string) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	name := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			names = append(names, name)
			data = append(data, strings.TrimPrefix(line, "data: "))
			name = ""
		case line != "":
			t.Fatalf("not an SSE line: %q", line)
		}
	}
	return names, data
}

// TestResponsesStream checks the Responses events as Codex reads them:
// each named by its type, sequence numbers from 0, created first and
// completed last with usage, the deltas adding up to the done items, and
// the done items equal to the completed response's output.
func TestResponsesStream(t *testing.T) {
	b, _, _ := post(t, "/v1/responses", `{"model":"m","stream":true,"input":[{"type":"additional_tools","tools":[]}]}`, withCall)
	names, data := events(t, b)
	var text, callArgs string
	var done []json.RawMessage
	var completed struct {
		Response struct {
			ID     string            `json:"id"`
			Status string            `json:"status"`
			Output []json.RawMessage `json:"output"`
			Usage  struct {
				InputTokens  int `json:"input_tokens"`
				OutputTokens int `json:"output_tokens"`
				TotalTokens  int `json:"total_tokens"`
			} `json:"usage"`
		} `json:"response"`
	}
	for i, d := range data {
		var e struct {
			Type     string          `json:"type"`
			Seq      int             `json:"sequence_number"`
			Delta    string          `json:"delta"`
			Item     json.RawMessage `json:"item"`
			Response json.RawMessage `json:"response"`
		}
		if err := json.Unmarshal([]byte(d), &e); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if e.Type != names[i] || e.Seq != i {
			t.Errorf("event %d: type %q named %q, sequence %d", i, e.Type, names[i], e.Seq)
		}
		switch e.Type {
		case "response.output_text.delta":
			text += e.Delta
		case "response.function_call_arguments.delta":
			callArgs += e.Delta
		case "response.output_item.done":
			done = append(done, e.Item)
		case "response.completed":
			if err := json.Unmarshal([]byte(d), &completed); err != nil {
				t.Fatal(err)
			}
		}
	}
	if names[0] != "response.created" || names[len(names)-1] != "response.completed" {
		t.Errorf("events from %s to %s", names[0], names[len(names)-1])
	}
	if text != withCall.Text || callArgs != args {
		t.Errorf("deltas: text %q, arguments %q", text, callArgs)
	}
	r := completed.Response
	if r.Status != "completed" || r.ID == "" || r.Usage.InputTokens <= 0 || r.Usage.TotalTokens != r.Usage.InputTokens+r.Usage.OutputTokens {
		t.Errorf("completed response %+v", r)
	}
	if len(done) != 2 || len(r.Output) != 2 || !bytes.Equal(done[0], r.Output[0]) || !bytes.Equal(done[1], r.Output[1]) {
		t.Fatalf("done items %s, output %s", done, r.Output)
	}
	var call struct{ Type, Name, Arguments, CallID string }
	if err := json.Unmarshal(done[1], &call); err != nil || call.Type != "function_call" || call.Name != "Bash" || call.Arguments != args {
		t.Errorf("call item %s (%v)", done[1], err)
	}
}

// TestGeminiStream checks that the streamed parts add up to the reply.
func TestGeminiStream(t *testing.T) {
	b, _, _ := post(t, "/v1beta/models/g:streamGenerateContent?alt=sse", `{"contents":[],"tools":[{"functionDeclarations":[]}]}`, withCall)
	_, data := events(t, b)
	var text, finish string
	var calls []string
	for _, d := range data {
		var c struct {
			Candidates []struct {
				Content struct {
					Parts []struct {
						Text         string `json:"text"`
						FunctionCall *struct {
							Name string          `json:"name"`
							Args json.RawMessage `json:"args"`
						} `json:"functionCall"`
					} `json:"parts"`
				} `json:"content"`
				FinishReason string `json:"finishReason"`
			} `json:"candidates"`
		}
		if err := json.Unmarshal([]byte(d), &c); err != nil || len(c.Candidates) != 1 {
			t.Fatalf("chunk %s: %v", d, err)
		}
		for _, p := range c.Candidates[0].Content.Parts {
			text += p.Text
			if p.FunctionCall != nil {
				calls = append(calls, p.FunctionCall.Name+" "+string(p.FunctionCall.Args))
			}
		}
		finish += c.Candidates[0].FinishReason
	}
	if text != withCall.Text || len(calls) != 1 || calls[0] != "Bash "+args || finish != "STOP" {
		t.Errorf("text %q, calls %q, finish %q", text, calls, finish)
	}
}

// TestNotStreamed checks the whole-answer forms.
func TestNotStreamed(t *testing.T) {
	for _, tc := range []struct{ path, body, want string }{
		{"/v1/messages", `{"tools":[{}]}`, `"type":"tool_use","id":"toolu_fake0003","name":"Bash","input":` + args},
		{"/v1/chat/completions", `{"tools":[{}]}`, `"function":{"name":"Bash","arguments":` + mustJSON(args) + `}`},
		{"/v1/responses", `{"tools":[{}]}`, `"arguments":` + mustJSON(args) + `,"call_id":"call_fake0003","name":"Bash"`},
		{"/v1beta/models/g:generateContent", `{"tools":[{}]}`, `"functionCall":{"name":"Bash","args":` + args + `}`},
	} {
		b, resp, _ := post(t, tc.path, tc.body, withCall)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || !json.Valid(b) {
			t.Errorf("%s: %d %q %s", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
		if !bytes.Contains(b, []byte(tc.want)) || !bytes.Contains(b, []byte(mustJSON(text))) {
			t.Errorf("%s: answer lacks the reply:\n%s", tc.path, b)
		}
	}
}

// TestScriptAndRecording checks that replies are taken in order, then
// the final text; that a request without tools leaves a reply with calls
// for a later one; and that every request is recorded exactly.
func TestScriptAndRecording(t *testing.T) {
	s := New("final words", withCall, Reply{Text: "second"})
	srv := httptest.NewServer(s)
	defer srv.Close()
	send := func(method, path, body string) []byte {
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Test", "yes")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	bodies := []string{
		`{"model":"m","messages":[]}`,                         // no tools: final text, script stays
		`{ "model":"m", "tools":[{"name":"Bash"}] }`,          // the call
		`{"model":"m","tools":[]}`,                            // an empty list is no tools, but "second" has none
		`{"model":"m","tools":[{"name":"Bash"}]}`,             // the script is done
		`{"model":"m","input":[{"type":"additional_tools"}]}`, // Codex's tools; final
	}
	paths := []string{"/v1/messages", "/v1/messages", "/v1/chat/completions", "/v1/responses", "/v1/responses"}
	wantReply := []int{-1, 0, 1, -1, -1}
	for i, b := range bodies {
		send("POST", paths[i], b)
	}
	if got := send("GET", "/v1/models", ""); !bytes.Contains(got, []byte(`"object":"list"`)) {
		t.Errorf("models: %s", got)
	}
	if got := send("POST", "/v1/messages/count_tokens", `{"messages":[]}`); !bytes.Contains(got, []byte(`"input_tokens":`)) {
		t.Errorf("count_tokens: %s", got)
	}
	if got := send("POST", "/elsewhere", "x"); !bytes.Contains(got, []byte(`"type":"error"`)) {
		t.Errorf("unknown path: %s", got)
	}
	if got := send("POST", "/v1/messages", "not json"); !bytes.Contains(got, []byte(`"type":"error"`)) {
		t.Errorf("bad body: %s", got)
	}
	reqs := s.Requests()
	if len(reqs) != len(bodies)+4 {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	for i, b := range bodies {
		r := reqs[i]
		if string(r.Body) != b || r.Path != paths[i] || r.Method != "POST" || r.Header.Get("X-Test") != "yes" || r.Reply != wantReply[i] {
			t.Errorf("request %d: %s %s %q reply %d, want %q reply %d", i, r.Method, r.Path, r.Body, r.Reply, b, wantReply[i])
		}
	}
	for i, want := range []string{Other, Other, Other, Anthropic} {
		if r := reqs[len(bodies)+i]; r.API != want || r.Reply != -2 {
			t.Errorf("request %s %s: api %q reply %d", r.Method, r.Path, r.API, r.Reply)
		}
	}
	reqs[0].Body[0] = 'X' // a copy: the server's record is untouched
	if s.Requests()[0].Body[0] != '{' {
		t.Errorf("Requests shares its bodies")
	}
}

// TestPieces checks the splitting of streamed text: whole characters,
// nothing lost.
func TestPieces(t *testing.T) {
	for _, s := range []string{"", "short", text, strings.Repeat("ü", 40), strings.Repeat("x", 50), "a  b   c" + strings.Repeat("€", 9)} {
		ps := pieces(s)
		if strings.Join(ps, "") != s {
			t.Errorf("pieces of %q: %q", s, ps)
		}
		for _, p := range ps {
			if p == "" || !utf8.ValidString(p) || len(p) > 16 {
				t.Errorf("pieces of %q: piece %q", s, p)
			}
		}
	}
}

// TestNewRefusesBadArguments checks that a script whose call arguments
// are not JSON is refused at once, not mid-answer.
func TestNewRefusesBadArguments(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Errorf("New took a call whose arguments are not JSON")
		}
	}()
	New("", Reply{Calls: []Call{{Name: "Bash", Arguments: "{not json"}}})
}
