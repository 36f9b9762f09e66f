package ui

import (
	"context"
	"embed"
	"html/template"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/rebuild"
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

// Renderer renders a step's request as the body a provider received (SPEC
// §12): the step page shows one body per renderer.
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
}

// Server serves the audit UI and its JSON API over a store. It only
// reads. Safe for concurrent use.
type Server struct {
	st    eventlog.Store
	opts  Options
	log   *slog.Logger
	tmpl  *template.Template
	mux   *http.ServeMux
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
	if s.opts.CachePage <= 0 {
		s.opts.CachePage = 100
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
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
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
	page := func(pattern string, h handler) { m.Handle(pattern, s.wrap(h, false)) }
	api := func(pattern string, h handler) { m.Handle(pattern, s.wrap(h, true)) }
	page("GET /{$}", s.sessionsPage)
	page("GET /s/{id}", s.sessionPage)
	page("GET /s/{id}/verify", s.verifyPage)
	page("GET /s/{id}/step/{step}", s.stepPage)
	page("GET /s/{id}/step/{step}/request.json", s.rawRequest)
	page("GET /s/{id}/cache", s.cachePage)
	page("GET /s/{id}/diff", s.diffPage)
	api("GET /api/{$}", s.apiIndex)
	api("GET /api/sessions", s.apiSessions)
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
	case errors.Is(err, context.Canceled):
		return 499
	}
	return http.StatusInternalServerError
}

func badRequestf(format string, args ...interface{}) error {
	return errors.Mark(errors.NewWithDepthf(1, format, args...), ErrBadRequest)
}

// head returns the head of the session named in the request.
func (s *Server) head(r *http.Request) (eventlog.Head, error) {
	id := r.PathValue("id")
	h, err := s.st.Head(r.Context(), id)
	if errors.Is(err, eventlog.ErrNotFound) {
		return h, errors.Mark(errors.Newf("no session %s in this store", errors.Safe(id)), eventlog.ErrNotFound)
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

// intParam reads a non-negative integer query parameter, def when absent.
func intParam(r *http.Request, name string, def int64) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, badRequestf("%s is a non-negative integer", errors.Safe(name))
	}
	return n, nil
}

// CheckAddr returns an error marked ErrRemote unless addr (host:port)
// binds a loopback interface only, or allowRemote is set. An empty host
// (every interface) is not loopback; localhost is.
func CheckAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.Mark(errors.Wrapf(err, "address %q", errors.Safe(addr)), ErrBadRequest)
	}
	if allowRemote || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return errors.Mark(errors.Newf("address %q is not loopback: the UI serves the whole store to whoever can reach it", errors.Safe(addr)), ErrRemote)
}
