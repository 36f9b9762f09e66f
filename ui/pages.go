package ui

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"html/template"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/errclass"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/verify"
)

// funcs are the template helpers. Everything they return is plain text
// that html/template escapes for its context.
var funcs = template.FuncMap{
	"sessionURL": sessionURL,
	"apiURL":     func(id string) string { return "/api/sessions/" + idSegment(id) },
	"stepURL":    stepURL,
	"eventURL":   func(id string, seq int64) string { return sessionURL(id) + "/event/" + strconv.FormatInt(seq, 10) },
	"time":       timestamp,
	"hex":        func(d [32]byte) string { return hex.EncodeToString(d[:]) },
	"pct":        func(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" },
	"add":        func(a, b int) int { return a + b },
	"neg":        func(a int) int { return -a },
}

func sessionURL(id string) string { return "/s/" + idSegment(id) }

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
	from, err := intParam(r, "from", 0, 0, h.Next)
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
	to := from + min(page, h.Next-from) - 1
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
		return s.tmpl.ExecuteTemplate(bw, "event-row", map[string]any{"ID": h.Header.ID, "Row": rowOf(ev), "Big": len(ev.Raw) > BigItem})
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
	vs, ok := s.st.(verify.Store) // *boltlog.Log is one
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
	System    textView
	Tools     []toolView
	Inherited int64 // the session's seedLength
	// Provenance says where an imported session's requests come from.
	Provenance audit.Provenance
}

// textView is a text a page shows: all of it, or its first HeadBytes
// when it is over BigItem (Big), with a link to its raw bytes.
type textView struct {
	Head  string
	Bytes int
	Big   bool
}

func textOf(b []byte) textView {
	head, big := clip(b)
	return textView{Head: head, Bytes: len(b), Big: big}
}

type messageView struct {
	Index int
	Role  string
	textView
	New bool
}

type toolView struct {
	Name string
	textView
}

type recordedView struct {
	Seq       int64
	SHA256    string
	Match     bool
	Inherited bool
}

type bodyView struct {
	Name, Err string
	textView
	// Named is set for the renderer the step's config names (its wire).
	Named bool
}

// messages returns the messages of a built step's request: its header's
// session prefix, then its derived history (docs/rules.md#the-request), as the request
// holds them, without another copy.
func messages(st *rebuild.Step) [][]byte {
	return append(slices.Clip(st.Header.Prefix), st.History...)
}

