package ui

import (
	"context"
	"embed"
	"html/template"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/loopback"
	"github.com/sessionlog/sessionlog/rebuild"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// ErrBadRequest marks a request the UI cannot answer as asked: a
// malformed step name, seq or page number (HTTP 400).
var ErrBadRequest = errors.New("ui: bad request")

// ErrRemote marks an address CheckAddr refuses: not loopback, and remote
// access not allowed.
var ErrRemote = errors.New("ui: not a loopback address")

// Renderer renders a step's request as the body a provider received
// (docs/wire.md): the step page shows one body per renderer.
type Renderer struct {
	// Name is the renderer's name (openai-chat, anthropic-messages).
	Name string
	// Body returns the exact body bytes of step s.
	Body func(s rebuild.Step) ([]byte, error)
}

// Options configures a Server. The zero value (or nil) means the defaults.
type Options struct {
	// Logger receives one line per request: method, route pattern, status,
	// bytes and duration, never a path, a query or anything from the log.
	// nil discards.
	Logger *slog.Logger
	// Renderers are the wire renderers whose bodies the step page shows.
	Renderers []Renderer
	// EventsPage is the number of events per timeline page (default 200).
	EventsPage int
	// CachePage is the number of steps per cache chart page (default 100).
	CachePage int
	// Hosts are the names a request's Host header may carry, with any
	// port or none (case does not matter; an IPv6 address in brackets).
	// Any other Host is answered 421 Misdirected Request, so that a web
	// page whose name was rebound to this machine (DNS rebinding) reads
	// nothing. Empty means the loopback names (internal/loopback.Names:
	// localhost, 127.0.0.1, [::1]).
	Hosts []string
	// MaxHeavy is the number of requests that fold or scan the log served
	// at once (default 1: a step of a session with a 50 MB event holds a
	// few times that while it is built); one past it waits up to
	// HeavyWait for a turn, then is answered 429 with Retry-After.
	MaxHeavy int
	// HeavyWait is how long a request waits for a turn (default 10s).
	HeavyWait time.Duration
}

// The limits of the UI and its API (README, "Audit in a browser").
const (
	// MaxEvents is the most events one timeline page or API events page
	// holds (the limit parameter).
	MaxEvents = 1000
	// MaxSteps is the most steps one API steps answer lists.
	MaxSteps = 10000
	// MaxCacheSteps is the most steps one cache page covers: each costs
	// its request's rebuild.
	MaxCacheSteps = 500
	// BigItem is the size over which a page shows an event, a message, a
	// system prompt, a tool or a wire body by its first HeadBytes only,
	// with a link to its raw bytes.
	BigItem = 64 << 10
	// HeadBytes is how much of a big item a page shows.
	HeadBytes = 1 << 10
	// MaxRendered is the largest request whose wire bodies the step page
	// and its API render: rendering one costs a few times the request, so
	// past it they are only linked, and rendered when downloaded.
	MaxRendered = 8 << 20
	// WriteTimeout bounds a request from its headers to the last byte of
	// its answer, a raw download included; heavy work stops at it too.
	WriteTimeout = 2 * time.Minute
	// MemoryLimit is the soft memory limit (runtime/debug.SetMemoryLimit)
	// a process serving the UI is meant to run under, as logtool serve
	// does: the garbage of a big step's folds is collected before the
	// heap doubles. A library sets nothing global: the command sets it.
	MemoryLimit = 384 << 20
)

// Server serves the audit UI and its JSON API over a store. It only
// reads. Safe for concurrent use.
type Server struct {
	st    eventlog.Store
	opts  Options
	log   *slog.Logger
	tmpl  *template.Template
	mux   *http.ServeMux
	hosts map[string]bool // normalized Options.Hosts
	heavy chan struct{}   // a token per heavy request running
	mu    sync.Mutex
	cache map[string]*overview // by session id
}

// overview is a cached audit.Overview, valid while the head is the same.
type overview struct {
	next  int64
	chain [32]byte
	used  time.Time
	o     *audit.Overview
}

// overviewCache bounds how many sessions' overviews are kept.
const overviewCache = 16

// New returns a Server over st.
func New(st eventlog.Store, opts *Options) (*Server, error) {
	s := &Server{st: st, cache: map[string]*overview{}}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.EventsPage <= 0 {
		s.opts.EventsPage = 200
	}
	s.opts.EventsPage = min(s.opts.EventsPage, MaxEvents)
	if s.opts.CachePage <= 0 {
		s.opts.CachePage = 100
	}
	s.opts.CachePage = min(s.opts.CachePage, MaxCacheSteps)
	if s.opts.MaxHeavy <= 0 {
		s.opts.MaxHeavy = 1
	}
	if s.opts.HeavyWait <= 0 {
		s.opts.HeavyWait = 10 * time.Second
	}
	s.heavy = make(chan struct{}, s.opts.MaxHeavy)
	if len(s.opts.Hosts) == 0 {
		s.opts.Hosts = loopback.Names()
	}
	s.hosts = map[string]bool{}
	for _, h := range s.opts.Hosts {
		n, ok := loopback.Name(h)
		if !ok {
			return nil, errclass.Mark(errors.Newf("ui: host %q is not a host name or address", errors.Safe(h)), ErrBadRequest)
		}
		s.hosts[n] = true
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	t, err := template.New("ui").Funcs(funcs).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, errors.Wrap(err, "ui: templates")
	}
	s.tmpl = t
	s.routes()
	return s, nil
}

// ServeHTTP serves a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	h := w.Header()
	// No script runs on these pages: the policy forbids any, so content
	// from the log cannot execute even if it escaped the templates.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	rw := &recorder{ResponseWriter: w, status: http.StatusOK}
	if n, ok := loopback.Name(r.Host); !ok || !s.hosts[n] {
		// The Host is not one of this server's names: a page of another
		// site whose name now resolves here (DNS rebinding) must read
		// nothing. The answer does not repeat the Host.
		http.Error(rw, "misdirected request: this server does not answer to that Host name", http.StatusMisdirectedRequest)
	} else if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(rw, "the audit UI only reads", http.StatusMethodNotAllowed)
	} else {
		s.mux.ServeHTTP(rw, r)
	}
	_, pattern := s.mux.Handler(r)
	if pattern == "" {
		pattern = "(none)"
	}
	s.log.Info("request", "method", r.Method, "route", pattern, "status", rw.status,
		"bytes", rw.bytes, "duration", time.Since(start).Round(time.Microsecond))
}

