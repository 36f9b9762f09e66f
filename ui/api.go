package ui

import (
	"bufio"
	"encoding/hex"
	"net/http"
	"net/url"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/codec"
)

// jsonString is s as a JSON string, by the one JSON text encoder.
func jsonString(s string) []byte { return codec.AppendJSONString(nil, []byte(s)) }

// jsonWriter streams one JSON answer.
type jsonWriter struct {
	*bufio.Writer
	b []byte
}

func newJSON(w http.ResponseWriter) *jsonWriter {
	w.Header().Set("Content-Type", "application/json")
	return &jsonWriter{Writer: bufio.NewWriterSize(w, 32<<10)}
}

func (j *jsonWriter) raw(s string)  { j.WriteString(s) }
func (j *jsonWriter) str(s string)  { j.Write(codec.AppendJSONString(j.b[:0], []byte(s))) }
func (j *jsonWriter) int(n int64)   { j.Write(codec.AppendJSONInt(j.b[:0], n)) }
func (j *jsonWriter) num(f float64) { j.Write(codec.AppendJSONNumber(j.b[:0], f)) }
func (j *jsonWriter) end() error    { j.WriteString("\n"); return j.Flush() }

// apiDoc documents the API; GET /api/ serves it.
const apiDoc = `sessionlog audit API: read-only JSON, one object per answer (UTF-8, JSON.stringify text rules).
Errors are {"error":MESSAGE} with status 400 (bad parameter), 404 (no such session or step), 429 (busy: retry
after Retry-After seconds) or 500. A session id is one path segment, escaped; an id that is . or .. or starts
with ~ is written with a ~ before it. from past the end, or a limit out of its range, is a 400.

GET /api/sessions?q=TEXT&sort=KEY
    [{"id","events","turns","lastActivity","parent"?,"seedLength"?,"forks"}], filtered by q (a substring
    of id or parent), sorted by KEY: id (default), parent, events, turns, last; "-KEY" reverses.
GET /api/sessions/{id}
    {"id","createdAt","events","turns","lastActivity","parent"?,"seedLength"?,"forks":[ID],"steps":N,
     "headers":[{"seq","type","reason"}],"compactions":[{"seq","type","start","end"}]}
GET /api/sessions/{id}/events?from=SEQ&limit=N
    {"events":[EVENT…],"next":SEQ|null}: canonical event JSON, as logtool export writes it; limit is 1 to 1000,
    by default the UI's page (200); next is where the following page starts. A page ends early once it holds
    about a MiB; an event over that is alone on its page. GET /s/{id}/event/{seq} downloads one event.
GET /api/sessions/{id}/steps?from=I&limit=N
    {"steps":[{"turn","step","stepStartSeq","digest","recorded":[{"seq","sha256","match"}]}],"total":N}:
    the steps in log order from index I (limit 1 to 10000, default 1000); digest null when the step has no
    request.
GET /api/sessions/{id}/steps/{T.S}
    {"turn","step","stepStartSeq","digest","recorded":[…],"headerSeq","same","imported"?,"bodies":[{"wire",
    "body"|"error"}],"request"}: request is the exact canonical request (null when none), same counts its leading
    messages shared with the previous request; imported, for a session imported from an agent's transcript
    (docs/transcripts.md), is {"format","missing":[TEXT…],"recorded":[ID…]}: the request is reconstructed from the
    transcript, which does not record what missing lists, and recorded names the sessions the gateway recorded of
    the same agent session; each body is a wire renderer's exact body as a JSON string (docs/wire.md); a body
    over 64 KiB is {"wire","bytes","url"} instead, url downloading it (of a request over 8 MiB, {"wire","url"}:
    the bodies are rendered only when downloaded). GET /s/{id}/step/{T.S}/request.json
    downloads the request bytes alone, …/message/{i} one message of it.
GET /api/sessions/{id}/cache?from=I&limit=N
    {"rows":[ROW…],"total":TOTAL}: ROW and TOTAL are the lines of logtool cache --json, for steps I..I+N-1
    (limit 1 to 500, default 100) and their totals.
GET /api/sessions/{id}/diff?a=T.S&b=T.S
    the object logtool diff --json prints.
GET /api/sessions/{id}/verify?strict=1
    {"session","events","steps","digests","inherited","failed","findings":[{"seq","kind","warning","message"}]}
`

func (s *Server) apiIndex(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, err := w.Write([]byte(apiDoc))
	return err
}

func (s *Server) apiSessions(w http.ResponseWriter, r *http.Request) error {
	rows, _, _, err := s.sessions(r)
	if err != nil {
		return err
	}
	j := newJSON(w)
	j.raw("[")
	for i, row := range rows {
		if i > 0 {
			j.raw(",")
		}
		j.raw(`{"id":`)
		j.str(row.ID)
		j.raw(`,"events":`)
		j.int(row.Events)
		j.raw(`,"turns":`)
		j.int(row.Turns)
		j.raw(`,"lastActivity":`)
		j.num(row.Last)
		if row.Parent != "" {
			j.raw(`,"parent":`)
			j.str(row.Parent)
			j.raw(`,"seedLength":`)
			j.int(row.SeedLength)
		}
		j.raw(`,"forks":`)
		j.int(int64(row.Children))
		j.raw("}")
	}
	j.raw("]")
	return j.end()
}

