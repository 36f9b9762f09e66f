package provider

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/wire"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// ErrInvalid marks options New cannot work with (codec.ErrInvalid).
var ErrInvalid = codec.ErrInvalid

// Options configures a Provider.
type Options struct {
	// Wire is the renderer's name (wire.OpenAIChat or
	// wire.AnthropicMessages). Required.
	Wire string
	// BaseURL is the API's base, e.g. https://api.openai.com/v1 (the
	// renderer appends /chat/completions) or https://api.anthropic.com
	// (it appends /v1/messages). Required: http or https, with a host, and
	// without user info, query or fragment (refused, ErrBaseURL).
	BaseURL string
	// APIKeyEnv names the environment variable holding the API key. Empty
	// means no key is sent (a local server); a named variable that is
	// unset or empty is an error.
	APIKeyEnv string
	// Getenv reads the environment; nil means os.Getenv. (A command
	// passes its own, so that its tests are hermetic.)
	Getenv func(string) string
	// Client sends the requests; nil means one of this package's, whose
	// transport applies ConnectTimeout. Either way redirects are not
	// followed (a copy of Client is used).
	Client *http.Client
	// ConnectTimeout bounds the TCP connection and the TLS handshake of
	// this package's client (not of Options.Client's transport); 0 means
	// DefaultConnectTimeout, negative none.
	ConnectTimeout time.Duration
	// FirstByteTimeout bounds the wait from sending a request to its
	// response headers (connecting included); 0 means
	// DefaultFirstByteTimeout, negative none.
	FirstByteTimeout time.Duration
	// IdleTimeout bounds the wait for the next chunk of an answer: bytes
	// that complete no chunk (pings, a line dripped a byte at a time) do
	// not count. 0 means DefaultIdleTimeout, negative none.
	IdleTimeout time.Duration
	// MaxResponseBytes bounds one answer's body; 0 means
	// DefaultMaxResponseBytes, negative none.
	MaxResponseBytes int64
	// Logger receives one line per request and per failure, never
	// content or keys; nil is silent.
	Logger *slog.Logger
}

// Provider sends requests to one HTTP API. It is safe for concurrent use.
type Provider struct {
	r         *wire.Renderer
	url       string
	key       string
	client    *http.Client
	firstByte time.Duration
	idle      time.Duration
	maxBytes  int64
	log       *slog.Logger
	bufs      sync.Pool // *[]byte: bodies, reused across requests
}

var _ loop.Provider = (*Provider)(nil)

// New returns a provider for opts, reading the API key from the variable
// opts.APIKeyEnv names.
func New(opts Options) (*Provider, error) {
	r, err := wire.Lookup(opts.Wire)
	if err != nil {
		return nil, errclass.Mark(err, ErrInvalid)
	}
	base, err := baseURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	p := &Provider{r: r, url: base, client: client(&opts), log: opts.Logger,
		firstByte: bound(opts.FirstByteTimeout, DefaultFirstByteTimeout),
		idle:      bound(opts.IdleTimeout, DefaultIdleTimeout),
		maxBytes:  opts.MaxResponseBytes}
	switch {
	case p.maxBytes == 0:
		p.maxBytes = DefaultMaxResponseBytes
	case p.maxBytes < 0:
		p.maxBytes = 0
	}
	if opts.APIKeyEnv != "" {
		getenv := opts.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		p.key = getenv(opts.APIKeyEnv)
		if p.key == "" {
			return nil, errclass.Mark(errors.Newf("provider: the environment variable %s holding the API key is not set", errors.Safe(opts.APIKeyEnv)), ErrInvalid)
		}
	}
	return p, nil
}

// Wire is the name of the provider's renderer.
func (p *Provider) Wire() string { return p.r.Name() }

func (p *Provider) logf(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	if p.log != nil {
		p.log.LogAttrs(ctx, level, msg, attrs...)
	}
}

