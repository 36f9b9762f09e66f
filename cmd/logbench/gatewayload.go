package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/gateway"
	"github.com/sessionlog/sessionlog/internal/ssegen"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

// Issue 20's targets for the gateway under load.
const (
	gatewayAddedP50  = 2 * time.Millisecond  // added to the first byte's p50
	gatewayAddedP99  = 10 * time.Millisecond // and to its p99
	gatewayRate      = 500                   // exchanges per second, 64 clients
	gatewayResident  = 256 << 20             // peak resident, 64 clients × 20 MB answers
	gatewayClients   = 64
	gatewayAnswerMiB = 20
)

// gatewayChildEnv, set to "UPSTREAM-URL STORE-PATH", makes logbench run
// the recording gateway over that store as logtool gateway does, and
// print its URL: the process whose resident memory the gateway load
// section measures.
const gatewayChildEnv = "LOGBENCH_GATEWAY_SERVE"

// gatewayLoad is one run of clients at once, each its own agent session
// posting 50 KB bodies with short streamed answers, straight to the
// upstream and through the gateway over a durable store.
type gatewayLoad struct {
	clients, exchanges int
	// pace is each client's mean wait between its exchanges (an agent
	// waits for its model and runs tools), drawn from pace/2 to 3/2·pace
	// so that the clients do not go in step; 0: the next at once.
	pace time.Duration
	// first-byte latencies, direct and through the gateway.
	direct, through  []time.Duration
	directRate, rate float64 // exchanges per second
	appends          []time.Duration
	commits, writes  int64 // group commits (one fdatasync each) and the appends they took
	elapsed          time.Duration
	directTook       time.Duration
	// cpu and directCPU are the process's CPU time (clients, gateway and
	// upstream alike) per exchange.
	cpu, directCPU      time.Duration
	answerBytes, bodyKB float64
}

func (l gatewayLoad) added(p float64) time.Duration {
	return percentile(l.through, p) - percentile(l.direct, p)
}

// gatewayMem is the gateway process's memory while clients stream large
// answers through it at once.
type gatewayMem struct {
	clients, mib int
	idle, peak   int64
	took         time.Duration
}

// gatewayLoadReport is the gateway section's latency, throughput and
// memory (issue 20).
type gatewayLoadReport struct {
	loads []gatewayLoad // 1 client, gatewayClients, gatewayClients paced
	// fsync is the latency of a 4 KiB write and fdatasync of a file in
	// the same directory, one writer: the disk's floor.
	fsync []time.Duration
	mem   gatewayMem
}

// timedStore is the gateway's store with the latency of each request's
// append (its chunks and wire/request: the log-first write) taken.
type timedStore struct {
	eventlog.Store
	mu sync.Mutex
	ds []time.Duration
}

func (t *timedStore) Append(ctx context.Context, session string, evs []codec.Event) error {
	start := time.Now()
	err := t.Store.Append(ctx, session, evs)
	if slices.ContainsFunc(evs, func(ev codec.Event) bool { return ev.Type == recorded.TypeRequest }) {
		d := time.Since(start)
		t.mu.Lock()
		t.ds = append(t.ds, d)
		t.mu.Unlock()
	}
	return err
}

// take returns the latencies so far and forgets them.
func (t *timedStore) take() []time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	ds := t.ds
	t.ds = nil
	return ds
}

