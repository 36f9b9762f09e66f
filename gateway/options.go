package gateway

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/errclass"
	"github.com/sessionlog/sessionlog/redact"
)

// Defaults of Options.
const (
	// DefaultMaxBody is the largest request body recorded: 32 MiB. A
	// larger one is refused with 413 before anything is forwarded.
	DefaultMaxBody = 32 << 20
	// DefaultDialTimeout bounds connecting to the upstream, TLS included.
	DefaultDialTimeout = 30 * time.Second
	// DefaultFirstByteTimeout bounds the wait for the upstream's status
	// line after the request is sent. A non-streamed answer comes whole
	// after the model has finished, so it is long.
	DefaultFirstByteTimeout = 10 * time.Minute
	// DefaultIdleTimeout bounds the silence between two reads of an
	// answer: a reasoning model may think for minutes between events.
	DefaultIdleTimeout = 5 * time.Minute
	// MemoryLimit is the soft memory limit (runtime/debug.SetMemoryLimit)
	// a process running the gateway is meant to run under, as logtool
	// gateway does: many answers streaming at once make garbage fast, and
	// the collector keeps the heap near what is live (64 clients
	// streaming 20 MB answers each keep about 120 MB) instead of letting
	// it double. A library sets nothing global: the command sets it.
	MemoryLimit = 160 << 20
)

// Upstream is a model provider the gateway forwards to.
type Upstream struct {
	// Name selects the upstream by path prefix (/NAME/…) and, for
	// "anthropic" and "openai", by API family (see the package doc); it
	// is part of every recorded session's id.
	Name string
	// URL is the base the request's path is appended to: scheme, host,
	// and an optional path prefix; no query.
	URL *url.URL
}

// ParseUpstream parses --upstream's value: NAME=URL, or a bare URL named
// by its host.
func ParseUpstream(s string) (Upstream, error) {
	name, raw, named := strings.Cut(s, "=")
	if !named || strings.Contains(name, ":") {
		name, raw = "", s
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return Upstream{}, usagef("gateway: upstream %q is not an http:// or https:// URL without query or user", errors.Safe(raw))
	}
	if name == "" {
		name = strings.ToLower(u.Hostname())
	}
	if !validName(name) {
		return Upstream{}, usagef("gateway: upstream name %q: use letters, digits, '.', '-' and '_'", errors.Safe(name))
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	return Upstream{Name: name, URL: u}, nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Options configures New.
type Options struct {
	// Store receives the recorded events. Required.
	Store eventlog.Store
	// Upstreams, at least one. With one, every request goes there.
	Upstreams []Upstream
	// MaxBody bounds a recorded request's body; 0 means DefaultMaxBody.
	MaxBody int64
	// RecordAll records requests of every path and method, not only the
	// three recorded APIs (their api is "other").
	RecordAll bool
	// RecordHeaders adds header names to the allowlists of requests and
	// answers. The names of secrets are refused.
	RecordHeaders []string
	// SessionHeader names a request header that carries the agent's
	// session id, tried before the agents' own.
	SessionHeader string
	// FailOpen forwards a request the store could not take, unrecorded,
	// and logs a warning for each: it breaks model-visible ⟺ logged.
	FailOpen bool
	// LoopbackHostsOnly answers 421 to a request whose Host is not a
	// loopback name (set it whenever the gateway listens on loopback).
	LoopbackHostsOnly bool
	// DialTimeout, FirstByteTimeout and IdleTimeout bound the upstream
	// exchange (see the Default constants, used for zero values).
	DialTimeout, FirstByteTimeout, IdleTimeout time.Duration
	// Transport sends requests upstream; nil means a transport built
	// from DialTimeout, with compression off. Redirects are never
	// followed: the gateway calls RoundTrip.
	Transport http.RoundTripper
	// RunID names the sessions of requests that carry no agent session
	// id (one per upstream); "" means a random one.
	RunID string
	// Now is the clock of event times; nil means time.Now.
	Now func() time.Time
	// Logger receives one line per exchange (session, exchange, api,
	// sizes, status, cut; never content), the warnings of --fail-open
	// and the store's failure; nil is silent.
	Logger *slog.Logger
	// Redactor, when set, is applied to what is recorded of a request
	// (docs/forgetting.md#redaction, docs/gateway.md#running-it): its body's string values (a body that is no
	// JSON, as text), its path and its recorded header values; the
	// mapped events are the mapping of the redacted body. Forwarding is
	// unchanged: the upstream gets the bytes the client sent. The
	// wire/request says how many spans were replaced (package
	// wire/recorded). Answers are recorded as they come.
	Redactor *redact.Redactor
}

// ErrUsage marks an Options error: a bad upstream, a header that must
// never be recorded.
var ErrUsage = errors.New("gateway: bad options")

func usagef(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrUsage)
}

// invalidf returns an error marked codec.ErrInvalid.
func invalidf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), codec.ErrInvalid)
}

// CheckRecordHeader refuses a --record-header name that must never be
// recorded (a key or cookie) or is empty.
func CheckRecordHeader(name string) error {
	n := strings.ToLower(strings.TrimSpace(name))
	if never[n] || n == "" {
		return usagef("gateway: header %q is never recorded", errors.Safe(n))
	}
	return nil
}
