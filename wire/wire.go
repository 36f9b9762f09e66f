package wire

import (
	"sort"
	"strings"
	"sync"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/header"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// The renderers' names (docs/wire.md#renderers). A renderer's mapping is frozen: a
// change of any byte is a new name.
const (
	OpenAIChat        = "openai-chat"
	AnthropicMessages = "anthropic-messages"
)

// Errors, tested with errors.Is: ErrInvalid (codec.ErrInvalid) marks a
// request a renderer cannot render; ErrUnknown marks a renderer name that
// does not exist.
var (
	ErrInvalid = codec.ErrInvalid
	ErrUnknown = errors.New("wire: no such renderer")
)

// Field is one HTTP header field.
type Field struct{ Name, Value string }

// HTTPRequest is a rendered request: what a provider sends, the key
// excepted. The key goes into the field named KeyHeader, as KeyPrefix
// followed by the key; Header never holds it.
type HTTPRequest struct {
	Method string
	// Path is appended to the provider's base URL, e.g. "/chat/completions".
	Path string
	// Header lists the fields in the order a provider sets them.
	Header []Field
	// KeyHeader and KeyPrefix say where the API key goes.
	KeyHeader, KeyPrefix string
	// Body is the exact body (docs/format.md#json-text JSON text).
	Body []byte
}

// Renderer turns a canonical request (docs/rules.md#the-request) and the header in force
// into the HTTP request of one provider API, and translates that API's
// streamed answer into chunks. Renderers are stateless and safe for
// concurrent use.
type Renderer struct {
	name      string
	path      string
	header    []Field
	keyHeader string
	keyPrefix string
	// message writes the wire messages of one request message into the
	// messages buffer, each preceded by a comma; body then writes the
	// body around that buffer.
	message func(w *writer, m *message) error
	body    func(w *writer, req *request, h *header.Snapshot) error
	errors  func(status int, e apiError) string
	stream  func() translator
}

// Name is the renderer's name, the value of the config key wire.
func (r *Renderer) Name() string { return r.name }

var renderers = map[string]*Renderer{
	OpenAIChat:        openAIChat,
	AnthropicMessages: anthropicMessages,
}

// Lookup returns the renderer called name, or an error marked ErrUnknown.
func Lookup(name string) (*Renderer, error) {
	if r, ok := renderers[name]; ok {
		return r, nil
	}
	return nil, errclass.Mark(errors.Newf("wire: no renderer named %q (known: %s)", errors.Safe(name), errors.Safe(strings.Join(Names(), ", "))), ErrUnknown)
}

// Names lists the renderers' names, sorted.
func Names() []string {
	out := make([]string, 0, len(renderers))
	for n := range renderers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Render renders request (a request's canonical JSON, docs/rules.md#the-request) under h,
// the header in force at its step, into a new HTTPRequest.
func (r *Renderer) Render(request []byte, h *header.Snapshot) (HTTPRequest, error) {
	body, err := r.AppendBody(nil, request, h)
	if err != nil {
		return HTTPRequest{}, err
	}
	return r.HTTP(body), nil
}

// HTTP returns the HTTP request that carries body (one AppendBody wrote).
func (r *Renderer) HTTP(body []byte) HTTPRequest {
	return HTTPRequest{
		Method: "POST", Path: r.path,
		Header:    append([]Field(nil), r.header...),
		KeyHeader: r.keyHeader, KeyPrefix: r.keyPrefix,
		Body: body,
	}
}

// AppendBody appends the body of request under h to dst: Render's body,
// for callers that reuse one buffer across requests.
func (r *Renderer) AppendBody(dst, request []byte, h *header.Snapshot) ([]byte, error) {
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	mp, err := codec.FromJSON(s.mp[:0], request, codec.Limits{MaxDepth: 1000})
	if err != nil {
		return dst, errors.Wrapf(err, "wire: %s: request", errors.Safe(r.name))
	}
	s.mp = mp
	// One pass over the request: the messages are rendered into a
	// buffer of their own as they are read (a canonical request has them
	// before system, which both APIs place first), the other keys kept.
	w := &writer{b: s.msgs[:0], text: s.text[:0], msg: s.msg}
	req, err := parseRequest(mp, &s.req, func(rd *codec.Reader) error {
		return eachMessage(rd, &w.msg, func(m *message) error { return r.message(w, m) })
	})
	if err == nil {
		w.msgs, w.b = w.b, dst
		err = r.body(w, req, h)
	}
	s.text, s.msg, s.msgs = w.text, w.msg, w.msgs
	if err != nil {
		return dst, errors.Wrapf(err, "wire: %s", errors.Safe(r.name))
	}
	return w.b, nil
}

// scratch is the per-call working memory of AppendBody, pooled so that
// rendering many requests allocates only their bodies.
type scratch struct {
	mp   []byte
	text []byte
	req  request
	msg  message
	msgs []byte
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}