// measureGatewayLoad measures the gateway under load: the time to the
// first answer byte and exchanges per second, straight to a local
// upstream and through an in-process gateway over a durable store (as
// logtool gateway opens it: every append fdatasynced), with 1 client and
// with gatewayClients at once; then the resident memory of a gateway
// process of its own while gatewayClients clients each stream a 20 MB
// answer through it. -quick shrinks every size.
func measureGatewayLoad(ctx context.Context, c config, work string, p progress) (*gatewayLoadReport, error) {
	r := &gatewayLoadReport{}
	type loadRun struct {
		clients, each int
		pace          time.Duration
	}
	runs := []loadRun{{1, 200, 0}, {gatewayClients, 30, 0}, {gatewayClients, 20, 250 * time.Millisecond}}
	mem := gatewayMem{clients: gatewayClients, mib: gatewayAnswerMiB}
	if c.quick {
		runs = []loadRun{{1, 4, 0}, {4, 2, 0}, {4, 2, time.Millisecond}}
		mem.clients, mem.mib = 2, 1
	}
	bodies := ssegen.ClaudeRequests(20)
	answer := []byte("event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(answer)
	}))
	defer up.Close()
	base, err := url.Parse(up.URL)
	if err != nil {
		return nil, errors.Wrap(err, "logbench: upstream URL")
	}
	path := filepath.Join(work, "gateway-load.db")
	st, err := boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	ts := &timedStore{Store: st}
	gw, err := gateway.New(gateway.Options{Store: ts, Upstreams: []gateway.Upstream{{Name: "up", URL: base}},
		LoopbackHostsOnly: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, errors.Wrap(err, "logbench: listen")
	}
	hs := &http.Server{Handler: gw, ReadHeaderTimeout: 30 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	through := "http://" + ln.Addr().String()
	for _, run := range runs {
		l := gatewayLoad{clients: run.clients, exchanges: run.clients * run.each, pace: run.pace, answerBytes: float64(len(answer))}
		for _, b := range bodies {
			l.bodyKB += float64(len(b)) / 1000 / float64(len(bodies))
		}
		cpu0 := processCPU()
		if l.direct, l.directTook, err = postLoad(ctx, up.URL, "direct", bodies, run.clients, run.each, run.pace); err != nil {
			return nil, errors.Wrap(err, "logbench: straight to the upstream")
		}
		ts.take()
		tx0, w0 := st.CommitStats()
		cpu1 := processCPU()
		if l.through, l.elapsed, err = postLoad(ctx, through, "gateway", bodies, run.clients, run.each, run.pace); err != nil {
			return nil, errors.Wrap(err, "logbench: through the gateway")
		}
		gw.Wait()
		tx1, w1 := st.CommitStats()
		cpu2 := processCPU()
		l.directCPU, l.cpu = (cpu1-cpu0)/time.Duration(l.exchanges), (cpu2-cpu1)/time.Duration(l.exchanges)
		l.commits, l.writes, l.appends = tx1-tx0, w1-w0, ts.take()
		l.directRate = float64(l.exchanges) / l.directTook.Seconds()
		l.rate = float64(l.exchanges) / l.elapsed.Seconds()
		p.printf("  %s, %d exchanges: first byte p50 %s direct, %s through the gateway; p99 %s, %s; %s and %s exchanges/s; "+
			"request appends p50 %s p99 %s; %d log commits (%s/s, %s appends each); CPU per exchange %s direct, %s through the gateway", l.name(), l.exchanges,
			dur(percentile(l.direct, 50)), dur(percentile(l.through, 50)), dur(percentile(l.direct, 99)), dur(percentile(l.through, 99)),
			num(l.directRate), num(l.rate), dur(percentile(l.appends, 50)), dur(percentile(l.appends, 99)),
			l.commits, num(float64(l.commits)/l.elapsed.Seconds()), num(float64(l.writes)/float64(max(l.commits, 1))), dur(l.directCPU), dur(l.cpu))
		r.loads = append(r.loads, l)
	}
	fsyncTime := 2 * time.Second
	if c.quick {
		fsyncTime = 100 * time.Millisecond
	}
	if r.fsync, err = fsyncLatency(ctx, work, fsyncTime); err != nil {
		return nil, err
	}
	p.printf("  a 4 KiB write and fdatasync, one writer: p50 %s, p99 %s", dur(percentile(r.fsync, 50)), dur(percentile(r.fsync, 99)))
	self, err := os.Executable()
	if err != nil {
		return nil, errors.Wrap(err, "logbench: the gateway process")
	}
	if r.mem, err = gatewayResidentMemory(ctx, self, filepath.Join(work, "gateway-mem.db"), mem); err != nil {
		return nil, errors.Wrap(err, "logbench: gateway memory")
	}
	p.printf("  %d clients each streaming a %d MiB answer: peak resident %s MiB (%s MiB idle), in %s",
		r.mem.clients, r.mem.mib, mib(float64(r.mem.peak)), mib(float64(r.mem.idle)), dur(r.mem.took))
	return r, nil
}

// name says how many clients ran and how.
func (l gatewayLoad) name() string {
	s := strconv.Itoa(l.clients) + " client"
	if l.clients > 1 {
		s += "s"
	}
	if l.pace > 0 {
		s += ", each waiting " + dur(l.pace/2) + "–" + dur(l.pace*3/2) + " between exchanges"
	}
	return s
}

// postLoad has clients post bodies to base (each client its own agent
// session, each exchange read to its end, then pace/2 to 3/2·pace
// waited), each times,
// all at once, and returns the time to each answer's first byte and the
// time it all took.
func postLoad(ctx context.Context, base, name string, bodies [][]byte, clients, each int, pace time.Duration) ([]time.Duration, time.Duration, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}}
	defer client.CloseIdleConnections()
	ds := make([][]time.Duration, clients)
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/messages", bytes.NewReader(bodies[(c+i)%len(bodies)]))
				if err != nil {
					errs <- err
					return
				}
				req.Header.Set("X-Claude-Code-Session-Id", fmt.Sprintf("logbench-%s-%d-%d", name, clients, c))
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					errs <- err
					return
				}
				one := make([]byte, 1)
				_, err = io.ReadFull(resp.Body, one)
				d := time.Since(t0)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
				}
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					errs <- measuref("status %d, %v", resp.StatusCode, err)
					return
				}
				ds[c] = append(ds[c], d)
				if pace > 0 && i < each-1 {
					time.Sleep(pace/2 + rand.N(pace))
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return nil, 0, err
	}
	var all []time.Duration
	for _, d := range ds {
		all = append(all, d...)
	}
	return all, took, nil
}

