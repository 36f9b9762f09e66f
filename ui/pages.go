package ui

import (
	"bufio"
	"cmp"
	"encoding/hex"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/verify"
)

// funcs are the template helpers. Everything they return is plain text
// that html/template escapes for its context.
var funcs = template.FuncMap{
	"sessionURL": sessionURL,
	"apiURL":     func(id string) string { return "/api/sessions/" + url.PathEscape(id) },
	"stepURL":    stepURL,
	"time":       timestamp,
	"hex":        func(d [32]byte) string { return hex.EncodeToString(d[:]) },
	"pct":        func(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" },
	"add":        func(a, b int) int { return a + b },
	"neg":        func(a int) int { return -a },
}

func sessionURL(id string) string { return "/s/" + url.PathEscape(id) }

func stepURL(id string, r audit.Ref) string { return sessionURL(id) + "/step/" + r.String() }

// timestamp formats epoch milliseconds as RFC 3339 UTC, "-" when no
// clock can have it.
func timestamp(ms float64) string {
	const limit = 253402300799999
	if ms != ms || ms < 0 || ms > limit {
		return "-"
	}
	return time.UnixMilli(int64(ms)).UTC().Format(time.RFC3339)
}

// render executes a whole page into a buffered writer.
func (s *Server) render(w http.ResponseWriter, name string, data any) error {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	bw := bufio.NewWriterSize(w, 32<<10)
	if err := s.tmpl.ExecuteTemplate(bw, name, data); err != nil {
		return err
	}
	return bw.Flush()
}

// sessionRow is one line of the sessions list.
type sessionRow struct {
	ID, Parent   string
	Events       int64
	Turns        int64
	Last         float64
	Children     int
	SeedLength   int64
	HasParentRec bool // the parent is in the store
}

// sessions returns the store's sessions filtered by q (a substring of id
// or parent) and sorted by key ("id", "parent", "events", "turns",
// "last"; "-" before it reverses).
func (s *Server) sessions(r *http.Request) ([]sessionRow, string, string, error) {
	heads, err := s.st.Sessions(r.Context())
	if err != nil {
		return nil, "", "", errors.Wrap(err, "sessions")
	}
	q := r.URL.Query().Get("q")
	sortKey := r.URL.Query().Get("sort")
	ids := make(map[string]bool, len(heads))
	children := map[string]int{}
	for _, h := range heads {
		ids[h.Header.ID] = true
		if p := h.Header.ParentSession; p != "" {
			children[p]++
		}
	}
	var rows []sessionRow
	for _, h := range heads {
		if q != "" && !strings.Contains(h.Header.ID, q) && !strings.Contains(h.Header.ParentSession, q) {
			continue
		}
		rows = append(rows, sessionRow{ID: h.Header.ID, Parent: h.Header.ParentSession, Events: h.Next, Turns: h.Turns,
			Last: h.LastTime, Children: children[h.Header.ID], SeedLength: h.Header.SeedLength, HasParentRec: ids[h.Header.ParentSession]})
	}
	key, desc := strings.CutPrefix(sortKey, "-")
	var by func(a, b sessionRow) int
	switch key {
	case "", "id":
		by = func(a, b sessionRow) int { return strings.Compare(a.ID, b.ID) }
	case "parent":
		by = func(a, b sessionRow) int {
			return cmp.Or(strings.Compare(a.Parent, b.Parent), strings.Compare(a.ID, b.ID))
		}
	case "events":
		by = func(a, b sessionRow) int { return cmp.Or(cmp.Compare(a.Events, b.Events), strings.Compare(a.ID, b.ID)) }
	case "turns":
		by = func(a, b sessionRow) int { return cmp.Or(cmp.Compare(a.Turns, b.Turns), strings.Compare(a.ID, b.ID)) }
	case "last":
		by = func(a, b sessionRow) int { return cmp.Or(cmp.Compare(a.Last, b.Last), strings.Compare(a.ID, b.ID)) }
	default:
		return nil, "", "", badRequestf("sort is id, parent, events, turns or last (with - to reverse)")
	}
	slices.SortStableFunc(rows, by)
	if desc {
		slices.Reverse(rows)
	}
	return rows, q, sortKey, nil
}

func (s *Server) sessionsPage(w http.ResponseWriter, r *http.Request) error {
	rows, q, sortKey, err := s.sessions(r)
	if err != nil {
		return err
	}
	return s.render(w, "sessions.html", map[string]any{"Title": "Sessions", "Rows": rows, "Q": q, "Sort": sortKey})
}

// eventRow is one line of the timeline.
type eventRow struct {
	Seq      int64
	Type     string
	Time     float64
	Summary  string
	Step     *audit.Ref // for step/start: the step page
	Class    string     // turn, step, header, compaction, message or other
	Replaces string
}

func rowOf(ev *codec.Event) eventRow {
	row := eventRow{Seq: ev.Seq, Type: ev.Type, Time: ev.Time, Summary: audit.Summary(ev), Class: "other"}
	switch d := ev.Data.(type) {
	case *codec.TurnStart, *codec.TurnEnd:
		row.Class = "turn"
	case *codec.StepStart:
		row.Class, row.Step = "step", &audit.Ref{Turn: d.Turn, Step: d.Step}
	case *codec.StepEnd:
		row.Class = "step"
	case *codec.RequestHeader, *codec.HeaderDelta:
		row.Class = "header"
	case *codec.CompactStart, *codec.CompactSummary, *codec.CompactEnd:
		row.Class = "compaction"
	case *codec.UserMessage, *codec.AssistantMessage, *codec.ToolResult, *codec.ContextMessage, *codec.SteeringMessage, *codec.ToolCall:
		row.Class = "message"
	}
	if ev.Op.Kind == codec.OpReplace {
		row.Replaces = strconv.FormatInt(ev.Op.Start, 10) + ".." + strconv.FormatInt(ev.Op.End, 10)
	}
	return row
}

// children returns the forks of session id, by id, and whether its
// parent is in the store.
func (s *Server) children(r *http.Request, id string) ([]string, bool, error) {
	heads, err := s.st.Sessions(r.Context())
	if err != nil {
		return nil, false, errors.Wrap(err, "sessions")
	}
	var out []string
	parentHere := false
	var parent string
	for _, h := range heads {
		if h.Header.ID == id {
			parent = h.Header.ParentSession
		}
	}
	for _, h := range heads {
		if h.Header.ParentSession == id {
			out = append(out, h.Header.ID)
		}
		if parent != "" && h.Header.ID == parent {
			parentHere = true
		}
	}
	return out, parentHere, nil
}

// listed bounds the header events and compactions the session page lists;
// the API lists them all.
const listed = 200

// sessionPage is the timeline: the session's lineage, header events and
// compactions, then one page of events, streamed as they are read.
func (s *Server) sessionPage(w http.ResponseWriter, r *http.Request) error {
	h, err := s.head(r)
	if err != nil {
		return err
	}
	from, err := intParam(r, "from", 0)
	if err != nil {
		return err
	}
	o, err := s.overview(r.Context(), h)
	if err != nil {
		return err
	}
	kids, parentHere, err := s.children(r, h.Header.ID)
	if err != nil {
		return err
	}
	page := int64(s.opts.EventsPage)
	to := min(from+page, h.Next) - 1
	data := map[string]any{
		"Title": "Session " + h.Header.ID, "Head": h, "ID": h.Header.ID, "Overview": o, "Children": kids,
		"ParentHere": parentHere, "From": from, "To": to, "Page": page,
		"Prev": max(from-page, 0), "HasPrev": from > 0, "Next": from + page, "HasNext": from+page < h.Next,
		"FirstStep": firstStep(o),
		"Headers":   o.Headers[:min(len(o.Headers), listed)], "MoreHeaders": max(len(o.Headers)-listed, 0),
		"Compactions": o.Compactions[:min(len(o.Compactions), listed)], "MoreCompactions": max(len(o.Compactions)-listed, 0),
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	bw := bufio.NewWriterSize(w, 32<<10)
	if err := s.tmpl.ExecuteTemplate(bw, "session-top", data); err != nil {
		return err
	}
	// The rows stream: the page is written as its events are read.
	err = audit.Scan(r.Context(), s.st, h.Header.ID, from, to, func(ev *codec.Event) error {
		return s.tmpl.ExecuteTemplate(bw, "event-row", map[string]any{"ID": h.Header.ID, "Row": rowOf(ev)})
	})
	if err != nil {
		// Headers are sent: say so on the page.
		s.tmpl.ExecuteTemplate(bw, "stream-error", err.Error())
	}
	if err := s.tmpl.ExecuteTemplate(bw, "session-bottom", data); err != nil {
		return err
	}
	return bw.Flush()
}

func firstStep(o *audit.Overview) *audit.StepInfo {
	for i := range o.Steps {
		if !o.Steps[i].Null {
			return &o.Steps[i]
		}
	}
	return nil
}

func (s *Server) verifyPage(w http.ResponseWriter, r *http.Request) error {
	res, err := s.verify(r)
	if err != nil {
		return err
	}
	return s.render(w, "verify.html", map[string]any{"Title": "Verify " + res.Session, "ID": res.Session, "Result": &res})
}

// verify runs verify.Session on the session of the request.
func (s *Server) verify(r *http.Request) (verify.Result, error) {
	vs, ok := s.st.(verify.Store) // *eventlog.Log is one
	if !ok {
		return verify.Result{}, errors.Newf("this store cannot be verified from the UI")
	}
	h, err := s.head(r)
	if err != nil {
		return verify.Result{}, err
	}
	id := h.Header.ID
	res, err := verify.Session(r.Context(), vs, id, verify.Options{Strict: r.URL.Query().Get("strict") != ""})
	if err != nil {
		return res, errors.Wrapf(err, "verify %s", errors.Safe(id))
	}
	return res, nil
}

// parseRef parses T.S.
func parseRef(v string) (audit.Ref, error) {
	t, st, ok := strings.Cut(v, ".")
	turn, err1 := strconv.ParseInt(t, 10, 64)
	step, err2 := strconv.ParseInt(st, 10, 64)
	if !ok || err1 != nil || err2 != nil || turn < 1 || step < 1 {
		return audit.Ref{}, badRequestf("a step is named T.S (turn.step, from 1.1)")
	}
	return audit.Ref{Turn: turn, Step: step}, nil
}

// stepView is what the step page and its API show.
type stepView struct {
	ID       string
	Info     audit.StepInfo
	Step     rebuild.Step
	Prev     *audit.StepInfo
	Next     *audit.StepInfo
	Messages []messageView
	// Same counts the leading messages shared with the previous request.
	Same      int
	Recorded  []recordedView
	Bodies    []bodyView
	Inherited int64 // the session's seedLength
}

type messageView struct {
	Index int
	Role  string
	JSON  string
	New   bool
}

type recordedView struct {
	Seq       int64
	SHA256    string
	Match     bool
	Inherited bool
}

type bodyView struct {
	Name, Body, Err string
	// Named is set for the renderer the step's config names (its wire).
	Named bool
}

// step rebuilds the request of the step named in the request and the one
// before it: one digest fold (cached) to find them, one fold up to the
// step that builds just those two requests.
func (s *Server) step(r *http.Request) (*stepView, error) {
	h, err := s.head(r)
	if err != nil {
		return nil, err
	}
	ref, err := parseRef(r.PathValue("step"))
	if err != nil {
		return nil, err
	}
	o, err := s.overview(r.Context(), h)
	if err != nil {
		return nil, err
	}
	i := o.Step(ref)
	if i < 0 {
		return nil, errors.Mark(errors.Newf("session %s has no step %s", errors.Safe(h.Header.ID), errors.Safe(ref.String())), eventlog.ErrNotFound)
	}
	v := &stepView{ID: h.Header.ID, Info: o.Steps[i], Inherited: h.Header.SeedLength}
	starts := []int64{o.Steps[i].Start}
	for j := i - 1; j >= 0; j-- {
		if !o.Steps[j].Null {
			v.Prev = &o.Steps[j]
			starts = append(starts, o.Steps[j].Start)
			break
		}
	}
	if i+1 < len(o.Steps) {
		v.Next = &o.Steps[i+1]
	}
	var prevReq []byte
	err = audit.Requests(r.Context(), s.st, h, starts, func(st rebuild.Step) error {
		if st.Start == o.Steps[i].Start {
			v.Step = st
		} else {
			prevReq = st.Request
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if v.Step.Null {
		return v, nil
	}
	msgs, err := audit.Messages(v.Step.Request)
	if err != nil {
		return nil, errors.Wrapf(err, "step %s", errors.Safe(ref.String()))
	}
	var prev [][]byte
	if prevReq != nil {
		if prev, err = audit.Messages(prevReq); err != nil {
			return nil, err
		}
	}
	for v.Same < len(msgs) && v.Same < len(prev) && string(msgs[v.Same]) == string(prev[v.Same]) {
		v.Same++
	}
	for k, m := range msgs {
		mp, err := codec.FromJSON(nil, m, codec.Limits{})
		if err != nil {
			return nil, err
		}
		v.Messages = append(v.Messages, messageView{Index: k, Role: audit.LookupString(mp, "role"), JSON: string(m), New: k >= v.Same && prevReq != nil})
	}
	digest := hex.EncodeToString(v.Step.Digest[:])
	for _, rec := range v.Step.Recorded {
		v.Recorded = append(v.Recorded, recordedView{Seq: rec.Seq, SHA256: rec.SHA256, Match: rec.SHA256 == digest, Inherited: rec.Seq < h.Header.SeedLength})
	}
	for _, rd := range s.opts.Renderers {
		b, err := rd.Body(v.Step)
		bv := bodyView{Name: rd.Name, Body: string(b), Named: v.Step.Header.Config.HasWire && v.Step.Header.Config.Wire == rd.Name}
		if err != nil {
			bv.Err = err.Error()
		}
		v.Bodies = append(v.Bodies, bv)
	}
	return v, nil
}

func (s *Server) stepPage(w http.ResponseWriter, r *http.Request) error {
	v, err := s.step(r)
	if err != nil {
		return err
	}
	return s.render(w, "step.html", map[string]any{"Title": "Step " + v.Info.Ref.String() + " of " + v.ID, "V": v,
		"Renderers": len(s.opts.Renderers)})
}

// rawRequest downloads the exact bytes of a step's request.
func (s *Server) rawRequest(w http.ResponseWriter, r *http.Request) error {
	v, err := s.step(r)
	if err != nil {
		return err
	}
	if v.Step.Null {
		return errors.Mark(errors.Newf("step %s of session %s has no request (no header was in force)", errors.Safe(v.Info.Ref.String()), errors.Safe(v.ID)), audit.ErrNullRequest)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="request-`+v.Info.Ref.String()+`.json"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(v.Step.Request)))
	_, err = w.Write(v.Step.Request)
	return err
}

// cacheView is one page of the cache report.
type cacheView struct {
	ID         string
	Rows       []audit.CacheRow
	Total      audit.CacheTotals
	From, Page int
	Steps      int
	Chart      chart
}

func (s *Server) cacheReport(r *http.Request) (*cacheView, error) {
	h, err := s.head(r)
	if err != nil {
		return nil, err
	}
	from, err := intParam(r, "from", 0)
	if err != nil {
		return nil, err
	}
	limit, err := intParam(r, "limit", int64(s.opts.CachePage))
	if err != nil {
		return nil, err
	}
	o, err := s.overview(r.Context(), h)
	if err != nil {
		return nil, err
	}
	v := &cacheView{ID: h.Header.ID, From: int(from), Page: int(limit), Steps: len(o.Steps)}
	v.Total, err = audit.Cache(r.Context(), s.st, h, audit.Window{From: int(from), Limit: int(limit)}, func(row audit.CacheRow) error {
		v.Rows = append(v.Rows, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	v.Chart = newChart(v.Rows)
	return v, nil
}

func (s *Server) cachePage(w http.ResponseWriter, r *http.Request) error {
	v, err := s.cacheReport(r)
	if err != nil {
		return err
	}
	return s.render(w, "cache.html", map[string]any{"Title": "Cache of " + v.ID, "V": v,
		"HasPrev": v.From > 0, "Prev": max(v.From-v.Page, 0), "HasNext": v.From+v.Page < v.Steps, "Next": v.From + v.Page})
}

// diff compares the steps named by the a and b parameters; both absent
// means the session's first two steps with a request (nil when it has
// fewer).
func (s *Server) diff(r *http.Request) (*audit.Diff, eventlog.Head, *audit.Overview, error) {
	h, err := s.head(r)
	if err != nil {
		return nil, h, nil, err
	}
	o, err := s.overview(r.Context(), h)
	if err != nil {
		return nil, h, nil, err
	}
	qa, qb := r.URL.Query().Get("a"), r.URL.Query().Get("b")
	if qa == "" && qb == "" {
		var refs []audit.Ref
		for _, st := range o.Steps {
			if !st.Null {
				refs = append(refs, st.Ref)
			}
		}
		if len(refs) < 2 {
			return nil, h, o, nil
		}
		qa, qb = refs[0].String(), refs[1].String()
	}
	a, err := parseRef(qa)
	if err != nil {
		return nil, h, o, err
	}
	b, err := parseRef(qb)
	if err != nil {
		return nil, h, o, err
	}
	d, err := audit.DiffSteps(r.Context(), s.st, h, a, b)
	return d, h, o, err
}

func (s *Server) diffPage(w http.ResponseWriter, r *http.Request) error {
	d, h, o, err := s.diff(r)
	if err != nil {
		return err
	}
	var steps []string
	for _, st := range o.Steps {
		if !st.Null && len(steps) < 2000 {
			steps = append(steps, st.Ref.String())
		}
	}
	data := map[string]any{"Title": "Diff in " + h.Header.ID, "ID": h.Header.ID, "D": d, "Steps": steps}
	if d != nil {
		data["MessageA"], data["MessageB"] = string(d.MessageA), string(d.MessageB)
		data["A"], data["B"] = d.A.String(), d.B.String()
	}
	return s.render(w, "diff.html", data)
}