func (s *Server) apiSession(w http.ResponseWriter, r *http.Request) error {
	h, err := s.head(r)
	if err != nil {
		return err
	}
	o, err := s.overview(r.Context(), h)
	if err != nil {
		return err
	}
	kids, _, err := s.children(r, h.Header.ID)
	if err != nil {
		return err
	}
	j := newJSON(w)
	j.raw(`{"id":`)
	j.str(h.Header.ID)
	j.raw(`,"createdAt":`)
	j.num(h.Header.CreatedAt)
	j.raw(`,"events":`)
	j.int(h.Next)
	j.raw(`,"turns":`)
	j.int(h.Turns)
	j.raw(`,"lastActivity":`)
	j.num(h.LastTime)
	if p := h.Header.ParentSession; p != "" {
		j.raw(`,"parent":`)
		j.str(p)
		j.raw(`,"seedLength":`)
		j.int(h.Header.SeedLength)
	}
	j.raw(`,"forks":[`)
	for i, k := range kids {
		if i > 0 {
			j.raw(",")
		}
		j.str(k)
	}
	j.raw(`],"steps":`)
	j.int(int64(len(o.Steps)))
	j.raw(`,"headers":[`)
	for i, m := range o.Headers {
		if i > 0 {
			j.raw(",")
		}
		j.raw(`{"seq":`)
		j.int(m.Seq)
		j.raw(`,"type":`)
		j.str(m.Kind)
		j.raw(`,"reason":`)
		j.str(m.Reason)
		j.raw("}")
	}
	j.raw(`],"compactions":[`)
	for i, m := range o.Compactions {
		if i > 0 {
			j.raw(",")
		}
		j.raw(`{"seq":`)
		j.int(m.Seq)
		j.raw(`,"type":`)
		j.str(m.Kind)
		j.raw(`,"start":`)
		j.int(m.Start)
		j.raw(`,"end":`)
		j.int(m.End)
		j.raw("}")
	}
	j.raw("]}")
	return j.end()
}

// pageBytes bounds the events one API events page holds in memory: a
// page ends early, with next, after the event that reaches it; an event
// alone over it is its page's only event, streamed from its image.
const pageBytes = 1 << 20

func (s *Server) apiEvents(w http.ResponseWriter, r *http.Request) error {
	h, err := s.head(r)
	if err != nil {
		return err
	}
	from, limit, err := window(r, h.Next, int64(s.opts.EventsPage), MaxEvents)
	if err != nil {
		return err
	}
	to := from + min(limit, h.Next-from) - 1
	// Read the page before answering, so that a damaged record is an
	// error status, not a torn answer; a page holds at most limit
	// events and about pageBytes of them.
	var evs [][]byte
	var big []byte // the image of a lone event over pageBytes
	size, next := 0, to+1
	err = audit.Scan(r.Context(), s.st, h.Header.ID, from, to, func(ev *codec.Event) error {
		if len(ev.Raw) > pageBytes && len(evs) == 0 {
			if err := streamJSON(nopWriter{}, ev.Raw); err != nil {
				return err
			}
			big, next = ev.Raw, ev.Seq+1
			return audit.ErrStop
		}
		if size > 0 && size+len(ev.Raw) > pageBytes {
			next = ev.Seq
			return audit.ErrStop
		}
		b, err := ev.AppendJSON(nil)
		evs = append(evs, b)
		size += len(b)
		return err
	})
	if err != nil && !errors.Is(err, audit.ErrStop) {
		return err
	}
	j := newJSON(w)
	j.raw(`{"events":[`)
	for i, b := range evs {
		if i > 0 {
			j.raw(",")
		}
		j.Write(b)
	}
	if big != nil {
		streamJSON(j, big) // checked above
	}
	j.raw(`],"next":`)
	if next < h.Next {
		j.int(next)
	} else {
		j.raw("null")
	}
	j.raw("}")
	return j.end()
}

func (j *jsonWriter) recorded(info audit.StepInfo) {
	digest := hex.EncodeToString(info.Digest[:])
	j.raw(`"recorded":[`)
	for i, rec := range info.Recorded {
		if i > 0 {
			j.raw(",")
		}
		j.raw(`{"seq":`)
		j.int(rec.Seq)
		j.raw(`,"sha256":`)
		j.str(rec.SHA256)
		j.raw(`,"match":`)
		if !info.Null && rec.SHA256 == digest {
			j.raw("true}")
		} else {
			j.raw("false}")
		}
	}
	j.raw("]")
}

func (j *jsonWriter) stepHead(info audit.StepInfo) {
	j.raw(`{"turn":`)
	j.int(info.Turn)
	j.raw(`,"step":`)
	j.int(info.Step)
	j.raw(`,"stepStartSeq":`)
	j.int(info.Start)
	j.raw(`,"digest":`)
	if info.Null {
		j.raw("null")
	} else {
		j.raw(`"` + hex.EncodeToString(info.Digest[:]) + `"`)
	}
	j.raw(",")
	j.recorded(info)
}