// fsyncLatency writes a 4 KiB line and fdatasyncs a file in dir, one
// writer, for d: the disk's own latency.
func fsyncLatency(ctx context.Context, dir string, d time.Duration) ([]time.Duration, error) {
	f, err := os.OpenFile(filepath.Join(dir, "fsync.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, errors.Wrap(err, "logbench: fsync baseline")
	}
	defer os.Remove(f.Name())
	defer f.Close()
	next := 0
	_, _, lat, err := baselineSlice(ctx, f, [][]byte{append(bytes.Repeat([]byte("x"), 4095), '\n')}, &next, d)
	return lat, err
}

// gatewayResidentMemory starts a gateway process over a new store at
// path, forwarding to a local upstream that streams a m.mib MiB answer,
// has m.clients clients (each its own session) fetch one each at once,
// and returns the process's resident memory: idle after one exchange,
// and its peak (VmHWM) once every answer has ended.
func gatewayResidentMemory(ctx context.Context, self, path string, m gatewayMem) (gatewayMem, error) {
	answer := ssegen.Anthropic(m.mib << 20)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for b := answer; len(b) > 0; {
			k := min(16<<10, len(b))
			if _, err := w.Write(b[:k]); err != nil {
				return
			}
			_ = rc.Flush()
			b = b[k:]
		}
	}))
	defer up.Close()
	ch, err := startChild(ctx, self, gatewayChildEnv+"="+up.URL+" "+path)
	if err != nil {
		return m, err
	}
	defer ch.stop()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: m.clients, DisableCompression: true}}
	defer client.CloseIdleConnections()
	fetch := func(c int) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, ch.url+"/v1/messages", strings.NewReader(`{"n":`+strconv.Itoa(c)+`}`))
		if err != nil {
			return err
		}
		req.Header.Set("X-Claude-Code-Session-Id", "logbench-mem-"+strconv.Itoa(c))
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if err != nil || n != int64(len(answer)) {
			return measuref("client %d: %d of %d bytes, %v", c, n, len(answer), err)
		}
		return nil
	}
	if err := fetch(-1); err != nil {
		return m, err
	}
	pid := ch.cmd.Process.Pid
	if m.idle, err = procStatus(pid, "VmRSS"); err != nil {
		return m, err
	}
	errs := make(chan error, m.clients)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range m.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fetch(c); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	m.took = time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return m, err
	}
	m.peak, err = procStatus(pid, "VmHWM")
	return m, err
}

// serveGatewayChild runs the recording gateway as logtool gateway does
// (a durable store, its soft memory limit unless GOMEMLIMIT is set, the
// default limits, loopback only, a line per exchange, here discarded)
// over the store and upstream arg names ("URL PATH"), prints its URL, and
// runs until stdin ends.
func serveGatewayChild(arg string, stdin io.Reader, stdout io.Writer) (err error) {
	upURL, path, _ := strings.Cut(arg, " ")
	up, err := gateway.ParseUpstream(upURL)
	if err != nil {
		return err
	}
	st, err := boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		return err
	}
	defer func() { err = errors.CombineErrors(err, st.Close()) }()
	if debug.SetMemoryLimit(-1) == math.MaxInt64 { // as logtool gateway
		debug.SetMemoryLimit(gateway.MemoryLimit)
	}
	gw, err := gateway.New(gateway.Options{Store: st, Upstreams: []gateway.Upstream{up}, LoopbackHostsOnly: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: gw, ReadHeaderTimeout: 30 * time.Second}
	fmt.Fprintf(stdout, "http://%s\n", ln.Addr())
	go hs.Serve(ln)
	_, _ = io.Copy(io.Discard, stdin)
	err = hs.Close()
	gw.Wait()
	return err
}

