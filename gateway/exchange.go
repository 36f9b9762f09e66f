package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"hash"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/transcript"
	"github.com/sessionlog/sessionlog/wire/chunk"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

// exchange is one recorded request and its answer: the place where the
// events of both are built, the wire events and, in a lane, the mapped
// events of docs/gateway.md#what-is-recorded (appended with the wire/request and with the
// wire/response).
type exchange struct {
	api, method, path string
	// body is what the client sent and the upstream is sent; rec what is
	// recorded of it: body itself, or with Options.Redactor's spans
	// replaced (redacted counts them, path's and headers' included).
	body, rec []byte
	redacted  int
	start     time.Time
	// req is the body parsed (for a mapped API), parseErr why it could
	// not be.
	req      *transcript.Request
	parseErr error

	// sess is nil for an exchange forwarded unrecorded (fail-open).
	sess *session
	// seq is the wire/request's seq, n the exchange's number in its
	// session (from 1).
	seq int64
	n   int
	// mapped: the request's mapped events were stored; step is the step
	// it began ("T.S"), brk what it changed for the prompt cache, and
	// cacheRead the cache reads its answer reported (-1: none known).
	mapped    bool
	step      string
	brk       string
	cacheRead int64
}

var errTooLarge = errors.New("gateway: body too large")

// bodyPrealloc bounds the room readBody takes ahead of a body's bytes: a
// client's Content-Length is a claim, and one that claims the limit and
// sends nothing must not hold the limit's memory per connection.
const bodyPrealloc = 1 << 20

// readBody reads a request body of at most limit bytes.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	size := 0
	if r.ContentLength > 0 {
		size = int(min(r.ContentLength, bodyPrealloc))
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+1))
	n, err := buf.ReadFrom(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, errTooLarge
	}
	return buf.Bytes(), nil
}

// logRequest appends the request's new chunks and its wire/request to its
// session, and returns once the store has acknowledged them (docs/gateway.md#running-it,
// log first). Any failure is the sticky one.
func (g *Gateway) logRequest(r *http.Request, up *Upstream, x *exchange) error {
	if err := g.Failed(); err != nil {
		return err
	}
	g.redact(x)
	x.parse()
	agent, from := g.agentID(r.Header, x)
	s, err := g.session(up, agent, from, x.api, x.root())
	if err != nil {
		g.fail(err)
		return err
	}
	if err := g.appendRequest(s, r, x); err != nil {
		g.release(s)
		return err
	}
	return nil
}

