package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// The APIs a request is recognised as, by its path (Request.API).
const (
	Anthropic = "anthropic" // POST …/v1/messages
	Chat      = "chat"      // POST …/chat/completions
	Responses = "responses" // POST …/responses
	Gemini    = "gemini"    // POST …:generateContent, …:streamGenerateContent
	Other     = ""          // anything else, answered by path or 404
)

// MaxBody is the largest request body the server reads; a larger one is
// answered 413 (and recorded cut at MaxBody).
const MaxBody = 64 << 20

// A Reply is one scripted answer: a text, tool calls, or both (the text
// first).
type Reply struct {
	Text  string
	Calls []Call
}

// A Call is one tool call: the tool's name and its arguments as a JSON
// object's text.
type Call struct {
	Name      string
	Arguments string
}

// A Request is one request as the server received it.
type Request struct {
	Method string
	Path   string // the URL path, unescaped
	Query  string // the raw query, without '?'
	Header http.Header
	Body   []byte // exactly as received
	API    string // Anthropic, Chat, Responses, Gemini or Other
	Stream bool   // the request asked for a streamed answer
	// Reply is the index in the script of the reply it was given, or -1
	// for the final text, or -2 when it was not a model request.
	Reply int
}

// Server is the scripted model. Its zero value is not usable: call New.
type Server struct {
	final  string
	script []Reply

	mu       sync.Mutex
	next     int
	ids      int
	requests []Request
}

// New returns a server that answers model requests with the replies of
// script in order, then with final. Every call's Arguments must be valid
// JSON: New panics otherwise (a script is the test's own code). A Server
// is safe for concurrent use.
func New(final string, script ...Reply) *Server {
	for _, r := range script {
		for _, c := range r.Calls {
			if !json.Valid([]byte(c.Arguments)) {
				panic("fakemodel: the arguments of a scripted call to " + strconv.Quote(c.Name) + " are not JSON")
			}
		}
	}
	return &Server{final: final, script: append([]Reply(nil), script...)}
}

// Requests returns a copy of every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		r.Header = r.Header.Clone()
		r.Body = bytes.Clone(r.Body)
		out[i] = r
	}
	return out
}

// ServeHTTP records the request and answers it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	req := Request{
		Method: r.Method,
		Path:   r.URL.Path,
		Query:  r.URL.RawQuery,
		Header: r.Header.Clone(),
		Body:   body,
		API:    apiOf(r.Method, r.URL.Path),
		Reply:  -2,
	}
	if err != nil || len(body) > MaxBody {
		req.Body = body[:min(len(body), MaxBody)]
		s.record(req)
		writeError(w, http.StatusRequestEntityTooLarge, "request body unreadable or too large")
		return
	}
	var fields struct {
		Stream bool              `json:"stream"`
		Model  string            `json:"model"`
		Tools  json.RawMessage   `json:"tools"`
		Input  []json.RawMessage `json:"input"`
	}
	if req.API != Other {
		if json.Unmarshal(body, &fields) != nil {
			s.record(req)
			writeError(w, http.StatusBadRequest, "request body is not a JSON object")
			return
		}
	}
	req.Stream = fields.Stream || strings.HasSuffix(req.Path, ":streamGenerateContent")
	if req.API == Other {
		s.record(req)
		s.serveOther(w, req)
		return
	}
	tools := hasTools(fields.Tools, fields.Input)
	reply, index := s.take(tools)
	req.Reply = index
	s.record(req)
	a := answer{
		Reply: reply,
		model: fields.Model,
		ids:   s.newIDs(len(reply.Calls) + 2),
		in:    max(1, len(body)/4),
		out:   max(1, (len(reply.Text)+callsLen(reply.Calls))/4),
	}
	switch req.API {
	case Anthropic:
		anthropicAnswer(w, a, req.Stream)
	case Chat:
		chatAnswer(w, a, req.Stream, includeUsage(body))
	case Responses:
		responsesAnswer(w, a, req.Stream)
	case Gemini:
		geminiAnswer(w, a, req.Stream)
	}
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.mu.Unlock()
}

// take returns the reply for the next model request, and its index in
// the script (-1 for the final text). A request without tools never takes
// a reply with tool calls.
func (s *Server) take(tools bool) (Reply, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next >= len(s.script) || (!tools && len(s.script[s.next].Calls) > 0) {
		return Reply{Text: s.final}, -1
	}
	s.next++
	return s.script[s.next-1], s.next - 1
}

