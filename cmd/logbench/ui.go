package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"time"

	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/ui"
	"github.com/sessionlog/sessionlog/verify"
)

// uiLimit is the page time the issue asks for on the largest session.
const uiLimit = time.Second

// uiResult is one page of the audit UI, measured on the largest session.
type uiResult struct {
	page, target string
	// page and verify are the median times of one request and of one
	// verify.Session of the whole session; ratio is page ÷ verify, per
	// round.
	pageTime, verifyTime time.Duration
	ratio                stat
	worst                time.Duration // the slowest round's median page time
}

// localRequest is a request for target as a browser on this machine
// sends it to logtool serve: with a loopback Host.
func localRequest(ctx context.Context, target string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, target, nil).WithContext(ctx)
	r.Host = "127.0.0.1:8080"
	return r
}

// measureUI serves the audit UI's pages for the largest generated session
// in process (httptest, the whole handler: routing, the folds, the
// templates, the answer's bytes) and times each against verify.Session of
// the same session, interleaved. The session's overview is cached by the
// server after the first request, as it is while a person browses; the
// cold timeline builds a new server for every request, so it pays for the
// overview's fold every time.
func measureUI(ctx context.Context, c config, sessions []*benchSession, p progress) ([]uiResult, error) {
	s := sessions[len(sessions)-1]
	opts := &ui.Options{Renderers: ui.WireRenderers()} // as logtool serve
	srv, err := ui.New(s.st, opts)
	if err != nil {
		return nil, err
	}
	head, err := s.st.Head(ctx, s.header.ID)
	if err != nil {
		return nil, err
	}
	o, err := audit.Index(ctx, s.st, head)
	if err != nil {
		return nil, err
	}
	n := len(o.Steps)
	if n < 3 {
		return nil, measuref("the session of %d events has %d steps", s.events, n)
	}
	id := "/s/" + url.PathEscape(s.header.ID)
	last, mid := o.Steps[n-1].Ref.String(), o.Steps[n/2].Ref.String()
	pages := []struct{ name, target string }{
		{"session list", "/"},
		{"timeline, first page", id},
		{"timeline, last page", id + "?from=" + strconv.FormatInt(max(head.Next-200, 0), 10)},
		{"step, middle of the session", id + "/step/" + mid},
		{"step, last", id + "/step/" + last},
		{"cache chart, last page (100 steps)", id + "/cache?from=" + strconv.Itoa(max(n-100, 0))},
		{"diff, last two steps", id + "/diff?a=" + o.Steps[n-2].Ref.String() + "&b=" + last},
		{"API step, last", "/api/sessions/" + url.PathEscape(s.header.ID) + "/steps/" + last},
		{"timeline, cold (no cached overview)", ""},
	}
	get := func(h http.Handler, target string) error {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, localRequest(ctx, target))
		if rec.Code != http.StatusOK {
			return measuref("GET %s = %d", target, rec.Code)
		}
		return nil
	}
	verifyOp := func() error {
		res, err := verify.Session(ctx, s.st, s.header.ID, verify.Options{})
		if err != nil {
			return err
		}
		if res.Failed() {
			return measuref("verify of the generated session found %d findings", len(res.Findings))
		}
		return nil
	}
	out := make([]uiResult, len(pages))
	ops := make([]func() error, len(pages))
	for i, pg := range pages {
		out[i].page, out[i].target = pg.name, pg.target
		if pg.target == "" {
			out[i].target = id
			ops[i] = func() error {
				cold, err := ui.New(s.st, opts)
				if err != nil {
					return err
				}
				return get(cold, id)
			}
		} else {
			ops[i] = func() error { return get(srv, pg.target) }
		}
		if err := ops[i](); err != nil { // warms the overview and the page cache
			return nil, err
		}
	}
	type samples struct{ page, verify, ratio []float64 }
	sm := make([]samples, len(pages))
	for r := range c.rounds {
		for i := range pages {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			v, pg, err := timePair(c.minTime, c.slice, verifyOp, ops[i])
			if err != nil {
				return nil, err
			}
			sm[i].page = append(sm[i].page, pg.NsPerOp)
			sm[i].verify = append(sm[i].verify, v.NsPerOp)
			sm[i].ratio = append(sm[i].ratio, pg.NsPerOp/v.NsPerOp)
			p.printf("  round %d/%d, %s: %s per request, verify %s: %s", r+1, c.rounds, pages[i].name,
				dur(time.Duration(pg.NsPerOp)), dur(time.Duration(v.NsPerOp)), ratio(pg.NsPerOp/v.NsPerOp))
		}
	}
	for i := range out {
		pg := summarize(sm[i].page)
		out[i].pageTime, out[i].worst = time.Duration(pg.Median), time.Duration(pg.Max)
		out[i].verifyTime = time.Duration(summarize(sm[i].verify).Median)
		out[i].ratio = summarize(sm[i].ratio)
	}
	return out, nil
}
