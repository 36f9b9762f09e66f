package main

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"syscall"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/internal/loggen"
	"github.com/sessionlog/sessionlog/internal/ssegen"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/wire"
)

// renderResult is the render of one step's request by one renderer.
type renderResult struct {
	wire         string
	step         string
	requestBytes int
	bodyBytes    int
	events       int // events folded to build the request from scratch
	// render, build and assemble are ns per request, per round; ratio is
	// render ÷ build and vsAssemble render ÷ assemble, per round.
	render, build, assemble stat
	ratio, vsAssemble       stat
}

// streamResult is the translation of one long stream.
type streamResult struct {
	wire   string
	bytes  int
	chunks int
	// wallMBps and cpuMBps are MB/s of SSE input per round, by the wall
	// clock and by the thread's CPU time; ratio is translate ÷ decode
	// (the JSON decode of every event's data alone), per round.
	wallMBps, cpuMBps, ratio stat
}

// wireReport is the wire section's figures.
type wireReport struct {
	renders []renderResult
	// linear is, per renderer, render ns per request byte at the large
	// request ÷ at the small one, per round; perByte the two medians.
	linear  map[string]stat
	perByte map[string][2]float64
	streams []streamResult
}

// wireSizes are the request sizes the render is measured at.
var wireSizes = []int{1 << 10, 100 << 10}

// measureWire times the renderers against building the request
// (docs/wire.md) and the stream translators' throughput.
func measureWire(ctx context.Context, c config, p progress) (*wireReport, error) {
	rep := &wireReport{linear: map[string]stat{}, perByte: map[string][2]float64{}}
	h, evs, steps, err := wireSession()
	if err != nil {
		return nil, err
	}
	var picked []rebuild.Step
	for _, size := range wireSizes {
		picked = append(picked, closest(steps, size))
	}
	for _, name := range wire.Names() {
		r, err := wire.Lookup(name)
		if err != nil {
			return nil, err
		}
		for _, s := range picked {
			res, err := measureRender(ctx, c, r, h, evs, s)
			if err != nil {
				return nil, errors.Wrapf(err, "%s step %d.%d", errors.Safe(name), errors.Safe(s.Turn), errors.Safe(s.Step))
			}
			rep.renders = append(rep.renders, res)
			p.printf("  %s: %s request of %s B renders in %s µs, %s × building it", name, res.step, group(int64(res.requestBytes)),
				num(res.render.Median/1e3), num(res.ratio.Median))
		}
		lin, small, large, err := measureLinear(ctx, c, r, picked[0], picked[len(picked)-1])
		if err != nil {
			return nil, errors.Wrapf(err, "%s linearity", errors.Safe(name))
		}
		rep.linear[name] = lin
		rep.perByte[name] = [2]float64{small, large}
	}
	size := 4 << 20
	if c.quick {
		size = 1 << 20
	}
	for _, name := range wire.Names() {
		res, err := measureStream(ctx, c, name, size)
		if err != nil {
			return nil, errors.Wrapf(err, "%s stream", errors.Safe(name))
		}
		rep.streams = append(rep.streams, res)
		p.printf("  %s: %s MB/s of SSE (CPU time)", name, num(res.cpuMBps.Median))
	}
	return rep, nil
}

// wireSession generates a realistic session without compaction, long
// enough that a step's request reaches the largest size measured.
func wireSession() (codec.SessionHeader, []codec.Event, []rebuild.Step, error) {
	for events := 1000; ; events *= 2 {
		h, evs, err := loggen.Session(sessionSeed, loggen.Options{Events: events, CompactEvery: 1 << 30, Realistic: true})
		if err != nil {
			return h, nil, nil, errors.Wrap(err, "generate")
		}
		steps, err := rebuild.Steps(h, evs)
		if err != nil {
			return h, nil, nil, errors.Wrap(err, "rebuild")
		}
		largest := 0
		for _, s := range steps {
			largest = max(largest, len(s.Request))
		}
		if largest >= wireSizes[len(wireSizes)-1] || events >= 1<<16 {
			return h, evs, steps, nil
		}
	}
}