// appendRequest is logRequest's append to session s.
func (g *Gateway) appendRequest(s *session, r *http.Request, x *exchange) error {
	parts := chunk.Split(x.rec)
	q := recorded.Request{API: x.api, Method: x.method, Path: x.path, Headers: g.reqAllow.recordHeaders(r.Header),
		Size: int64(len(x.body)), Digest: recorded.Sum(x.body)}
	if g.opts.Redactor != nil {
		for i, f := range q.Headers {
			v, n := g.opts.Redactor.Text([]byte(f.Value))
			q.Headers[i].Value = string(v)
			x.redacted += n
		}
	}
	if x.redacted > 0 {
		q.Redacted = &recorded.Redaction{Spans: int64(x.redacted), Size: int64(len(x.rec)), Digest: recorded.Sum(x.rec)}
		g.stats.redacted.Add(int64(x.redacted))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx := context.Background() // a client that leaves does not cancel its record
	if err := s.load(ctx, g); err != nil {
		g.storeFailed(err)
		return err
	}
	now := g.millis()
	seq := s.next
	evs := make([]codec.Event, 0, len(parts)+1)
	added := map[recorded.Digest]int64{}
	var o codec.Object
	for _, p := range parts {
		d := recorded.Sum(p)
		at, ok := s.have[d]
		if !ok {
			at, ok = added[d]
		}
		if !ok {
			o.Reset()
			recorded.AppendChunk(&o, d, p)
			ev, err := codec.NewEvent(recorded.TypeChunk, seq, now, o.Bytes(), codec.SurfaceOp{}, nil)
			if err != nil {
				g.fail(err)
				return err
			}
			evs = append(evs, ev)
			at, added[d] = seq, seq
			seq++
		}
		q.Chunks = recorded.AppendRun(q.Chunks, at)
	}
	o.Reset()
	q.AppendData(&o)
	ev, err := codec.NewEvent(recorded.TypeRequest, seq, now, o.Bytes(), codec.SurfaceOp{}, nil)
	if err != nil {
		g.fail(err)
		return err
	}
	evs = append(evs, ev)
	x.cacheRead = -1
	mapped := g.mapRequest(s, x, seq, now)
	err = s.appendEvents(ctx, g.opts.Store, append(evs, mapped...))
	if err != nil && len(mapped) > 0 && errors.Is(err, codec.ErrInvalid) {
		// The store refused the mapping (a refusal changes nothing):
		// record the bytes alone, and read the lane back at its next use.
		g.stats.unmapped.Add(1)
		g.log.Warn("the store refused a request's mapped events; its bytes are recorded alone", "session", s.id, "err", err.Error())
		x.mapped, x.step, x.brk = false, "", ""
		if err = s.appendEvents(ctx, g.opts.Store, evs); err == nil {
			s.loaded = false
		}
	}
	if err != nil {
		g.storeFailed(err)
		return err
	}
	maps.Copy(s.have, added)
	s.n++
	x.sess, x.seq, x.n = s, seq, s.n
	return nil
}

// storeFailed makes a store's failure sticky, except a conflict: another
// writer appended to the session (a shared PostgreSQL store), and the
// session is read again at its next use.
func (g *Gateway) storeFailed(err error) {
	if !errors.Is(err, eventlog.ErrConflict) {
		g.fail(err)
	}
}

// The causes of an upstream context's cancellation.
var (
	errShutdown = errors.New("gateway: shutting down")
	errIdle     = errors.New("gateway: the upstream sent nothing for too long")
	errClient   = errors.New("gateway: the client went away")
)

// clientDrain is how long an answer is read on after its client went
// away: a client that hangs up once it has what it needs (Codex closes
// the connection at response.completed, before the body's end reaches the
// gateway) leaves an answer that is whole, and is recorded whole; an
// answer still streaming past it is cancelled and recorded cut "client".
const clientDrain = 2 * time.Second

// bufPool holds the copy buffers of answers.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// forward sends the request upstream and streams the answer back,
// recording it when x is a recorded exchange (x.sess set). body is x's
// body when it was read, else the request's body streams through.
func (g *Gateway) forward(w http.ResponseWriter, r *http.Request, up *Upstream, path string, x *exchange) {
	// The upstream's context outlives the client's by clientDrain: see
	// there. drain starts that grace once (the client's context ended, or
	// a write to it failed).
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	defer cancel(nil)
	stopWatch := context.AfterFunc(g.stop, func() { cancel(errShutdown) })
	defer stopWatch()
	var drainOnce sync.Once
	drain := func() {
		drainOnce.Do(func() { time.AfterFunc(clientDrain, func() { cancel(errClient) }) })
	}
	clientWatch := context.AfterFunc(r.Context(), drain)
	defer clientWatch()
	timer := time.AfterFunc(g.opts.FirstByteTimeout, func() { cancel(errIdle) })
	defer timer.Stop()

	var body io.Reader = r.Body
	size := r.ContentLength
	if x != nil {
		body, size = bytes.NewReader(x.body), int64(len(x.body))
	}
	out, err := http.NewRequestWithContext(ctx, r.Method, upstreamURL(up, path, r.URL.RawQuery), body)
	if err != nil {
		g.refuse(w, http.StatusBadGateway, "gateway: the upstream URL could not be built")
		return
	}
	out.ContentLength = size // -1: unknown, streamed
	if size == 0 {
		out.Body = http.NoBody
	}
	copyHeader(out.Header, r.Header)
	out.Header.Set("Accept-Encoding", "identity")
	if _, ok := out.Header["User-Agent"]; !ok {
		out.Header["User-Agent"] = nil // Go would add its own
	}
	var rec *answer
	if x != nil && x.sess != nil {
		rec = &answer{g: g, x: x, h: sha256.New()}
	}
	streamed := func(h http.Header) bool { return strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") }
	resp, err := g.transport.RoundTrip(out)
	if err != nil {
		cut := g.cause(ctx, r, false)
		if rec != nil {
			rec.finish(recorded.Response{Status: 0, Cut: cut})
		}
		g.stats.cut.Add(1)
		switch cut {
		case recorded.CutClient:
		case recorded.CutTimeout:
			g.refuse(w, http.StatusGatewayTimeout, "gateway: the upstream did not answer in time")
		case recorded.CutShutdown:
			g.refuse(w, http.StatusServiceUnavailable, "gateway: shutting down")
		default:
			g.refuse(w, http.StatusBadGateway, "gateway: the upstream could not be reached")
		}
		g.status(x, 0, 0, cut)
		return
	}
	defer resp.Body.Close()
	timer.Reset(g.opts.IdleTimeout)
	if rec != nil && x.mapped {
		rec.ma = transcript.NewAnswer(x.api, resp.StatusCode, streamed(resp.Header))
	}

	hdr := w.Header()
	copyHeader(hdr, resp.Header)
	for _, k := range []string{"Date", "Content-Type"} {
		if _, ok := resp.Header[k]; !ok {
			hdr[k] = nil // Go's server would add its own
		}
	}
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	_ = rc.Flush()

	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	clientGone := false
	var cut string
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			timer.Reset(g.opts.IdleTimeout)
			if rec != nil {
				rec.write(buf[:n])
			}
			if !clientGone {
				if _, werr := w.Write(buf[:n]); werr != nil {
					clientGone = true
				} else if ferr := rc.Flush(); ferr != nil {
					clientGone = true
				}
				if clientGone {
					drain()
				}
			}
		}
		if rerr == io.EOF {
			break // the answer is whole, whether its client read it all or not
		}
		if rerr != nil {
			cut = g.cause(ctx, r, clientGone)
			break
		}
	}
	if rec != nil {
		rec.finish(recorded.Response{Status: resp.StatusCode, Headers: g.respAllow.recordHeaders(resp.Header),
			Body: true, Streamed: streamed(resp.Header), Cut: cut})
	}
	var got int64
	if rec != nil {
		got = rec.size
	}
	g.status(x, resp.StatusCode, got, cut)
	if cut != "" {
		g.stats.cut.Add(1)
		if cut != recorded.CutClient {
			// The client must see the cut: end the connection without
			// ending the body.
			panic(http.ErrAbortHandler)
		}
	}
}

