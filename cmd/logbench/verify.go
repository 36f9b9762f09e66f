package main

import (
	"context"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/verify"
)

// verifyResult is what the rounds measured on one generated session.
type verifyResult struct {
	events int64
	steps  int
	// verify and naive are µs per event, per round; ratio is naive ÷
	// verify, per round. naive is absent (hasNaive false) on the largest
	// session.
	verify, naive, ratio stat
	hasNaive             bool
	// verifyTotal and naiveTotal are the median times of one run.
	verifyTotal, naiveTotal time.Duration
}

// measureVerify times verify.Session on every session and, on all but
// the largest, the naive rebuild that folds the log from scratch for
// every step (reading the events from the store, then rebuild.Steps).
// Each round times, interleaved (timePair), every session's verify with
// its naive rebuild, and the smallest session's verify with the
// largest's; scale is verify's µs per event on the largest ÷ on the
// smallest, one per round.
func measureVerify(ctx context.Context, c config, sessions []*benchSession, p progress) ([]verifyResult, stat, error) {
	type samples struct {
		verify, naive, ratio    []float64
		verifyTotal, naiveTotal []float64
	}
	sm := make([]samples, len(sessions))
	out := make([]verifyResult, len(sessions))
	verifyOp := make([]func() error, len(sessions))
	naiveOp := make([]func() error, len(sessions))
	for i, s := range sessions {
		out[i].events = s.events
		verifyOp[i] = func() error {
			res, err := verify.Session(ctx, s.st, s.header.ID, verify.Options{})
			if err != nil {
				return err
			}
			if res.Failed() || res.Events != s.events {
				return measuref("verify of the generated session of %d events: %d findings, %d events",
					errors.Safe(s.events), errors.Safe(len(res.Findings)), errors.Safe(res.Events))
			}
			out[i].steps = res.Steps
			return nil
		}
		naiveOp[i] = func() error {
			evs, err := s.readAll(ctx)
			if err != nil {
				return err
			}
			st, err := rebuild.Steps(s.header, evs)
			if err != nil {
				return errors.Wrap(err, "naive rebuild")
			}
			if len(st) != out[i].steps {
				return measuref("naive rebuild of %d events: %d steps, verify counted %d",
					errors.Safe(s.events), errors.Safe(len(st)), errors.Safe(out[i].steps))
			}
			return nil
		}
		// An untimed verify first: it counts the steps, and the first read
		// of a store pays for page faults that no later run sees.
		if err := verifyOp[i](); err != nil {
			return nil, stat{}, err
		}
	}
	perEvent := func(t opTiming, i int) float64 { return t.NsPerOp / 1e3 / float64(sessions[i].events) }
	add := func(i int, v opTiming) {
		sm[i].verify, sm[i].verifyTotal = append(sm[i].verify, perEvent(v, i)), append(sm[i].verifyTotal, v.NsPerOp)
	}
	last := len(sessions) - 1
	var scale []float64
	for r := range c.rounds {
		for i := range sessions[:last] {
			if err := ctx.Err(); err != nil {
				return nil, stat{}, err
			}
			v, nv, err := timePair(c.verifyMinTime(), c.slice, verifyOp[i], naiveOp[i])
			if err != nil {
				return nil, stat{}, err
			}
			add(i, v)
			vus, nus := perEvent(v, i), perEvent(nv, i)
			sm[i].naive, sm[i].naiveTotal = append(sm[i].naive, nus), append(sm[i].naiveTotal, nv.NsPerOp)
			sm[i].ratio = append(sm[i].ratio, nus/vus)
			p.printf("  round %d/%d, %s events: verify %s µs/event, naive %s µs/event: %s",
				r+1, c.rounds, group(sessions[i].events), num(vus), num(nus), ratio(nus/vus))
		}
		small, large, err := timePair(c.verifyMinTime(), c.slice, verifyOp[0], verifyOp[last])
		if err != nil {
			return nil, stat{}, err
		}
		add(last, large)
		scale = append(scale, perEvent(large, last)/perEvent(small, 0))
		p.printf("  round %d/%d, verify %s events: %s µs/event; against %s events: %s",
			r+1, c.rounds, group(sessions[last].events), num(perEvent(large, last)), group(sessions[0].events), ratio(scale[r]))
	}
	for i := range out {
		out[i].verify, out[i].verifyTotal = summarize(sm[i].verify), time.Duration(summarize(sm[i].verifyTotal).Median)
		if len(sm[i].naive) > 0 {
			out[i].hasNaive = true
			out[i].naive, out[i].ratio = summarize(sm[i].naive), summarize(sm[i].ratio)
			out[i].naiveTotal = time.Duration(summarize(sm[i].naiveTotal).Median)
		}
	}
	return out, summarize(scale), nil
}