// Stream renders req, checks its wire, sends the body and returns the
// answer's chunks as they arrive.
func (p *Provider) Stream(ctx context.Context, req *loop.Request) (loop.Stream, error) {
	at := []slog.Attr{slog.String("wire", p.r.Name()), slog.Int64("turn", req.Turn), slog.Int64("step", req.Step)}
	cfg := req.Header.Config
	if !cfg.HasWire || cfg.Wire != p.r.Name() {
		named := "none"
		if cfg.HasWire {
			named = strconv.Quote(cfg.Wire)
		}
		err := &loop.ProviderError{Code: wire.CodeMismatch,
			Message: "the header names wire " + named + ", this provider speaks " + strconv.Quote(p.r.Name())}
		p.logf(ctx, slog.LevelWarn, "provider: refused", append(at, slog.String("code", err.Code))...)
		return nil, err
	}
	bp, _ := p.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	body, err := p.r.AppendBody((*bp)[:0], req.JSON, &req.Header)
	if err != nil {
		p.bufs.Put(bp)
		return nil, errors.Wrap(err, "render")
	}
	*bp = body
	rctx, cancel := context.WithCancelCause(ctx)
	release := func() { cancel(nil); p.bufs.Put(bp) }
	wr := p.r.HTTP(body)
	hr, err := http.NewRequestWithContext(rctx, wr.Method, p.url+wr.Path, bytes.NewReader(body))
	if err != nil {
		release()
		return nil, errclass.Mark(errors.New("provider: the request could not be built"), ErrInvalid)
	}
	p.setHeaders(hr, &wr)
	p.logf(ctx, slog.LevelDebug, "provider: send", append(at, slog.Int("bytes", len(body)))...)
	first := startTimer(p.firstByte, cancel, "no response headers within "+p.firstByte.String())
	resp, err := p.client.Do(hr)
	first.stop()
	if err != nil {
		release()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		pe := &loop.ProviderError{Code: CodeNetwork, Message: p.clean(networkMessage(err))}
		if e, ok := timedOut(rctx); ok {
			pe = &loop.ProviderError{Code: CodeTimeout, Message: strings.TrimPrefix(e.Error(), "provider: ")}
		} else if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
			pe.Code = CodeTimeout // the transport's connect or TLS bound
		}
		p.logf(ctx, slog.LevelWarn, "provider: failed", append(at, slog.String("code", pe.Code))...)
		return nil, pe
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer release()
		defer resp.Body.Close()
		idle := startTimer(p.idle, cancel, "the error body stalled")
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		idle.stop()
		we := p.r.HTTPError(resp.StatusCode, data)
		pe := &loop.ProviderError{Code: we.Code, Message: p.clean(we.Message), Status: we.Status,
			RetryAfter: retryAfter(resp.Header, time.Now())}
		p.logf(ctx, slog.LevelWarn, "provider: failed", append(at, slog.String("code", pe.Code), slog.Int("status", pe.Status))...)
		return nil, pe
	}
	p.logf(ctx, slog.LevelDebug, "provider: streaming", append(at, slog.Int("status", resp.StatusCode))...)
	return &stream{ctx: ctx, rctx: rctx, p: p, body: resp.Body, t: p.r.NewTranslator(), release: release,
		idle:  startTimer(p.idle, cancel, "no chunk of the answer within "+p.idle.String()),
		retry: retryAfter(resp.Header, time.Now()), status: resp.StatusCode, at: at}, nil
}

// setHeaders sets the renderer's fields and the key.
func (p *Provider) setHeaders(hr *http.Request, r *wire.HTTPRequest) {
	for _, f := range r.Header {
		hr.Header.Set(f.Name, f.Value)
	}
	if p.key != "" {
		hr.Header.Set(r.KeyHeader, r.KeyPrefix+p.key)
	}
}

// clean makes a message that came from elsewhere fit to store: the key
// redacted, then cut (wire.Message).
func (p *Provider) clean(s string) string { return wire.Message(s, p.key) }

// code is a server-given code fit to store: a code is short and of
// letters, digits and _ . -; anything else (or one that holds the key)
// is SERVER.
func (p *Provider) code(c string) string {
	ok := c != "" && len(c) <= 64
	for i := 0; ok && i < len(c); i++ {
		b := c[i]
		ok = b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_' || b == '.' || b == '-'
	}
	if !ok || p.key != "" && strings.Contains(strings.ToUpper(c), strings.ToUpper(p.key)) {
		return "SERVER"
	}
	return c
}