// writeGatewayLoad writes the section on the gateway under load.
func (r *report) writeGatewayLoad(b *strings.Builder) {
	g := r.gatewayLoad
	if g == nil || len(g.loads) == 0 {
		return
	}
	l := g.loads[0]
	b.WriteString("## Recording gateway under load\n\n")
	fmt.Fprintf(b, "Clients post bodies shaped like Claude Code's (`internal/ssegen`, %s KB on average), each client its own\n"+
		"agent session, and read each short streamed answer (%s bytes) to its end: straight to a local upstream\n"+
		"(\"direct\"), then through an in-process gateway built as `logtool gateway` builds it, over a durable bbolt\n"+
		"store (every append fdatasynced before it is acknowledged; the request's before it is forwarded). \"first\n"+
		"byte\" is from the request's start to its answer's first byte; \"request append\" is the gateway's log-first\n"+
		"append of a request (its new chunks and its wire/request), taken around the store's Append; \"log commits\"\n"+
		"are the store's group commits (one write-ahead log record and one fdatasync each); \"CPU per exchange\"\n"+
		"is the process's CPU time (clients, gateway and upstream alike) over the exchanges. A 4 KiB write and\n"+
		"fdatasync of a file beside the store, one writer, took p50 %s, p99 %s: the disk's floor.\n\n",
		num(l.bodyKB), num(l.answerBytes), dur(percentile(g.fsync, 50)), dur(percentile(g.fsync, 99)))
	t := newTable("clients", "exchanges", "first byte p50 direct", "p50 gateway", "p99 direct", "p99 gateway",
		"exchanges/s direct", "exchanges/s gateway", "request append p50", "request append p99", "log commits/s", "appends per commit",
		"CPU per exchange direct", "CPU per exchange gateway")
	t.align[0] = false
	for _, l := range g.loads {
		t.add(l.name(), strconv.Itoa(l.exchanges),
			dur(percentile(l.direct, 50)), dur(percentile(l.through, 50)), dur(percentile(l.direct, 99)), dur(percentile(l.through, 99)),
			num(l.directRate), num(l.rate), dur(percentile(l.appends, 50)), dur(percentile(l.appends, 99)),
			num(float64(l.commits)/l.elapsed.Seconds()), num(float64(l.writes)/float64(max(l.commits, 1))), dur(l.directCPU), dur(l.cpu))
	}
	t.write(b)
	m := g.mem
	fmt.Fprintf(b, "Memory: a gateway process of its own (logbench running it as `logtool gateway` does: a durable store,\n"+
		"its soft memory limit of %s MiB, the default limits) while %d clients, each its own session, stream a\n"+
		"%d MiB answer through it at once: peak resident (VmHWM) %s MiB, %s MiB after one exchange; all streamed\n"+
		"in %s. The targets: p50 ≤ %s and p99 ≤ %s added, ≥ %d exchanges/s with %d clients, ≤ %s MiB resident.\n\n",
		mib(gateway.MemoryLimit), m.clients, m.mib, mib(float64(m.peak)), mib(float64(m.idle)), dur(m.took),
		dur(gatewayAddedP50), dur(gatewayAddedP99), gatewayRate, gatewayClients, mib(gatewayResident))
}

// gatewayTargetRows adds the gateway's load targets to the targets table.
func (r *report) gatewayTargetRows(t *table, verdict func(bool) string, missing func(measure, target string)) {
	addedTarget := fmt.Sprintf("p50 ≤ %s, p99 ≤ %s added", dur(gatewayAddedP50), dur(gatewayAddedP99))
	rateTarget := fmt.Sprintf("≥ %d/s", gatewayRate)
	memTarget := "≤ " + mib(gatewayResident) + " MiB"
	g := r.gatewayLoad
	if g == nil || len(g.loads) < 2 {
		for _, n := range []int{1, gatewayClients} {
			missing(fmt.Sprintf("added time to the first answer byte through the gateway, %s, log-first fsync included (issue 20)", gatewayLoad{clients: n}.name()), addedTarget)
		}
		missing(fmt.Sprintf("exchanges per second through the gateway, %d clients, 50 KB bodies, short streamed answers (issue 20)", gatewayClients), rateTarget)
		missing(fmt.Sprintf("gateway resident memory, %d clients each streaming a %d MiB answer (issue 20)", gatewayClients, gatewayAnswerMiB), memTarget)
		return
	}
	for _, l := range g.loads[:2] { // the third is paced: the section shows it
		a50, a99 := l.added(50), l.added(99)
		t.add(fmt.Sprintf("added time to the first answer byte through the gateway, %s, log-first fsync included (issue 20)", l.name()),
			addedTarget, "p50 "+signed(a50)+", p99 "+signed(a99), verdict(a50 <= gatewayAddedP50 && a99 <= gatewayAddedP99))
	}
	l := g.loads[1]
	t.add(fmt.Sprintf("exchanges per second through the gateway, %d clients, %s KB bodies, short streamed answers (issue 20)", l.clients, num(l.bodyKB)),
		rateTarget, num(l.rate)+"/s", verdict(l.rate >= gatewayRate))
	t.add(fmt.Sprintf("gateway resident memory, %d clients each streaming a %d MiB answer (issue 20)", g.mem.clients, g.mem.mib),
		memTarget, mib(float64(g.mem.peak))+" MiB", verdict(g.mem.peak <= gatewayResident))
}

// signed writes a duration with its sign.
func signed(d time.Duration) string {
	if d < 0 {
		return "−" + dur(-d)
	}
	return "+" + dur(d)
}