// recorder notes a response's status and size for the log line.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Flush passes a flush on, so streamed pages reach the browser as they go.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// handler is a route that may fail before it has written anything.
type handler func(w http.ResponseWriter, r *http.Request) error

func (s *Server) routes() {
	m := http.NewServeMux()
	// Every route that names a session reads its log: it is heavy, and
	// goes through the gate.
	page := func(pattern string, h handler) { m.Handle(pattern, s.wrap(s.gate(h), false)) }
	api := func(pattern string, h handler) { m.Handle(pattern, s.wrap(s.gate(h), true)) }
	m.Handle("GET /{$}", s.wrap(s.sessionsPage, false))
	page("GET /s/{id}", s.sessionPage)
	page("GET /s/{id}/verify", s.verifyPage)
	page("GET /s/{id}/event/{seq}", s.rawEvent)
	page("GET /s/{id}/step/{step}", s.stepPage)
	page("GET /s/{id}/step/{step}/request.json", s.rawRequest)
	page("GET /s/{id}/step/{step}/message/{i}", s.rawMessage)
	page("GET /s/{id}/step/{step}/wire/{name}", s.rawBody)
	page("GET /s/{id}/cache", s.cachePage)
	page("GET /s/{id}/diff", s.diffPage)
	m.Handle("GET /api/{$}", s.wrap(s.apiIndex, true))
	m.Handle("GET /api/sessions", s.wrap(s.apiSessions, true))
	api("GET /api/sessions/{id}", s.apiSession)
	api("GET /api/sessions/{id}/events", s.apiEvents)
	api("GET /api/sessions/{id}/steps", s.apiSteps)
	api("GET /api/sessions/{id}/steps/{step}", s.apiStep)
	api("GET /api/sessions/{id}/cache", s.apiCache)
	api("GET /api/sessions/{id}/diff", s.apiDiff)
	api("GET /api/sessions/{id}/verify", s.apiVerify)
	m.Handle("GET /static/", http.FileServerFS(staticFS))
	s.mux = m
}

// wrap turns a handler's error into a status and a page (or a JSON
// error object for the API). The message names sessions, steps and
// seqs, never content; it is escaped like everything else.
func (s *Server) wrap(h handler, api bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		code := status(err)
		if api {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			b := append([]byte(`{"error":`), jsonString(err.Error())...)
			w.Write(append(b, "}\n"...))
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(code)
		s.tmpl.ExecuteTemplate(w, "error.html", map[string]any{"Title": http.StatusText(code), "Status": code, "Message": err.Error()})
	})
}

// status maps an error's class to an HTTP status.
func status(err error) int {
	switch {
	case errors.Is(err, eventlog.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrBadRequest), errors.Is(err, audit.ErrNullRequest):
		return http.StatusBadRequest
	case errors.Is(err, ErrBusy):
		return http.StatusTooManyRequests
	case errors.Is(err, context.Canceled):
		return 499
	}
	return http.StatusInternalServerError
}

func badRequestf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrBadRequest)
}

// head returns the head of the session named in the request.
func (s *Server) head(r *http.Request) (eventlog.Head, error) {
	id := sessionID(r.PathValue("id"))
	h, err := s.st.Head(r.Context(), id)
	if errors.Is(err, eventlog.ErrNotFound) {
		return h, errclass.Mark(errors.Newf("no session %s in this store", errors.Safe(id)), eventlog.ErrNotFound)
	}
	return h, err // eventlog's errors name the session
}

// overview returns the session's overview, from the cache while the
// session's head is unchanged.
func (s *Server) overview(ctx context.Context, h eventlog.Head) (*audit.Overview, error) {
	id := h.Header.ID
	s.mu.Lock()
	c := s.cache[id]
	if c != nil && c.next == h.Next && c.chain == h.Chain {
		c.used = time.Now()
		s.mu.Unlock()
		return c.o, nil
	}
	s.mu.Unlock()
	o, err := audit.Index(ctx, s.st, h)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cache) >= overviewCache {
		var oldest string
		for k, v := range s.cache {
			if oldest == "" || v.used.Before(s.cache[oldest].used) {
				oldest = k
			}
		}
		delete(s.cache, oldest)
	}
	s.cache[id] = &overview{next: h.Next, chain: h.Chain, used: time.Now(), o: o}
	return o, nil
}

// CheckAddr returns an error marked ErrRemote unless addr (host:port)
// binds a loopback interface only, or allowRemote is set. An empty host
// (every interface) is not loopback; localhost is.
func CheckAddr(addr string, allowRemote bool) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return errclass.Mark(errors.Wrapf(err, "address %q", errors.Safe(addr)), ErrBadRequest)
	}
	if allowRemote || loopback.Addr(addr) {
		return nil
	}
	return errclass.Mark(errors.Newf("address %q is not loopback: the UI serves the whole store to whoever can reach it", errors.Safe(addr)), ErrRemote)
}
