package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/internal/loopback"
	"github.com/sessionlog/sessionlog/wire"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

// APIOpenAIResponses is the api of an OpenAI Responses request
// (docs/gateway.md#running-it); the other two recorded APIs are named as their wire renderers.
const APIOpenAIResponses = "openai-responses"

// Gateway is the recording gateway's HTTP handler (docs/gateway.md#running-it).
type Gateway struct {
	opts      Options
	transport http.RoundTripper
	reqAllow  allowlist
	respAllow allowlist
	byName    map[string]*Upstream
	runID     string
	now       func() time.Time
	log       *slog.Logger

	mu       sync.Mutex
	sessions map[string]*session
	// bases remembers the lane of base sessions whose writers were
	// dropped ("" for none), so that routing reads a header once.
	bases map[string]string

	// failed is the store's first failure: sticky until restart.
	failed atomic.Pointer[error]

	// stop, when cancelled, cuts every exchange in flight (cut
	// "shutdown"); inflight counts the handlers running.
	stop     context.Context
	stopNow  context.CancelFunc
	inflight sync.WaitGroup

	stats struct {
		recorded, unrecorded, refused, failedOpen, cut, unmapped, redacted atomic.Int64
	}
}

// Stats counts the gateway's requests so far.
type Stats struct {
	// Recorded requests were logged before they were forwarded.
	Recorded int64
	// Unrecorded requests were forwarded without a record: paths of no
	// recorded API (without RecordAll).
	Unrecorded int64
	// Refused requests were answered by the gateway itself: 503 (log
	// unavailable), 413 (body too large), 421 (Host), 502/504.
	Refused int64
	// FailedOpen requests were forwarded unrecorded because the store
	// failed and FailOpen is set.
	FailedOpen int64
	// Cut answers ended early (client, upstream, timeout, shutdown).
	Cut int64
	// Unmapped requests of a lane were recorded as bytes alone: the
	// mapping refused the body (not of the API's shape), or the store
	// refused the mapped events.
	Unmapped int64
	// Redacted counts the spans Options.Redactor replaced in what was
	// recorded.
	Redacted int64
	// Writers is the number of session writers held now: those of
	// exchanges in flight, and up to 128 idle ones (each holds its
	// session's chunk digests; a dropped one is read back when needed).
	Writers int
}

// New returns a gateway over opts.Store.
func New(opts Options) (*Gateway, error) {
	if opts.Store == nil {
		return nil, usagef("gateway: no store")
	}
	if len(opts.Upstreams) == 0 {
		return nil, usagef("gateway: no upstream")
	}
	g := &Gateway{opts: opts, byName: map[string]*Upstream{}, sessions: map[string]*session{}, bases: map[string]string{},
		reqAllow: allowlist(requestAllow), respAllow: allowlist(responseAllow), now: opts.Now, log: opts.Logger}
	for i := range opts.Upstreams {
		u := &g.opts.Upstreams[i]
		if u.URL == nil || !validName(u.Name) {
			return nil, usagef("gateway: upstream %d needs a name and a URL", errors.Safe(i))
		}
		if _, dup := g.byName[u.Name]; dup {
			return nil, usagef("gateway: two upstreams are named %q", errors.Safe(u.Name))
		}
		g.byName[u.Name] = u
	}
	for _, h := range opts.RecordHeaders {
		if err := CheckRecordHeader(h); err != nil {
			return nil, err
		}
		name := strings.ToLower(strings.TrimSpace(h))
		g.reqAllow = append(g.reqAllow, name)
		g.respAllow = append(g.respAllow, name)
	}
	if g.opts.MaxBody <= 0 {
		g.opts.MaxBody = DefaultMaxBody
	}
	if g.opts.DialTimeout <= 0 {
		g.opts.DialTimeout = DefaultDialTimeout
	}
	if g.opts.FirstByteTimeout <= 0 {
		g.opts.FirstByteTimeout = DefaultFirstByteTimeout
	}
	if g.opts.IdleTimeout <= 0 {
		g.opts.IdleTimeout = DefaultIdleTimeout
	}
	if g.now == nil {
		g.now = time.Now
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	g.runID = opts.RunID
	if g.runID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		g.runID = hex.EncodeToString(b[:])
	}
	g.transport = opts.Transport
	if g.transport == nil {
		g.transport = newTransport(g.opts.DialTimeout)
	}
	g.stop, g.stopNow = context.WithCancel(context.Background())
	return g, nil
}

// newTransport is the upstream client: no proxy, no compression (the
// gateway asks for identity itself), bounded connect and TLS handshake.
// The first-byte and idle bounds are the exchange's own timers.
func newTransport(dial time.Duration) *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: dial, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: dial,
		DisableCompression:  true,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
	}
}