func (s *Server) apiSteps(w http.ResponseWriter, r *http.Request) error {
	h, err := s.head(r)
	if err != nil {
		return err
	}
	o, err := s.overview(r.Context(), h)
	if err != nil {
		return err
	}
	from, limit, err := window(r, int64(len(o.Steps)), 1000, MaxSteps)
	if err != nil {
		return err
	}
	j := newJSON(w)
	j.raw(`{"steps":[`)
	for i := from; i < from+min(limit, int64(len(o.Steps))-from); i++ {
		if i > from {
			j.raw(",")
		}
		j.stepHead(o.Steps[i])
		j.raw("}")
	}
	j.raw(`],"total":`)
	j.int(int64(len(o.Steps)))
	j.raw("}")
	return j.end()
}

func (s *Server) apiStep(w http.ResponseWriter, r *http.Request) error {
	v, err := s.step(r)
	if err != nil {
		return err
	}
	j := newJSON(w)
	j.stepHead(v.Info)
	j.raw(`,"headerSeq":`)
	j.int(v.Step.HeaderSeq)
	j.raw(`,"same":`)
	j.int(int64(v.Same))
	if p := v.Provenance; p.Imported() {
		// The request is reconstructed from a transcript: from which, what
		// it does not record, and the gateway's record of the session.
		j.raw(`,"imported":{"format":`)
		j.str(p.Format)
		for _, l := range []struct {
			key  string
			list []string
		}{{"missing", p.Missing}, {"recorded", p.Recorded}} {
			j.raw(`,"` + l.key + `":[`)
			for i, m := range l.list {
				if i > 0 {
					j.raw(",")
				}
				j.str(m)
			}
			j.raw("]")
		}
		j.raw("}")
	}
	j.raw(`,"bodies":[`)
	for i, b := range v.Bodies {
		if i > 0 {
			j.raw(",")
		}
		j.raw(`{"wire":`)
		j.str(b.Name)
		switch {
		case b.Err != "":
			j.raw(`,"error":`)
			j.str(b.Err)
		case b.Big:
			if b.Bytes > 0 { // 0: not rendered, the request is over MaxRendered
				j.raw(`,"bytes":`)
				j.int(int64(b.Bytes))
			}
			j.raw(`,"url":`)
			j.str(stepURL(v.ID, v.Info.Ref) + "/wire/" + url.PathEscape(b.Name))
		default:
			j.raw(`,"body":`)
			j.str(b.Head)
		}
		j.raw("}")
	}
	j.raw(`],"request":`)
	if v.Step.Null {
		j.raw("null")
	} else {
		j.Write(v.Step.Request)
	}
	j.raw("}")
	return j.end()
}

func (s *Server) apiCache(w http.ResponseWriter, r *http.Request) error {
	v, err := s.cacheReport(r)
	if err != nil {
		return err
	}
	j := newJSON(w)
	j.raw(`{"rows":[`)
	for i := range v.Rows {
		if i > 0 {
			j.raw(",")
		}
		j.Write(v.Rows[i].AppendJSON(j.b[:0]))
	}
	j.raw(`],"total":`)
	// The totals line is {"total":{…}}: its inner object.
	t := v.Total.AppendJSON(nil)
	j.Write(t[len(`{"total":`) : len(t)-1])
	j.raw("}")
	return j.end()
}

func (s *Server) apiDiff(w http.ResponseWriter, r *http.Request) error {
	d, _, _, err := s.diff(r)
	if err != nil {
		return err
	}
	if d == nil {
		return badRequestf("the session has fewer than two steps with a request: name a and b")
	}
	j := newJSON(w)
	j.Write(d.AppendJSON(nil))
	return j.end()
}

func (s *Server) apiVerify(w http.ResponseWriter, r *http.Request) error {
	res, err := s.verify(r)
	if err != nil {
		return err
	}
	j := newJSON(w)
	j.raw(`{"session":`)
	j.str(res.Session)
	j.raw(`,"events":`)
	j.int(res.Events)
	j.raw(`,"steps":`)
	j.int(int64(res.Steps))
	j.raw(`,"digests":`)
	j.int(int64(res.Digests))
	j.raw(`,"inherited":`)
	j.int(int64(res.Inherited))
	if res.Failed() {
		j.raw(`,"failed":true`)
	} else {
		j.raw(`,"failed":false`)
	}
	j.raw(`,"findings":[`)
	for i, f := range res.Findings {
		if i > 0 {
			j.raw(",")
		}
		j.raw(`{"seq":`)
		j.int(f.Seq)
		j.raw(`,"kind":`)
		j.str(f.Kind.String())
		j.raw(`,"warning":`)
		if f.Warning {
			j.raw("true")
		} else {
			j.raw("false")
		}
		j.raw(`,"message":`)
		j.str(f.Message)
		j.raw("}")
	}
	j.raw("]}")
	return j.end()
}