// newIDs returns n fresh serial numbers for the ids of one answer.
func (s *Server) newIDs(n int) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int, n)
	for i := range out {
		s.ids++
		out[i] = s.ids
	}
	return out
}

func apiOf(method, path string) string {
	if method != http.MethodPost {
		return Other
	}
	switch {
	case strings.HasSuffix(path, "/v1/messages"):
		return Anthropic
	case strings.HasSuffix(path, "/chat/completions"):
		return Chat
	case strings.HasSuffix(path, "/responses"):
		return Responses
	case strings.HasSuffix(path, ":generateContent"), strings.HasSuffix(path, ":streamGenerateContent"):
		return Gemini
	}
	return Other
}

// hasTools says whether a request offers tools: a non-empty top-level
// "tools" list, or an input item of type "additional_tools".
func hasTools(tools json.RawMessage, input []json.RawMessage) bool {
	var list []json.RawMessage
	if json.Unmarshal(tools, &list) == nil && len(list) > 0 {
		return true
	}
	for _, item := range input {
		var it struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(item, &it) == nil && it.Type == "additional_tools" {
			return true
		}
	}
	return false
}

func includeUsage(body []byte) bool {
	var f struct {
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	return json.Unmarshal(body, &f) == nil && f.StreamOptions.IncludeUsage
}

func callsLen(calls []Call) int {
	n := 0
	for _, c := range calls {
		n += len(c.Name) + len(c.Arguments)
	}
	return n
}

// serveOther answers the requests that are not model calls.
func (s *Server) serveOther(w http.ResponseWriter, r Request) {
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/v1/messages/count_tokens"):
		writeJSON(w, obj{"input_tokens", max(1, len(r.Body)/4)})
	case r.Method == http.MethodGet && strings.HasSuffix(r.Path, "/models"):
		writeJSON(w, modelList(r))
	case r.Method == http.MethodHead || (r.Method == http.MethodGet && (r.Path == "/" || r.Path == "")):
		w.WriteHeader(http.StatusOK)
	default:
		writeError(w, http.StatusNotFound, "no such endpoint in the fake model")
	}
}

// modelList is a list of one model in the shape of the API the request
// names: Anthropic's when it carries anthropic-version, OpenAI's
// otherwise.
func modelList(r Request) obj {
	if r.Header.Get("anthropic-version") != "" {
		m := obj{"type", "model", "id", "fake-model", "display_name", "Fake model", "created_at", "2025-01-01T00:00:00Z"}
		return obj{"data", []any{m}, "has_more", false, "first_id", "fake-model", "last_id", "fake-model"}
	}
	m := obj{"id", "fake-model", "object", "model", "created", 1735689600, "owned_by", "fakemodel"}
	return obj{"object", "list", "data", []any{m}}
}

// obj is a JSON object whose keys keep their order: key, value, key, …
type obj []any

// MarshalJSON writes the pairs in order.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i+1 < len(o); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(o[i])
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(o[i+1])
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("fakemodel: %v", err)) // only our own values reach here
	}
	return string(b)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, mustJSON(v))
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, mustJSON(obj{"type", "error", "error", obj{"type", "invalid_request_error", "message", msg}}))
}

// sse writes Server-Sent Events, each flushed as it is written.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return sse{w: w, f: f}
}

// event writes one event; an empty name writes a data line only.
func (s sse) event(name string, data any) {
	var b strings.Builder
	if name != "" {
		b.WriteString("event: " + name + "\n")
	}
	if d, ok := data.(string); ok {
		b.WriteString("data: " + d + "\n\n")
	} else {
		b.WriteString("data: " + mustJSON(data) + "\n\n")
	}
	_, _ = io.WriteString(s.w, b.String())
	if s.f != nil {
		s.f.Flush()
	}
}

// pieces splits s into a few fragments, as a model streams them: at
// spaces, whole UTF-8 characters, at most about 16 bytes each.
func pieces(s string) []string {
	var out []string
	for len(s) > 16 {
		cut := strings.LastIndexByte(s[:16], ' ')
		if cut <= 0 {
			cut = 16
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			if cut == 0 {
				_, cut = utf8.DecodeRuneInString(s)
			}
		} else {
			cut++ // the space goes with the piece before it
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// answer is a reply with what every API's answer needs around it.
type answer struct {
	Reply
	model   string
	ids     []int // fresh serial numbers: ids[0] the answer, ids[1] its message, ids[2+i] call i
	in, out int   // estimated tokens
}

func (a answer) modelName() string {
	if a.model == "" {
		return "fake-model"
	}
	return a.model
}