// retryAfter parses a Retry-After header (seconds or an HTTP date).
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 && s < 1e9 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// stream is one answer: the response body fed to a translator as it is
// read.
type stream struct {
	ctx     context.Context
	rctx    context.Context // the request's: ctx, or a bound of Options passed
	idle    *timer
	read    int64 // body bytes read
	p       *Provider
	body    io.ReadCloser
	t       *wire.Translator
	release func()
	retry   time.Duration
	status  int
	at      []slog.Attr

	buf    []byte
	queue  []wire.Chunk
	head   int
	ended  bool
	err    error
	closed bool
}

const readSize = 32 << 10

// Next returns the next chunk, reading the body as needed.
func (s *stream) Next() (loop.Chunk, error) {
	for s.head >= len(s.queue) {
		if s.err != nil {
			return loop.Chunk{}, s.err
		}
		if s.ended {
			return loop.Chunk{}, io.EOF
		}
		s.fill()
	}
	c := s.queue[s.head]
	s.head++
	return c, nil
}

// fill reads once from the body and translates what arrived.
func (s *stream) fill() {
	s.queue, s.head = s.queue[:0], 0
	if s.buf == nil {
		s.buf = make([]byte, readSize)
	}
	n, rerr := s.body.Read(s.buf)
	s.read += int64(n)
	if s.p.maxBytes > 0 && s.read > s.p.maxBytes {
		s.fail(&wire.Error{Code: CodeTooLarge, Message: "the answer passed " + strconv.FormatInt(s.p.maxBytes, 10) + " bytes"})
		return
	}
	var err error
	if n > 0 {
		s.queue, err = s.t.Feed(s.queue, s.buf[:n])
		if len(s.queue) > 0 {
			s.idle.reset()
			s.cleanReasons()
		}
	}
	switch {
	case err != nil:
		s.fail(err)
	case s.t.Done():
		s.ended = true
	case rerr == io.EOF:
		s.queue, err = s.t.End(s.queue)
		if err != nil {
			s.fail(err)
		} else {
			s.cleanReasons()
			s.ended = true
		}
	case rerr != nil:
		if s.ctx.Err() != nil {
			s.err = s.ctx.Err()
			return
		}
		if e, ok := timedOut(s.rctx); ok {
			s.fail(&wire.Error{Code: CodeTimeout, Message: strings.TrimPrefix(e.Error(), "provider: ")})
			return
		}
		s.fail(&wire.Error{Code: wire.CodeStreamClosed, Message: "the connection broke mid-stream"})
	}
	if s.ended || s.err != nil {
		s.idle.stop()
	}
}

// cleanReasons makes the finish chunks just queued fit to store: their
// reason carries the server's stop reason and, for an error, its message
// (wire.CleanReason: the key redacted, then the message cut).
func (s *stream) cleanReasons() {
	for i := range s.queue {
		if c := &s.queue[i]; c.Type == wire.ChunkFinish {
			c.Reason = wire.CleanReason(c.Reason, s.p.key)
			if k := strings.ToUpper(s.p.key); k != "" {
				c.Reason = bytes.ReplaceAll(c.Reason, []byte(k), []byte(wire.Redacted))
			}
		}
	}
}

// fail records a stream failure as a ProviderError.
func (s *stream) fail(err error) {
	if s.ctx.Err() != nil {
		s.err = s.ctx.Err()
		return
	}
	var we *wire.Error
	if errors.As(err, &we) {
		pe := &loop.ProviderError{Code: s.p.code(we.Code), Message: s.p.clean(we.Message), Status: s.status, RetryAfter: s.retry}
		s.p.logf(s.ctx, slog.LevelWarn, "provider: stream failed", append(s.at, slog.String("code", pe.Code))...)
		s.err = pe
		return
	}
	s.err = err
}

// Close releases the response and the body buffer.
func (s *stream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.idle.stop()
	err := s.body.Close()
	s.release()
	s.t, s.queue, s.buf = nil, nil, nil // the answer's blocks, for the collector
	return err
}