// cause names why an upstream exchange ended early.
func (g *Gateway) cause(ctx context.Context, r *http.Request, clientGone bool) string {
	switch c := context.Cause(ctx); {
	case errors.Is(c, errShutdown) || g.stop.Err() != nil:
		return recorded.CutShutdown
	case errors.Is(c, errIdle):
		return recorded.CutTimeout
	case clientGone || errors.Is(c, errClient) || r.Context().Err() != nil:
		return recorded.CutClient
	}
	return recorded.CutUpstream
}

// upstreamURL is the URL a request goes to: the upstream's base, the
// request's path and query.
func upstreamURL(up *Upstream, path, rawQuery string) string {
	u := *up.URL
	base := u.EscapedPath()
	u.Path, u.RawPath = "", ""
	s := u.String() + base + path
	if rawQuery != "" {
		s += "?" + rawQuery
	}
	return s
}

// status logs an exchange's line: its session, number and step, api,
// sizes, status, the prompt cache's break and the cache reads reported
// (once known), cut and duration; never content.
func (g *Gateway) status(x *exchange, status int, answer int64, cut string) {
	if x == nil {
		return
	}
	args := []any{"api", x.api, "status", status, "request", len(x.body), "response", answer}
	if x.redacted > 0 {
		args = append(args, "redacted", x.redacted)
	}
	if x.sess != nil {
		head := []any{"session", x.sess.id, "exchange", x.n}
		if x.step != "" {
			head = append(head, "step", x.step)
		}
		args = append(head, args...)
		if x.brk != "" {
			args = append(args, "break", x.brk)
		}
		if x.cacheRead >= 0 {
			args = append(args, "cacheRead", x.cacheRead)
		}
	} else {
		args = append(args, "recorded", false)
	}
	if cut != "" {
		args = append(args, "cut", cut)
	}
	args = append(args, "ms", g.now().Sub(x.start).Milliseconds())
	g.log.Info("exchange", args...)
}

