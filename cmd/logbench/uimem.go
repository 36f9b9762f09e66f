package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/scenario"
	"github.com/sessionlog/sessionlog/ui"
)

// uiMemLimit is the resident memory the issue allows logtool serve with
// uiMemClients clients on the worst page of a store with a 50 MB event.
const uiMemLimit = 512 << 20

// uiMemClients is the number of concurrent clients.
const uiMemClients = 20

// uiChildEnv, set to a store's path, makes logbench serve that store's
// audit UI as logtool serve does, and print its URL: the process whose
// resident memory the UI memory section measures.
const uiChildEnv = "LOGBENCH_UI_SERVE"

// uiMemResult is one page served to uiMemClients clients at once.
type uiMemResult struct {
	page, target string
	// idle is the server's resident memory after one request of the page;
	// peak its high-water mark (VmHWM) once every client is served.
	idle, peak int64
	// busy counts the 429 answers the clients waited out.
	busy int64
	took time.Duration
}

// uiMemReport is the UI memory section.
type uiMemReport struct {
	event   int // bytes of the big event's text
	clients int
	fetches int // per client
	pages   []uiMemResult
}

// measureUIMemory writes a store with one session whose tool returns a
// text of 50 MB (1 MB with -quick), then for each page that reads it
// starts a server process over the store (logbench itself, serving as
// logtool serve does: ui.New with the wire renderers and the default
// limits, ui.HTTPServer on a loopback port), asks for the page once, and
// has uiMemClients clients fetch it at once, each reading every answer
// to its end and waiting out a 429 as its Retry-After says, until each
// has had it twice. The figure is the server's peak resident set
// (VmHWM of /proc/PID/status): everything it held, the mapped store
// included.
func measureUIMemory(ctx context.Context, c config, work string, p progress) (*uiMemReport, error) {
	r := &uiMemReport{event: 50 << 20, clients: uiMemClients, fetches: 2}
	if c.quick {
		r.event, r.clients, r.fetches = 1<<20, 3, 1
	}
	path := filepath.Join(work, "ui-big.db")
	seq, err := writeBigSession(ctx, path, r.event)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, errors.Wrap(err, "logbench: the server process")
	}
	id := "/s/big"
	pages := []struct{ name, target string }{
		{"timeline with the event", id + "?from=" + strconv.FormatInt(max(seq-5, 0), 10)},
		{"the event's raw JSON", id + "/event/" + strconv.FormatInt(seq, 10)},
		{"API events page with the event", "/api/sessions/big/events?from=" + strconv.FormatInt(seq, 10)},
		{"step after the event", id + "/step/1.2"},
		{"API step after the event", "/api/sessions/big/steps/1.2"},
		{"request.json of that step", id + "/step/1.2/request.json"},
		{"its openai-chat body", id + "/step/1.2/wire/openai-chat"},
		{"diff across the event", id + "/diff?a=1.1&b=1.2"},
		{"cache chart", id + "/cache"},
		{"verify", id + "/verify"},
	}
	for _, pg := range pages {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res, err := serveMeasured(ctx, self, path, pg.target, r.clients, r.fetches)
		if err != nil {
			return nil, errors.Wrapf(err, "logbench: %s", errors.Safe(pg.name))
		}
		res.page, res.target = pg.name, pg.target
		p.printf("  %s: peak resident %s MiB (%s MiB after one request), %d clients served in %s, %d answers 429",
			pg.name, mib(float64(res.peak)), mib(float64(res.idle)), r.clients, dur(res.took), res.busy)
		r.pages = append(r.pages, res)
	}
	return r, nil
}