// closest is the step whose request size is closest to size.
func closest(steps []rebuild.Step, size int) rebuild.Step {
	var best rebuild.Step
	for _, s := range steps {
		if s.Null {
			continue
		}
		if best.Request == nil || abs(len(s.Request)-size) < abs(len(best.Request)-size) {
			best = s
		}
	}
	return best
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// measureLinear times, per round and interleaved, the render of the small
// and the large request, and returns the ratio of their ns per request
// byte (large ÷ small) per round, and the two medians.
func measureLinear(ctx context.Context, c config, r *wire.Renderer, small, large rebuild.Step) (stat, float64, float64, error) {
	var a, b []byte
	renderSmall := func() (err error) { a, err = r.AppendBody(a[:0], small.Request, &small.Header); return err }
	renderLarge := func() (err error) { b, err = r.AppendBody(b[:0], large.Request, &large.Header); return err }
	var ratios, sp, lp []float64
	for range c.rounds {
		if err := ctx.Err(); err != nil {
			return stat{}, 0, 0, err
		}
		ts, tl, err := timePair(c.minTime, c.slice, renderSmall, renderLarge)
		if err != nil {
			return stat{}, 0, 0, err
		}
		s, l := ts.NsPerOp/float64(len(small.Request)), tl.NsPerOp/float64(len(large.Request))
		ratios, sp, lp = append(ratios, l/s), append(sp, s), append(lp, l)
	}
	return summarize(ratios), summarize(sp).Median, summarize(lp).Median, nil
}

// measureRender times, per round and interleaved, the render of a step's
// request against building that request from the log's events from
// scratch (rebuild.Request), and against assembling it from messages
// already derived (rebuild.AppendRequest, the incremental builder's
// share of the work).
func measureRender(ctx context.Context, c config, r *wire.Renderer, h codec.SessionHeader, evs []codec.Event, s rebuild.Step) (renderResult, error) {
	res := renderResult{wire: r.Name(), step: fmt.Sprintf("%d.%d", s.Turn, s.Step), requestBytes: len(s.Request)}
	for i := range evs {
		if evs[i].Seq >= s.Start {
			break
		}
		res.events++
	}
	msgs, err := stepMessages(s)
	if err != nil {
		return res, err
	}
	var body, asm []byte
	render := func() error {
		var err error
		body, err = r.AppendBody(body[:0], s.Request, &s.Header)
		return err
	}
	build := func() error {
		got, err := rebuild.Request(h, evs, s.Start)
		if err == nil && !bytes.Equal(got.Request, s.Request) {
			err = measuref("the rebuilt request differs")
		}
		return err
	}
	assemble := func() error {
		asm = rebuild.AppendRequest(asm[:0], &s.Header, msgs, h.ID)
		if len(asm) != len(s.Request) {
			return measuref("the assembled request differs")
		}
		return nil
	}
	if err := render(); err != nil {
		return res, err
	}
	res.bodyBytes = len(body)
	var rs, bs, as, ratio, vsAsm []float64
	for range c.rounds {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		b, rn, err := timePair(c.minTime, c.slice, build, render)
		if err != nil {
			return res, err
		}
		a, rn2, err := timePair(c.minTime, c.slice, assemble, render)
		if err != nil {
			return res, err
		}
		rs, bs, as = append(rs, rn.NsPerOp), append(bs, b.NsPerOp), append(as, a.NsPerOp)
		ratio, vsAsm = append(ratio, rn.NsPerOp/b.NsPerOp), append(vsAsm, rn2.NsPerOp/a.NsPerOp)
	}
	res.render, res.build, res.assemble = summarize(rs), summarize(bs), summarize(as)
	res.ratio, res.vsAssemble = summarize(ratio), summarize(vsAsm)
	return res, nil
}

// stepMessages splits a request's messages array into the messages'
// JSON texts, for AppendRequest.
func stepMessages(s rebuild.Step) ([][]byte, error) {
	mp, err := codec.FromJSON(nil, s.Request, codec.Limits{})
	if err != nil {
		return nil, err
	}
	r := codec.NewReader(mp)
	t, err := r.Next()
	if err != nil {
		return nil, err
	}
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			return nil, err
		}
		if string(k.Str) != "messages" {
			if err := r.Skip(1 << 10); err != nil {
				return nil, err
			}
			continue
		}
		a, err := r.Next()
		if err != nil {
			return nil, err
		}
		var out [][]byte
		for j := 0; j < a.N; j++ {
			js, err := r.AppendJSON(nil)
			if err != nil {
				return nil, err
			}
			if j >= len(s.Header.Prefix) {
				out = append(out, js)
			}
		}
		return out, nil
	}
	return nil, measuref("the request has no messages")
}