// Stats returns the counts so far.
func (g *Gateway) Stats() Stats {
	g.mu.Lock()
	n := len(g.sessions)
	g.mu.Unlock()
	return Stats{Writers: n, Recorded: g.stats.recorded.Load(), Unrecorded: g.stats.unrecorded.Load(),
		Refused: g.stats.refused.Load(), FailedOpen: g.stats.failedOpen.Load(), Cut: g.stats.cut.Load(),
		Unmapped: g.stats.unmapped.Load(), Redacted: g.stats.redacted.Load()}
}

// Stop cuts every exchange in flight: each is recorded with cut
// "shutdown" and its client sees the cut. Call it when a graceful
// shutdown's grace has run out, then Wait.
func (g *Gateway) Stop() { g.stopNow() }

// Wait returns when no handler is running.
func (g *Gateway) Wait() { g.inflight.Wait() }

// Failed returns the store's failure that stopped recording, nil while
// the store works.
func (g *Gateway) Failed() error {
	if p := g.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// fail makes err the sticky failure (the first one stays) and logs it
// once.
func (g *Gateway) fail(err error) {
	if g.failed.CompareAndSwap(nil, &err) {
		g.log.Error("the store failed: recorded requests are refused (503) until the gateway is restarted", "err", err.Error())
	}
}

func (g *Gateway) millis() float64 { return float64(g.now().UnixMilli()) }

// ServeHTTP forwards one request (docs/gateway.md#running-it), recording it first when
// its path is a recorded API's.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.inflight.Add(1)
	defer g.inflight.Done()
	if g.opts.LoopbackHostsOnly && !loopback.Host(r.Host) {
		g.refuse(w, http.StatusMisdirectedRequest, "gateway: this gateway answers loopback Host names only (localhost, 127.0.0.1, [::1])")
		return
	}
	up, path := g.route(r)
	api := apiOf(r.Method, r.URL.Path)
	if api == "" && !g.opts.RecordAll {
		g.stats.unrecorded.Add(1)
		g.forward(w, r, up, path, nil)
		return
	}
	if api == "" {
		api = recorded.APIOther
	}
	if r.ContentLength > g.opts.MaxBody {
		g.refuse(w, http.StatusRequestEntityTooLarge, "gateway: the request body is larger than the gateway records (--max-body); nothing was forwarded")
		return
	}
	body, err := readBody(r, g.opts.MaxBody)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			g.refuse(w, http.StatusRequestEntityTooLarge, "gateway: the request body is larger than the gateway records (--max-body); nothing was forwarded")
			return
		}
		g.refuse(w, http.StatusBadRequest, "gateway: the request body could not be read")
		return
	}
	x := &exchange{api: api, method: r.Method, path: recordPath(path, r.URL.RawQuery), body: body, start: g.now()}
	if err := g.logRequest(r, up, x); err != nil {
		if !g.opts.FailOpen {
			g.refuse(w, http.StatusServiceUnavailable, "gateway: the log is unavailable, so the request was not forwarded (the gateway records before it forwards); see the gateway's stderr")
			return
		}
		g.stats.failedOpen.Add(1)
		g.log.Warn("FAIL-OPEN: the log is unavailable; forwarding this request UNRECORDED", "api", api, "request", len(body))
		x = &exchange{api: api, body: body, start: x.start}
		g.forward(w, r, up, path, x)
		return
	}
	defer g.release(x.sess)
	g.stats.recorded.Add(1)
	g.forward(w, r, up, path, x)
}

// refuse answers the gateway's own error.
func (g *Gateway) refuse(w http.ResponseWriter, status int, msg string) {
	g.stats.refused.Add(1)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}

// route picks the upstream of a request and the path to send it (with
// its escaping): a first path segment naming an upstream selects it and
// is dropped; else, with several upstreams, a request of the Anthropic
// family (an anthropic-version header, or a path under /v1/messages)
// goes to the upstream named "anthropic", any other to the one named
// "openai"; else to the first upstream.
func (g *Gateway) route(r *http.Request) (*Upstream, string) {
	p := r.URL.EscapedPath()
	if len(g.byName) == 1 {
		return &g.opts.Upstreams[0], p
	}
	if seg, rest, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/"); seg != "" {
		if u, ok := g.byName[seg]; ok {
			return u, "/" + rest
		}
	}
	family := "openai"
	if r.Header.Get("Anthropic-Version") != "" || strings.HasPrefix(r.URL.Path, "/v1/messages") {
		family = "anthropic"
	}
	if u, ok := g.byName[family]; ok {
		return u, p
	}
	return &g.opts.Upstreams[0], p
}

// apiOf names the recorded API of a request, "" when none (docs/gateway.md#running-it).
func apiOf(method, path string) string {
	if method != http.MethodPost {
		return ""
	}
	switch {
	case strings.HasSuffix(path, "/v1/messages"):
		return wire.AnthropicMessages
	case strings.HasSuffix(path, "/chat/completions"):
		return wire.OpenAIChat
	case strings.HasSuffix(path, "/responses"):
		return APIOpenAIResponses
	}
	return ""
}