// writeBigSession writes session "big" to a new store at path: a tool
// call whose result is a text of size bytes (random letters, which do
// not compress), then a text answer and one more turn, so that step 1.2
// and every later one carry the text. It returns the seq of the result.
func writeBigSession(ctx context.Context, path string, size int) (int64, error) {
	rng := rand.New(rand.NewPCG(19, 10))
	text := make([]byte, size)
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \n\"é"
	for i := range text {
		text[i] = letters[rng.IntN(len(letters)-1)] // é's first byte alone is not text: leave it out
	}
	q, err := json.Marshal(string(text))
	if err != nil {
		return 0, err
	}
	js := `{"system":"Be brief.","tools":[{"name":"cat","description":"Print a file.","parameters":{"type":"object"}}],"turns":[
  {"prompt":"print the log","replies":[[{"type":"tool-call","id":"c1","name":"cat","arguments":"{}"}],[{"type":"text","text":"done"}]],
   "toolResults":{"c1":{"content":[{"type":"text","text":` + string(q) + `}]}}},
  {"prompt":"and now?","replies":[[{"type":"text","text":"nothing"}]]}]}`
	sc, err := scenario.Parse([]byte(js))
	if err != nil {
		return 0, errors.Wrap(err, "logbench: the big session")
	}
	st, err := boltlog.Open(path, &eventlog.Options{NoSync: true, NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		return 0, err
	}
	now := 1767225600000.0
	if _, err := scenario.Run(ctx, st, sc, scenario.Options{Session: "big", Now: func() float64 { now += 1000; return now }}); err != nil {
		st.Close()
		return 0, errors.Wrap(err, "logbench: the big session")
	}
	seq, err := resultSeq(ctx, st)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	if seq < 0 {
		return 0, measuref("the big session has no tool result")
	}
	return seq, nil
}

// resultSeq returns the seq of the big session's tool/result, -1 for none.
func resultSeq(ctx context.Context, st *boltlog.Log) (int64, error) {
	it, err := st.Scan(ctx, "big", 0)
	if err != nil {
		return -1, err
	}
	defer it.Close()
	seq := int64(-1)
	for {
		ev, err := it.Next()
		if err == io.EOF {
			return seq, nil
		}
		if err != nil {
			return -1, err
		}
		if ev.Type == codec.TypeToolResult {
			seq = ev.Seq
		}
	}
}

// serveMeasured starts a server process over the store at path, has
// clients fetch target fetches times each, all at once, and returns the
// server's resident memory.
func serveMeasured(ctx context.Context, self, path, target string, clients, fetches int) (uiMemResult, error) {
	var res uiMemResult
	ch, err := startChild(ctx, self, uiChildEnv+"="+path)
	if err != nil {
		return res, err
	}
	defer ch.stop()
	base := ch.url
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	get := func() (int, time.Duration, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+target, nil)
		if err != nil {
			return 0, 0, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, 0, err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return 0, 0, err
		}
		wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return resp.StatusCode, time.Duration(wait) * time.Second, nil
	}
	if code, _, err := get(); err != nil || code != http.StatusOK {
		return res, measuref("GET %s = %d, %v", target, code, err)
	}
	pid := ch.cmd.Process.Pid
	if res.idle, err = procStatus(pid, "VmRSS"); err != nil {
		return res, err
	}
	var busy atomic.Int64
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for got := 0; got < fetches; {
				code, wait, err := get()
				switch {
				case err != nil:
					errs <- err
					return
				case code == http.StatusTooManyRequests:
					busy.Add(1)
					select {
					case <-time.After(wait):
					case <-ctx.Done():
						errs <- ctx.Err()
						return
					}
				case code != http.StatusOK:
					errs <- measuref("GET %s = %d", target, code)
					return
				default:
					got++
				}
			}
		}()
	}
	wg.Wait()
	res.took = time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return res, err
	}
	res.busy = busy.Load()
	res.peak, err = procStatus(pid, "VmHWM")
	return res, err
}

// child is a server process of logbench's own (the UI's, the gateway's),
// started with the environment variable that makes it one: it prints its
// URL on stdout and runs until its stdin ends.
type child struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	url    string
	cancel context.CancelFunc
}

