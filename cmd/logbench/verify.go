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
// Inside a round, each session's verify and naive run back to back, and
// scale (verify's µs per event on the largest session ÷ on the smallest)
// is taken from the same round.
func measureVerify(ctx context.Context, c config, sessions []*benchSession, p progress) ([]verifyResult, stat, error) {
	type samples struct {
		verify, naive, ratio    []float64
		verifyTotal, naiveTotal []float64
	}
	sm := make([]samples, len(sessions))
	out := make([]verifyResult, len(sessions))
	var scale []float64
	// One untimed verify of each session first: the first read of a store
	// pays for page faults and a cold cache that no later round sees.
	for _, s := range sessions {
		if _, err := verify.Session(ctx, s.st, s.header.ID, verify.Options{}); err != nil {
			return nil, stat{}, err
		}
	}
	for r := range c.rounds {
		for i, s := range sessions {
			if err := ctx.Err(); err != nil {
				return nil, stat{}, err
			}
			var steps int
			v, err := timeRepeat(c.minTime, func() error {
				res, err := verify.Session(ctx, s.st, s.header.ID, verify.Options{})
				if err != nil {
					return err
				}
				if res.Failed() || res.Events != s.events {
					return measuref("verify of the generated session of %d events: %d findings, %d events",
						errors.Safe(s.events), errors.Safe(len(res.Findings)), errors.Safe(res.Events))
				}
				steps = res.Steps
				return nil
			})
			if err != nil {
				return nil, stat{}, err
			}
			out[i].events, out[i].steps = s.events, steps
			vus := float64(v.Nanoseconds()) / 1e3 / float64(s.events)
			sm[i].verify, sm[i].verifyTotal = append(sm[i].verify, vus), append(sm[i].verifyTotal, float64(v))
			line := "  verify " + group(s.events) + " events, round " + group(int64(r+1)) + ": " + num(vus) + " µs/event"
			if i < len(sessions)-1 {
				nv, err := timeRepeat(c.minTime, func() error {
					evs, err := s.readAll(ctx)
					if err != nil {
						return err
					}
					st, err := rebuild.Steps(s.header, evs)
					if err != nil {
						return err
					}
					if len(st) != steps {
						return measuref("naive rebuild of %d events: %d steps, verify counted %d",
							errors.Safe(s.events), errors.Safe(len(st)), errors.Safe(steps))
					}
					return nil
				})
				if err != nil {
					return nil, stat{}, errors.Wrap(err, "naive rebuild")
				}
				nus := float64(nv.Nanoseconds()) / 1e3 / float64(s.events)
				sm[i].naive, sm[i].naiveTotal = append(sm[i].naive, nus), append(sm[i].naiveTotal, float64(nv))
				sm[i].ratio = append(sm[i].ratio, nus/vus)
				line += ", naive " + num(nus) + " µs/event: " + ratio(nus/vus)
			}
			p.printf("%s", line)
		}
		last := len(sessions) - 1
		scale = append(scale, sm[last].verify[r]/sm[0].verify[r])
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