// stepRequest rebuilds the request of the step named in the request: one
// digest fold (cached) to find it, one fold up to it that builds its
// request and, with prev, the previous request's, of which only the
// digests of its messages are kept.
func (s *Server) stepRequest(r *http.Request, prev bool) (*stepView, [][32]byte, error) {
	h, err := s.head(r)
	if err != nil {
		return nil, nil, err
	}
	ref, err := parseRef(r.PathValue("step"))
	if err != nil {
		return nil, nil, err
	}
	o, err := s.overview(r.Context(), h)
	if err != nil {
		return nil, nil, err
	}
	i := o.Step(ref)
	if i < 0 {
		return nil, nil, errclass.Mark(errors.Newf("session %s has no step %s", errors.Safe(h.Header.ID), errors.Safe(ref.String())), eventlog.ErrNotFound)
	}
	v := &stepView{ID: h.Header.ID, Info: o.Steps[i], Inherited: h.Header.SeedLength}
	if v.Provenance, err = audit.SessionProvenance(r.Context(), s.st, h); err != nil {
		return nil, nil, err
	}
	starts := []int64{o.Steps[i].Start}
	for j := i - 1; j >= 0; j-- {
		if !o.Steps[j].Null {
			v.Prev = &o.Steps[j]
			if prev {
				starts = append(starts, o.Steps[j].Start)
			}
			break
		}
	}
	if i+1 < len(o.Steps) {
		v.Next = &o.Steps[i+1]
	}
	var prevMsgs [][32]byte
	err = audit.Requests(r.Context(), s.st, h, starts, func(st rebuild.Step) error {
		if st.Start == o.Steps[i].Start {
			v.Step = st
			return nil
		}
		prevMsgs = [][32]byte{} // a previous request, maybe with no messages
		for _, m := range messages(&st) {
			prevMsgs = append(prevMsgs, sha256.Sum256(m))
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return v, prevMsgs, nil
}

// step builds the step page's view: every text over BigItem is cut to
// its head, so a page holds the request once, and each wire body only
// while it is measured.
func (s *Server) step(r *http.Request) (*stepView, error) {
	v, prev, err := s.stepRequest(r, true)
	if err != nil || v.Step.Null {
		return v, err
	}
	msgs := messages(&v.Step)
	for v.Same < len(msgs) && v.Same < len(prev) && sha256.Sum256(msgs[v.Same]) == prev[v.Same] {
		v.Same++
	}
	for k, m := range msgs {
		mv := messageView{Index: k, textView: textOf(m), New: k >= v.Same && prev != nil}
		if mv.Big {
			mv.Role = roleOf(m)
		} else {
			mp, err := codec.FromJSON(nil, m, codec.Limits{})
			if err != nil {
				return nil, err
			}
			mv.Role = audit.LookupString(mp, "role")
		}
		v.Messages = append(v.Messages, mv)
	}
	v.System = textOf([]byte(v.Step.Header.System))
	for _, t := range v.Step.Header.Tools {
		v.Tools = append(v.Tools, toolView{Name: t.Name, textView: textOf(t.JSON)})
	}
	digest := hex.EncodeToString(v.Step.Digest[:])
	for _, rec := range v.Step.Recorded {
		v.Recorded = append(v.Recorded, recordedView{Seq: rec.Seq, SHA256: rec.SHA256, Match: rec.SHA256 == digest, Inherited: rec.Seq < v.Inherited})
	}
	for _, rd := range s.opts.Renderers {
		if len(v.Step.Request) > MaxRendered {
			v.Bodies = append(v.Bodies, bodyView{Name: rd.Name, textView: textView{Big: true}, Named: v.Step.Header.Config.HasWire && v.Step.Header.Config.Wire == rd.Name})
			continue
		}
		b, err := rd.Body(v.Step)
		bv := bodyView{Name: rd.Name, textView: textOf(b), Named: v.Step.Header.Config.HasWire && v.Step.Header.Config.Wire == rd.Name}
		if err != nil {
			bv.Err = err.Error()
		}
		v.Bodies = append(v.Bodies, bv)
	}
	return v, nil
}

// roleOf reads the role of a message's canonical JSON from its start,
// where the role key is, without decoding the whole (big) message.
func roleOf(m []byte) string {
	const key = `{"role":"`
	if !bytes.HasPrefix(m, []byte(key)) {
		return ""
	}
	rest := m[len(key):min(len(m), len(key)+64)]
	if i := bytes.IndexByte(rest, '"'); i >= 0 && bytes.IndexByte(rest[:i], '\\') < 0 {
		return string(rest[:i])
	}
	return ""
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
	v, _, err := s.stepRequest(r, false)
	if err != nil {
		return err
	}
	if v.Step.Null {
		return nullRequest(v)
	}
	return rawBytes(w, "request-"+v.Info.Ref.String()+".json", v.Step.Request)
}

func nullRequest(v *stepView) error {
	return errclass.Mark(errors.Newf("step %s of session %s has no request (no header was in force)", errors.Safe(v.Info.Ref.String()), errors.Safe(v.ID)), audit.ErrNullRequest)
}

// rawBytes answers with b as a JSON download named name.
func rawBytes(w http.ResponseWriter, name string, b []byte) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, err := w.Write(b)
	return err
}

// rawMessage downloads message i of a step's request: its exact JSON.
func (s *Server) rawMessage(w http.ResponseWriter, r *http.Request) error {
	v, _, err := s.stepRequest(r, false)
	if err != nil {
		return err
	}
	if v.Step.Null {
		return nullRequest(v)
	}
	msgs := messages(&v.Step)
	i, err := strconv.Atoi(r.PathValue("i"))
	if err != nil || i < 0 || i >= len(msgs) {
		return errclass.Mark(errors.Newf("step %s of session %s has no message %s", errors.Safe(v.Info.Ref.String()), errors.Safe(v.ID), errors.Safe(strconv.Quote(r.PathValue("i")))), eventlog.ErrNotFound)
	}
	return rawBytes(w, "message-"+v.Info.Ref.String()+"-"+strconv.Itoa(i)+".json", msgs[i])
}

// rawBody downloads the body a wire renderer sends for a step.
func (s *Server) rawBody(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	k := slices.IndexFunc(s.opts.Renderers, func(rd Renderer) bool { return rd.Name == name })
	if k < 0 {
		return errclass.Mark(errors.Newf("this server has no wire renderer %s", errors.Safe(strconv.Quote(name))), eventlog.ErrNotFound)
	}
	v, _, err := s.stepRequest(r, false)
	if err != nil {
		return err
	}
	if v.Step.Null {
		return nullRequest(v)
	}
	b, err := s.opts.Renderers[k].Body(v.Step)
	if err != nil {
		return errors.Wrapf(err, "step %s: %s", errors.Safe(v.Info.Ref.String()), errors.Safe(name))
	}
	return rawBytes(w, name+"-"+v.Info.Ref.String()+".json", b)
}

// cacheView is one page of the cache report.
type cacheView struct {
	ID         string
	Provenance audit.Provenance
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
	o, err := s.overview(r.Context(), h)
	if err != nil {
		return nil, err
	}
	n, recorded := int64(len(o.Steps)), audit.Recorded(h.Header)
	if recorded { // a row per exchange: the report counts them
		n = math.MaxInt32
	}
	from, limit, err := window(r, n, int64(s.opts.CachePage), MaxCacheSteps)
	if err != nil {
		return nil, err
	}
	v := &cacheView{ID: h.Header.ID, From: int(from), Page: int(limit), Steps: len(o.Steps)}
	if v.Provenance, err = audit.SessionProvenance(r.Context(), s.st, h); err != nil {
		return nil, err
	}
	if !recorded && from == n { // past the last step: nothing to fold for
		v.Chart = newChart(nil)
		return v, nil
	}
	v.Total, err = audit.Cache(r.Context(), s.st, h, audit.Window{From: int(from), Limit: int(limit)}, func(row audit.CacheRow) error {
		v.Rows = append(v.Rows, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if recorded {
		v.Steps = v.Total.Exchanges
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
	prov, err := audit.SessionProvenance(r.Context(), s.st, h)
	if err != nil {
		return err
	}
	data := map[string]any{"Title": "Diff in " + h.Header.ID, "ID": h.Header.ID, "D": d, "Steps": steps, "Provenance": prov}
	if d != nil {
		data["MessageA"], data["MessageB"] = around(d.MessageA, d.Offset), around(d.MessageB, d.Offset)
		data["A"], data["B"] = d.A.String(), d.B.String()
	}
	return s.render(w, "diff.html", data)
}

// around is a diverging message as the diff page shows it: all of it, or
// when it is over BigItem the HeadBytes around the offset where the two
// messages first differ, with a link to its raw bytes.
func around(m []byte, off int) textView {
	if len(m) <= BigItem {
		return textView{Head: string(m), Bytes: len(m)}
	}
	lo := min(max(off-HeadBytes/2, 0), len(m))
	for lo > 0 && !utf8.RuneStart(m[lo]) {
		lo--
	}
	hi := min(lo+HeadBytes, len(m))
	for hi < len(m) && hi > lo && !utf8.RuneStart(m[hi]) {
		hi--
	}
	return textView{Head: string(m[lo:hi]), Bytes: len(m), Big: true}
}