// startChild starts self as a server process with env (NAME=VALUE) added
// to its environment, and reads its URL.
func startChild(ctx context.Context, self string, env ...string) (*child, error) {
	cctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(cctx, self)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, errors.Wrap(err, "start the server")
	}
	ch := &child{cmd: cmd, in: in, cancel: cancel}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		ch.stop()
		return nil, errors.Wrap(err, "the server's URL")
	}
	ch.url = strings.TrimSpace(line)
	return ch, nil
}

// stop ends the server (it ends when its stdin does) and waits for it.
func (c *child) stop() {
	c.in.Close()
	c.cmd.Wait()
	c.cancel()
}

// serveChild runs logbench as one of its measured server processes when
// the environment names one, and reports whether it did.
func serveChild(stdin io.Reader, stdout io.Writer) (bool, error) {
	if path := os.Getenv(uiChildEnv); path != "" {
		return true, serveUIChild(path, stdin, stdout)
	}
	if v := os.Getenv(gatewayChildEnv); v != "" {
		return true, serveGatewayChild(v, stdin, stdout)
	}
	return false, nil
}

// procStatus reads a memory field of /proc/PID/status, in bytes.
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, errors.Wrap(err, "logbench: resident memory (Linux only)")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, measuref("no %s in /proc/%d/status", errors.Safe(field), pid)
}

// serveUIChild serves the audit UI over the store at path as logtool
// serve does, prints its URL, and runs until stdin ends.
func serveUIChild(path string, stdin io.Reader, stdout io.Writer) error {
	st, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	srv, err := ui.New(st, &ui.Options{Renderers: ui.WireRenderers()})
	if err != nil {
		return err
	}
	if debug.SetMemoryLimit(-1) == math.MaxInt64 { // as logtool serve
		debug.SetMemoryLimit(ui.MemoryLimit)
	}
	hs := ui.HTTPServer(srv)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "http://%s\n", ln.Addr())
	go hs.Serve(ln)
	io.Copy(io.Discard, stdin)
	return hs.Close()
}

// worst is the page with the highest peak.
func (u *uiMemReport) worst() uiMemResult {
	w := u.pages[0]
	for _, pg := range u.pages {
		if pg.peak > w.peak {
			w = pg
		}
	}
	return w
}

// writeUIMemory writes the UI memory section.
func (r *report) writeUIMemory(b *strings.Builder) {
	u := r.uiMem
	if u == nil || len(u.pages) == 0 {
		return
	}
	b.WriteString("## Audit UI memory\n\n")
	fmt.Fprintf(b, "`logtool serve` over a store whose one session has a tool result of %s MiB (random letters: it does\n"+
		"not compress), as a separate process (logbench serving as `logtool serve` does: the wire renderers, the\n"+
		"default limits, `ui.HTTPServer` on a loopback port). For each page a new server is started and asked for\n"+
		"the page once (it then holds the session's overview, as while a person browses); then %d clients ask for it\n"+
		"at once, each reading every answer to its end and waiting out a 429 for its Retry-After, until each has had\n"+
		"it %d times. \"peak resident\" is the server's VmHWM (`/proc/PID/status`) at the end: the most memory it\n"+
		"held, its mapped store included. The issue asks for under %s MiB on the worst page.\n\n",
		mib(float64(u.event)), u.clients, u.fetches, mib(uiMemLimit))
	t := newTable("page", "peak resident", "after one request", "all served in", "429 answers", "under "+mib(uiMemLimit)+" MiB")
	for _, pg := range u.pages {
		under := "yes"
		if pg.peak >= uiMemLimit {
			under = "**no**"
		}
		t.add(pg.page, mib(float64(pg.peak))+" MiB", mib(float64(pg.idle))+" MiB", dur(pg.took), strconv.FormatInt(pg.busy, 10), under)
	}
	t.write(b)
}