// answer records an answer as it streams: it appends each piece of
// chunk.PieceMax bytes as soon as it is whole (the rest with the
// wire/response), and keeps only the runs that name them and a running
// SHA-256, never the answer.
type answer struct {
	g    *Gateway
	x    *exchange
	tail []byte // bytes not appended yet
	runs []recorded.Run
	h    hash.Hash
	size int64
	// err stops the recording (the store failed); forwarding goes on.
	err error
	// ma reads the answer for the mapping (nil: the request was not
	// mapped).
	ma *transcript.Answer
}

// write takes the next bytes of the answer.
func (a *answer) write(p []byte) {
	a.h.Write(p)
	a.size += int64(len(p))
	if a.err != nil {
		return
	}
	if a.ma != nil {
		a.ma.Feed(p)
	}
	a.tail = append(a.tail, p...)
	off := 0
	for len(a.tail)-off > chunk.PieceMax {
		n := chunk.Piece(a.tail[off:])
		a.flush(a.tail[off:off+n], nil)
		off += n
	}
	a.tail = append(a.tail[:0], a.tail[off:]...)
}

// flush appends the piece c (when not empty) unless the session holds it
// already, and resp (when not nil) after it.
func (a *answer) flush(c []byte, resp *recorded.Response) {
	s := a.x.sess
	s.mu.Lock()
	defer s.mu.Unlock()
	err := a.err
	if err == nil {
		err = a.g.Failed()
	}
	if err == nil {
		err = s.load(context.Background(), a.g)
	}
	if err != nil {
		a.g.storeFailed(err)
		a.err = err
		return
	}
	now := a.g.millis()
	seq := s.next
	var evs []codec.Event
	var o codec.Object
	build := func(typ string, data []byte) bool {
		ev, err := codec.NewEvent(typ, seq, now, data, codec.SurfaceOp{}, nil)
		if err != nil {
			a.err = err
			return false
		}
		evs = append(evs, ev)
		seq++
		return true
	}
	var d recorded.Digest
	at, held := int64(0), true
	if len(c) > 0 {
		d = recorded.Sum(c)
		if at, held = s.have[d]; !held {
			at = seq
			o.Reset()
			recorded.AppendChunk(&o, d, c)
			build(recorded.TypeChunk, o.Bytes())
		}
		a.runs = recorded.AppendRun(a.runs, at)
	}
	var mapped []codec.Event
	if resp != nil && a.err == nil {
		if resp.Body {
			resp.Chunks = a.runs
		}
		o.Reset()
		resp.AppendData(&o)
		if build(recorded.TypeResponse, o.Bytes()) {
			mapped = a.mapAnswer(resp, seq, now)
		}
	}
	if a.err == nil {
		a.err = s.appendEvents(context.Background(), a.g.opts.Store, append(evs, mapped...))
		if a.err != nil && len(mapped) > 0 && errors.Is(a.err, codec.ErrInvalid) {
			a.g.stats.unmapped.Add(1)
			a.g.log.Warn("the store refused an answer's mapped events; its bytes are recorded alone", "session", s.id, "err", a.err.Error())
			a.x.cacheRead = -1
			if a.err = s.appendEvents(context.Background(), a.g.opts.Store, evs); a.err == nil {
				s.loaded = false
			}
		}
	}
	if a.err != nil {
		a.g.storeFailed(a.err)
		a.g.log.Error("an answer could not be recorded; it was forwarded whole", "session", s.id, "exchange", a.x.n)
		return
	}
	if !held {
		s.have[d] = at
	}
}

// finish appends the rest of the answer with its wire/response, whose
// Request, Chunks, Size and Digest it fills.
func (a *answer) finish(resp recorded.Response) {
	resp.Request = a.x.seq
	if a.x.mapped && a.ma == nil {
		a.ma = transcript.NewAnswer(a.x.api, resp.Status, resp.Streamed)
	}
	if resp.Body {
		resp.Size, resp.Digest = a.size, recorded.Digest(a.h.Sum(nil))
	} else {
		resp.Digest = recorded.Sum(nil)
	}
	var rest []byte
	if a.err == nil {
		rest = a.tail // at most chunk.PieceMax bytes: write cut the rest
	}
	a.tail = nil
	a.flush(rest, &resp)
}
