package provider

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// Defaults of the bounds in Options, for a real and slow model: a
// reasoning model may think for minutes before its first token, and some
// servers send the response headers only with it.
const (
	// DefaultConnectTimeout bounds the TCP connection and TLS handshake.
	DefaultConnectTimeout = 30 * time.Second
	// DefaultFirstByteTimeout bounds the wait for the response headers
	// after the request is sent.
	DefaultFirstByteTimeout = 10 * time.Minute
	// DefaultIdleTimeout bounds the wait for the next chunk of an answer.
	DefaultIdleTimeout = 10 * time.Minute
	// DefaultMaxResponseBytes bounds the bytes of one answer's body.
	DefaultMaxResponseBytes = 256 << 20
)

// Codes this package adds to the wire's (docs/wire.md).
const (
	// CodeNetwork is a request that got no HTTP response (connection
	// refused, DNS, TLS, a reset before the headers).
	CodeNetwork = "NETWORK"
	// CodeTimeout is a bound of Options passed: the connection, the
	// response headers, or the wait for the next chunk.
	CodeTimeout = "TIMEOUT"
	// CodeTooLarge is an answer over Options.MaxResponseBytes.
	CodeTooLarge = "RESPONSE_TOO_LARGE"
)

// ErrBaseURL marks a base URL New refuses (it is also ErrInvalid): not
// http or https, no host, or holding user info, a query or a fragment.
var ErrBaseURL = errors.New("provider: bad base URL")

// bound returns d, def when d is 0, none (0) when d is negative.
func bound(d, def time.Duration) time.Duration {
	switch {
	case d < 0:
		return 0
	case d == 0:
		return def
	}
	return d
}

// baseURL parses a base URL and returns it without a trailing slash, the
// renderer's path to be appended. It refuses user info, a query and a
// fragment rather than guess where the path goes and where secrets are;
// its errors never repeat the URL, which may hold them.
func baseURL(raw string) (string, error) {
	bad := func(why string) error {
		return errclass.Mark(errclass.Mark(errors.Newf("provider: the base URL %s", errors.Safe(why)), ErrBaseURL), ErrInvalid)
	}
	if raw == "" {
		return "", bad("is empty")
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "", bad("does not parse as a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return "", bad("must start with http:// or https://")
	case u.Host == "" || u.Opaque != "":
		return "", bad("names no host")
	case u.User != nil:
		return "", bad("holds user info (user:password@): the key goes in the key variable")
	case u.RawQuery != "" || u.ForceQuery:
		return "", bad("holds a query (?…): the renderer appends its path to the base, which takes none")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "", bad("holds a fragment (#…)")
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// client returns the client requests go through: opts.Client (or a new
// one whose transport bounds the connection and the TLS handshake), never
// following a redirect. Go drops Authorization on a redirect to another
// host but not x-api-key; a redirect is an error here (HTTP_3xx).
func client(opts *Options) *http.Client {
	var c http.Client
	if opts.Client != nil {
		c = *opts.Client
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		if d := bound(opts.ConnectTimeout, DefaultConnectTimeout); d > 0 {
			t.DialContext = (&net.Dialer{Timeout: d, KeepAlive: 30 * time.Second}).DialContext
			t.TLSHandshakeTimeout = d
		}
		c.Transport = t
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// timer cancels a request's context with a TIMEOUT cause when it fires.
type timer struct {
	t      *time.Timer
	d      time.Duration
	cancel context.CancelCauseFunc
}

// errTimeout is the cause a timer cancels with; what names the bound.
type errTimeout struct{ what string }

func (e *errTimeout) Error() string { return "provider: " + e.what }

// start arms the timer for d (none when d is 0) with cause what.
func startTimer(d time.Duration, cancel context.CancelCauseFunc, what string) *timer {
	t := &timer{d: d, cancel: cancel}
	if d > 0 {
		err := &errTimeout{what: what}
		t.t = time.AfterFunc(d, func() { cancel(err) })
	}
	return t
}

// reset re-arms the timer for its duration.
func (t *timer) reset() {
	if t.t != nil {
		t.t.Reset(t.d)
	}
}

// stop disarms the timer.
func (t *timer) stop() {
	if t.t != nil {
		t.t.Stop()
	}
}

// timedOut returns the timeout that cancelled ctx, if one did.
func timedOut(ctx context.Context) (*errTimeout, bool) {
	var e *errTimeout
	if errors.As(context.Cause(ctx), &e) {
		return e, true
	}
	return nil, false
}

// networkMessage is the text of a request error without the URL that
// *url.Error repeats (its path, and once its query held secrets).
func networkMessage(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		err = ue.Err
	}
	return err.Error()
}