// measureStream times the translation of a generated stream of size
// bytes, fed in 32 KB reads, against decoding every event's JSON data
// alone, interleaved; and its CPU time, on a locked thread.
func measureStream(ctx context.Context, c config, name string, size int) (streamResult, error) {
	r, err := wire.Lookup(name)
	if err != nil {
		return streamResult{}, err
	}
	stream := ssegen.OpenAI(size)
	if name == wire.AnthropicMessages {
		stream = ssegen.Anthropic(size)
	}
	res := streamResult{wire: name, bytes: len(stream)}
	var chunks []wire.Chunk
	translate := func() error {
		t := r.NewTranslator()
		n := 0
		for p := stream; len(p) > 0; {
			k := min(len(p), 32<<10)
			var err error
			if chunks, err = t.Feed(chunks[:0], p[:k]); err != nil {
				return err
			}
			n += len(chunks)
			p = p[k:]
		}
		if !t.Done() {
			return measuref("the generated stream did not reach its end")
		}
		res.chunks = n
		return nil
	}
	var payloads [][]byte
	for _, line := range bytes.Split(stream, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("data: ")); ok && string(v) != "[DONE]" {
			payloads = append(payloads, v)
		}
	}
	var mp []byte
	decode := func() error {
		for _, v := range payloads {
			var err error
			if mp, err = codec.FromJSON(mp[:0], v, codec.Limits{}); err != nil {
				return err
			}
		}
		return nil
	}
	var wall, cpu, ratio []float64
	for range c.rounds {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		d, t, err := timePair(c.minTime, c.slice, decode, translate)
		if err != nil {
			return res, err
		}
		wall = append(wall, float64(len(stream))/t.NsPerOp*1e3)
		ratio = append(ratio, t.NsPerOp/d.NsPerOp)
		ct, err := cpuTime(translate, c.minTime)
		if err != nil {
			return res, err
		}
		cpu = append(cpu, float64(len(stream))/ct*1e3)
	}
	if res.chunks == 0 {
		return res, measuref("the stream translated into no chunks")
	}
	res.wallMBps, res.cpuMBps, res.ratio = summarize(wall), summarize(cpu), summarize(ratio)
	return res, nil
}

// cpuTime runs op on a locked OS thread until it has used at least min of
// that thread's CPU time and returns the CPU ns per call: a figure that
// other processes' load does not inflate.
func cpuTime(op func() error, least time.Duration) (float64, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, wall := threadCPU(), time.Now()
	n := 0
	for n == 0 || (threadCPU()-start < least && time.Since(wall) < 20*least) {
		if err := op(); err != nil {
			return 0, err
		}
		n++
	}
	used := threadCPU() - start
	if used <= 0 { // no per-thread CPU clock: the wall clock stands in
		used = time.Since(wall)
	}
	return float64(used) / float64(n), nil
}

func threadCPU() time.Duration { return cpuUsed(syscall.RUSAGE_THREAD) }

// processCPU is the CPU time logbench's process has used, every thread's.
func processCPU() time.Duration { return cpuUsed(syscall.RUSAGE_SELF) }

// cpuUsed is the user and system CPU time of who (getrusage), 0 when
// unknown.
func cpuUsed(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
