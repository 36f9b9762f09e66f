package ui

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// ErrBusy marks a request refused because MaxHeavy requests were running
// for all of HeavyWait (HTTP 429, with Retry-After).
var ErrBusy = errors.New("ui: busy")

// HTTPServer returns an http.Server for h with the timeouts the UI is
// built for: 10 s to read a request's headers, 30 s for the whole
// request, WriteTimeout from its headers to the last byte of the answer
// (a raw download of a big event included), and 60 s for an idle
// keep-alive connection.
func HTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
}

// gate runs h as a heavy request: at most MaxHeavy at once, the others
// waiting up to HeavyWait for a turn and then refused with ErrBusy; the
// request's context ends at WriteTimeout, so its fold stops with it.
func (s *Server) gate(h handler) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		select {
		case s.heavy <- struct{}{}:
		default:
			t := time.NewTimer(s.opts.HeavyWait)
			defer t.Stop()
			select {
			case s.heavy <- struct{}{}:
			case <-t.C:
				w.Header().Set("Retry-After", "1")
				return errclass.Mark(errors.Newf("ui: %d requests are being served: try again shortly", errors.Safe(s.opts.MaxHeavy)), ErrBusy)
			case <-r.Context().Done():
				return r.Context().Err()
			}
		}
		defer func() { <-s.heavy }()
		ctx, cancel := context.WithTimeout(r.Context(), WriteTimeout)
		defer cancel()
		return h(w, r.WithContext(ctx))
	}
}

// intParam reads an integer query parameter in lo..hi, def when absent.
func intParam(r *http.Request, name string, def, lo, hi int64) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, badRequestf("%s is an integer from %d to %d", errors.Safe(name), errors.Safe(lo), errors.Safe(hi))
	}
	return n, nil
}

// window reads the from and limit parameters of a paged answer over n
// items: from in 0..n, limit in 1..most (def when absent). The end,
// from+limit, cannot overflow.
func window(r *http.Request, n, def, most int64) (from, limit int64, err error) {
	if from, err = intParam(r, "from", 0, 0, n); err != nil {
		return 0, 0, err
	}
	limit, err = intParam(r, "limit", def, 1, most)
	return from, limit, err
}

// idSegment writes a session id as one path segment. A browser resolves
// a segment . or .. (or %2E, %2E%2E) against the path before it asks,
// so such an id is written with a ~ before it, and so is an id that
// starts with ~; sessionID reads it back.
func idSegment(id string) string {
	if id == "." || id == ".." || strings.HasPrefix(id, "~") {
		id = "~" + id
	}
	return url.PathEscape(id)
}

// sessionID is the session id of a path segment written by idSegment
// (as the router decoded it).
func sessionID(seg string) string {
	if strings.HasPrefix(seg, "~") {
		return seg[1:]
	}
	return seg
}

// clip returns the first HeadBytes of s, cut at a character boundary,
// and whether s is over BigItem (a page then shows that much of it).
func clip(s []byte) (head string, big bool) {
	if len(s) <= BigItem {
		return string(s), false
	}
	n := HeadBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return string(s[:n]), true
}
