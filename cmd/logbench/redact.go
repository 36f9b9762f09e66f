package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/internal/corpus"
	"github.com/sessionlog/sessionlog/redact"
)

// redactTarget is issue 22's floor for redact --all over the DSH corpus,
// in MB/s of event content.
const redactTarget = 50

// redactResult is one redactor run over every event of the DSH corpus,
// as redact --all runs it (Redactor.Event on each stored payload).
type redactResult struct {
	name   string
	events int
	// payload is the events' storage form, jsonl their JSONL lines.
	payload, jsonl int64
	// spans are the spans one pass replaces.
	spans int
	// wallMBps and cpuMBps are MB/s of payload per round, by the wall
	// clock (interleaved with the decode baseline) and by CPU time;
	// ratio is redact time ÷ decode time, per round.
	wallMBps, cpuMBps, ratio stat
}

// redactPatterns are the redactors measured: the ready matchers, and
// --match patterns of the three kinds the gate tells apart.
var redactPatterns = []struct{ name, expr string }{
	{"the ready matchers (redact.Secrets)", ""},
	{"--match `sk-[A-Za-z0-9_-]{20,}` (a literal: gated)", `sk-[A-Za-z0-9_-]{20,}`},
	{"--match `(?i)password\\s*[:=]\\s*\\S+` (a literal in either case: gated)", `(?i)password\s*[:=]\s*\S+`},
	{"--match `\\b[A-Z0-9]{20}\\b` (no literal: every string)", `\b[A-Z0-9]{20}\b`},
}

// measureRedact times each redactor of redactPatterns over the DSH
// corpus's events, against decoding them (codec.DecodeStoredEvent, what
// reading every event costs); nil when the corpus is absent.
func measureRedact(ctx context.Context, c config, p progress) ([]redactResult, error) {
	files, ok, err := corpus.SessionFiles()
	if err != nil {
		return nil, errors.Wrap(err, "DSH corpus")
	}
	if !ok {
		p.printf("  the DSH corpus (../shared) is absent: redaction is not measured")
		return nil, nil
	}
	if c.quick && len(files) > 8 {
		files = files[:8] // -quick is a smoke test of the section, not a measurement
	}
	var payloads [][]byte
	var size, jsonl int64
	for _, f := range files {
		lines, err := eventLines(f)
		if err != nil {
			return nil, err
		}
		for _, line := range lines {
			mp, err := codec.FromJSON(nil, line, codec.Limits{})
			if err != nil {
				return nil, errors.Wrapf(err, "%s", errors.Safe(f))
			}
			payloads = append(payloads, mp)
			size += int64(len(mp))
			jsonl += int64(len(line)) + 1
		}
	}
	decode := func() error {
		for _, pl := range payloads {
			if _, err := codec.DecodeStoredEvent(pl); err != nil && !errors.Is(err, codec.ErrInvalid) {
				return err // the corpus holds invalid events on purpose; damage it does not
			}
		}
		return nil
	}
	var out []redactResult
	for _, rp := range redactPatterns {
		r := redact.Secrets()
		if rp.expr != "" {
			m, err := redact.Regexp("match", rp.expr)
			if err != nil {
				return nil, err
			}
			r = redact.New(m)
		}
		res := redactResult{name: rp.name, events: len(payloads), payload: size, jsonl: jsonl}
		run := func() error {
			n := 0
			for _, pl := range payloads {
				_, k, err := r.Event(pl)
				if err != nil && !errors.Is(err, codec.ErrInvalid) {
					return err
				}
				n += k
			}
			res.spans = n
			return nil
		}
		var wall, cpu, ratio []float64
		for range c.rounds {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			d, t, err := timePair(c.minTime, c.slice, decode, run)
			if err != nil {
				return nil, err
			}
			wall = append(wall, float64(size)/t.NsPerOp*1e3)
			ratio = append(ratio, t.NsPerOp/d.NsPerOp)
			ct, err := cpuTime(run, c.minTime)
			if err != nil {
				return nil, err
			}
			cpu = append(cpu, float64(size)/ct*1e3)
		}
		res.wallMBps, res.cpuMBps, res.ratio = summarize(wall), summarize(cpu), summarize(ratio)
		p.printf("  redact, %s: %s MB/s (CPU time), %s MB/s (wall), %d spans", rp.name, num(res.cpuMBps.Median), num(res.wallMBps.Median), res.spans)
		out = append(out, res)
	}
	return out, nil
}

// eventLines returns the lines of a case's session.jsonl after its
// header line.
func eventLines(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.Wrap(err, "DSH corpus")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 256<<20)
	var out [][]byte
	for first := true; sc.Scan(); first = false {
		if !first && len(sc.Bytes()) > 0 {
			out = append(out, append([]byte(nil), sc.Bytes()...))
		}
	}
	return out, errors.Wrapf(sc.Err(), "%s", errors.Safe(path))
}

// writeRedact writes the redaction section.
func (r *report) writeRedact(b *strings.Builder) {
	b.WriteString("## Redaction\n\n")
	if len(r.redact) == 0 {
		b.WriteString("Not measured: the DSH corpus (../shared/testdata/dsh) is absent, or the section was not run.\n\n")
		return
	}
	x := r.redact[0]
	fmt.Fprintf(b, "`redact.Redactor.Event` (package redact, docs/forgetting.md#redaction: what `redact --all` runs on each stored event) over\n"+
		"the %s events of the DSH corpus: %s MB of payload (storage form), %s MB of JSONL. MB/s are of payload;\n"+
		"the wall figure is timed interleaved with decoding the same events (`codec.DecodeStoredEvent`, what\n"+
		"reading every event costs), the CPU figure on a locked thread, which other processes' load does not\n"+
		"inflate. Every span the ready matchers find in this corpus would be a false positive (it holds no\n"+
		"secret). The target is %d MB/s of event content (issue 22).\n\n",
		group(int64(x.events)), num(float64(x.payload)/1e6), num(float64(x.jsonl)/1e6), redactTarget)
	t := newTable("redactor", "spans", "MB/s (wall)", "MB/s (CPU time)", "redact ÷ decode")
	t.align[0] = false
	for _, rr := range r.redact {
		t.add(rr.name, group(int64(rr.spans)), num(rr.wallMBps.Median), num(rr.cpuMBps.Median), ratioRange(rr.ratio))
	}
	t.write(b)
}

// redactTargetRows adds issue 22's redaction target to the targets table:
// the slowest redactor measured, by CPU time.
func (r *report) redactTargetRows(t *table, verdict func(bool) string, missing func(string, string)) {
	target := fmt.Sprintf("≥ %d MB/s", redactTarget)
	if len(r.redact) == 0 {
		missing("redact --all over the DSH corpus's events, MB/s of event content (issue 22)", target)
		return
	}
	for _, rr := range r.redact {
		t.add("redact --all over the DSH corpus's events, "+rr.name+", MB/s of event content by CPU time (issue 22)",
			target, num(rr.cpuMBps.Median)+" MB/s", verdict(rr.cpuMBps.Median >= redactTarget))
	}
}
