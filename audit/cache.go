package audit

import (
	"bytes"
	"slices"

	"context"
	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/rebuild"
)

// The reasons a shared prefix broke (logtool cache --help explains them).
const (
	ReasonFirst      = "first"
	ReasonSystem     = "system"
	ReasonTools      = "tools"
	ReasonConfig     = "config"
	ReasonPrefix     = "prefix"
	ReasonResume     = "resume"
	ReasonCompaction = "compaction"
	ReasonNone       = "none"
)

// CacheRow is one step of the cache report: how many bytes of its request,
// laid out in wire order (system prompt, tools, messages), are an exact
// prefix of the previous request's, and why the shared prefix broke.
type CacheRow struct {
	Ref
	Start int64
	// Null is set for a step with no request (no header in force).
	Null            bool
	Bytes, Reusable int
	Reason          string
	// CacheRead is usage.cacheReadTokens of the step's assistant/message,
	// the cache reads the provider reported; HasCacheRead says the log
	// has it.
	CacheRead    float64
	HasCacheRead bool

	// The members of a recorded session's row (docs/gateway.md#cache-audit): Exchange
	// numbers the session's exchanges from 1, RequestSeq is the
	// wire/request's seq, API its api. Ref and Start are the mapped
	// step's (Start -1 while the exchange has none).
	Exchange   int
	RequestSeq int64
	API        string
	// Offset is, for system, the first byte at which the system prompt
	// differs; Index is, for edited and reordered, the request item
	// (messages[] or input[]) where the conversation stops continuing
	// the previous request's, else -1.
	Offset, Index int
	// Unchanged is the bytes after the shared prefix that the previous
	// request held too: re-sent although unchanged, no prefix cache can
	// reuse them; UnchangedTokens estimates their tokens (package
	// compact's estimator).
	Unchanged, UnchangedTokens int
	// InputTokens is the input the provider reported (uncached, cache
	// reads and cache writes), HasInput says it did.
	InputTokens float64
	HasInput    bool
}

// Resent is the bytes sent anew.
func (r *CacheRow) Resent() int { return r.Bytes - r.Reusable }

// AppendJSON appends the row as one JSON object (logtool cache --json,
// the UI's /api/ cache), keys in this order:
// {"turn","step","stepStartSeq","bytes","reusable","resent","reason","cacheReadTokens"?};
// a step with no request has null bytes, reusable, resent and reason.
// A recorded session's row is
// {"exchange","requestSeq","api","turn","step","stepStartSeq","bytes","reusable","resent",
// "unchanged","unchangedTokens","reason","offset"?,"index"?,"cacheReadTokens"?,"inputTokens"?},
// turn, step and stepStartSeq null while the exchange is not mapped.
func (r *CacheRow) AppendJSON(b []byte) []byte {
	if r.Exchange > 0 {
		return r.appendRecorded(b)
	}
	b = append(b, `{"turn":`...)
	b = codec.AppendJSONInt(b, r.Turn)
	b = append(b, `,"step":`...)
	b = codec.AppendJSONInt(b, r.Step)
	b = append(b, `,"stepStartSeq":`...)
	b = codec.AppendJSONInt(b, r.Start)
	if r.Null {
		b = append(b, `,"bytes":null,"reusable":null,"resent":null,"reason":null`...)
	} else {
		b = append(b, `,"bytes":`...)
		b = codec.AppendJSONInt(b, int64(r.Bytes))
		b = append(b, `,"reusable":`...)
		b = codec.AppendJSONInt(b, int64(r.Reusable))
		b = append(b, `,"resent":`...)
		b = codec.AppendJSONInt(b, int64(r.Resent()))
		b = append(b, `,"reason":`...)
		b = codec.AppendJSONString(b, []byte(r.Reason))
	}
	if r.HasCacheRead {
		b = append(b, `,"cacheReadTokens":`...)
		b = codec.AppendJSONNumber(b, r.CacheRead)
	}
	return append(b, '}')
}

func (r *CacheRow) appendRecorded(b []byte) []byte {
	b = append(b, `{"exchange":`...)
	b = codec.AppendJSONInt(b, int64(r.Exchange))
	b = append(b, `,"requestSeq":`...)
	b = codec.AppendJSONInt(b, r.RequestSeq)
	b = append(b, `,"api":`...)
	b = codec.AppendJSONString(b, []byte(r.API))
	if r.Start < 0 {
		b = append(b, `,"turn":null,"step":null,"stepStartSeq":null`...)
	} else {
		b = append(b, `,"turn":`...)
		b = codec.AppendJSONInt(b, r.Turn)
		b = append(b, `,"step":`...)
		b = codec.AppendJSONInt(b, r.Step)
		b = append(b, `,"stepStartSeq":`...)
		b = codec.AppendJSONInt(b, r.Start)
	}
	b = append(b, `,"bytes":`...)
	b = codec.AppendJSONInt(b, int64(r.Bytes))
	b = append(b, `,"reusable":`...)
	b = codec.AppendJSONInt(b, int64(r.Reusable))
	b = append(b, `,"resent":`...)
	b = codec.AppendJSONInt(b, int64(r.Resent()))
	b = append(b, `,"unchanged":`...)
	b = codec.AppendJSONInt(b, int64(r.Unchanged))
	b = append(b, `,"unchangedTokens":`...)
	b = codec.AppendJSONInt(b, int64(r.UnchangedTokens))
	b = append(b, `,"reason":`...)
	b = codec.AppendJSONString(b, []byte(r.Reason))
	if r.Reason == ReasonSystem {
		b = append(b, `,"offset":`...)
		b = codec.AppendJSONInt(b, int64(r.Offset))
	}
	if r.Index >= 0 {
		b = append(b, `,"index":`...)
		b = codec.AppendJSONInt(b, int64(r.Index))
	}
	if r.HasCacheRead {
		b = append(b, `,"cacheReadTokens":`...)
		b = codec.AppendJSONNumber(b, r.CacheRead)
	}
	if r.HasInput {
		b = append(b, `,"inputTokens":`...)
		b = codec.AppendJSONNumber(b, r.InputTokens)
	}
	return append(b, '}')
}

// Cause is the reason with its detail, for text: "system@OFFSET",
// "edited#INDEX", "reordered#INDEX", else the reason.
func (r *CacheRow) Cause() string {
	switch {
	case r.Exchange > 0 && r.Reason == ReasonSystem:
		return r.Reason + "@" + string(codec.AppendJSONInt(nil, int64(r.Offset)))
	case r.Exchange > 0 && r.Index >= 0:
		return r.Reason + "#" + string(codec.AppendJSONInt(nil, int64(r.Index)))
	}
	return r.Reason
}

// CacheTotals sums the rows of a cache report that have a request.
type CacheTotals struct {
	Requests        int
	Bytes, Reusable int64
	// CacheReads counts the rows with a reported cache read, CacheRead
	// sums them.
	CacheReads int
	CacheRead  float64

	// Recorded says the report is a recorded session's (docs/gateway.md#cache-audit);
	// Exchanges counts its rows, the whole session's even when a Window
	// selected fewer. Input sums the reported input tokens of the rows
	// that have them (Inputs counts those rows); Unchanged and
	// UnchangedTokens sum the rows'.
	Recorded                   bool
	Exchanges, Inputs          int
	Input                      float64
	Unchanged, UnchangedTokens int64
}

// CacheReadRatio is the reported cache reads ÷ the reported input
// tokens, 0 when none were reported.
func (t *CacheTotals) CacheReadRatio() float64 {
	if t.Input == 0 {
		return 0
	}
	return t.CacheRead / t.Input
}

// Resent is the bytes sent anew.
func (t *CacheTotals) Resent() int64 { return t.Bytes - t.Reusable }

// Ratio is the reusable share of the bytes, 0 when there are none.
func (t *CacheTotals) Ratio() float64 {
	if t.Bytes == 0 {
		return 0
	}
	return float64(t.Reusable) / float64(t.Bytes)
}

// AppendJSON appends the totals as one JSON object:
// {"total":{"requests","bytes","reusable","resent","cacheReadTokens"?}};
// a recorded session's adds "exchanges", "unchanged" and
// "unchangedTokens" before cacheReadTokens, and "inputTokens" and
// "cacheReadRatio" (cache reads ÷ input tokens) when input was reported.
func (t *CacheTotals) AppendJSON(b []byte) []byte {
	b = append(b, `{"total":{"requests":`...)
	b = codec.AppendJSONInt(b, int64(t.Requests))
	b = append(b, `,"bytes":`...)
	b = codec.AppendJSONInt(b, t.Bytes)
	b = append(b, `,"reusable":`...)
	b = codec.AppendJSONInt(b, t.Reusable)
	b = append(b, `,"resent":`...)
	b = codec.AppendJSONInt(b, t.Resent())
	if t.Recorded {
		b = append(b, `,"exchanges":`...)
		b = codec.AppendJSONInt(b, int64(t.Exchanges))
		b = append(b, `,"unchanged":`...)
		b = codec.AppendJSONInt(b, t.Unchanged)
		b = append(b, `,"unchangedTokens":`...)
		b = codec.AppendJSONInt(b, t.UnchangedTokens)
	}
	if t.CacheReads > 0 {
		b = append(b, `,"cacheReadTokens":`...)
		b = codec.AppendJSONNumber(b, t.CacheRead)
	}
	if t.Inputs > 0 {
		b = append(b, `,"inputTokens":`...)
		b = codec.AppendJSONNumber(b, t.Input)
		b = append(b, `,"cacheReadRatio":`...)
		b = codec.AppendJSONNumber(b, t.CacheReadRatio())
	}
	return append(b, "}}"...)
}

func (t *CacheTotals) add(r *CacheRow) {
	if r.HasCacheRead {
		t.CacheReads++
		t.CacheRead += r.CacheRead
	}
	if r.HasInput {
		t.Inputs++
		t.Input += r.InputTokens
	}
	t.Unchanged += int64(r.Unchanged)
	t.UnchangedTokens += int64(r.UnchangedTokens)
	if r.Null {
		return
	}
	t.Requests++
	t.Bytes += int64(r.Bytes)
	t.Reusable += int64(r.Reusable)
}

// Window selects the steps a report covers, by their index in log order
// of step/start: From on, at most Limit of them (0: all).
type Window struct{ From, Limit int }

func (w Window) has(i int) bool { return i >= w.From && (w.Limit <= 0 || i < w.From+w.Limit) }

// cacheState is what the next row is compared with.
type cacheState struct {
	wire             []byte
	header           header.Snapshot
	gen, snapshots   int
	lastSnapshotKind string
}

// Cache computes the cache report of the steps of w in the session of
// head and calls fn with each row, in log order; it returns the totals of
// those rows. Only the requests of those steps and of the one before them
// are built: a page of a long session costs one digest fold of the log up
// to the page, plus the page's requests.
//
// A session the recording gateway recorded (Recorded) is reported on its
// recorded request bodies (docs/gateway.md#cache-audit): one row per exchange of a
// recorded API, w counting exchanges; each body is compared with the
// previous one of its lane (transcript.Prefix), and the cache reads and
// input tokens are those of the recorded answer's usage (the mapped
// assistant/message's when the session has it).
func Cache(ctx context.Context, st Store, head eventlog.Head, w Window, fn func(CacheRow) error) (CacheTotals, error) {
	if Recorded(head.Header) {
		return cacheRecorded(ctx, st, head, w, fn)
	}
	var (
		tot       CacheTotals
		starts    int                // step/starts visited
		keep      = map[int64]bool{} // step/start seqs whose requests are built
		emitted   int                // steps the Builder emitted
		prev      *cacheState        // the last step with a request
		held      []*CacheRow        // rows waiting for their assistant/message
		delivered int
	)
	deliver := func(rows []*CacheRow) error {
		for _, r := range rows {
			tot.add(r)
			delivered++
			if err := fn(*r); err != nil {
				return err
			}
		}
		if w.Limit > 0 && delivered >= w.Limit {
			return ErrStop
		}
		return nil
	}
	visit := func(ev *codec.Event) error {
		switch d := ev.Data.(type) {
		case *codec.StepStart:
			if w.has(starts) || w.has(starts+1) {
				keep[ev.Seq] = true
			}
			starts++
		case *codec.AssistantMessage:
			for _, r := range held {
				if r.Turn == d.Turn && r.Step == d.Step && !r.HasCacheRead {
					r.CacheRead, r.HasCacheRead = cacheRead(ev)
				}
			}
		}
		return nil
	}
	emit := func(s rebuild.Step) error {
		i := emitted
		emitted++
		// The previous rows' assistant/messages came before this step
		// settled: they are complete.
		if len(held) > 0 {
			out := held
			held = nil
			if err := deliver(out); err != nil {
				return err
			}
		}
		if !w.has(i) && !w.has(i+1) {
			return nil
		}
		var row *CacheRow
		if !s.Null {
			wire := WireOrder(s)
			cur := &cacheState{wire: wire, header: s.Header, gen: s.Gen, snapshots: s.Snapshots, lastSnapshotKind: s.LastReason}
			if w.has(i) {
				row = &CacheRow{Ref: Ref{s.Turn, s.Step}, Start: s.Start, Bytes: len(wire)}
				row.Reusable, row.Reason = cacheReuse(prev, cur)
			}
			prev = cur
		} else if w.has(i) {
			row = &CacheRow{Ref: Ref{s.Turn, s.Step}, Start: s.Start, Null: true}
		}
		if row == nil {
			return nil
		}
		// The step's assistant/message follows its first chunk: the row
		// waits for it until the next step settles.
		held = append(held, row)
		return nil
	}
	opts := rebuild.BuilderOptions{Requests: true, Keep: func(start int64) bool { return keep[start] }}
	err := Steps(ctx, st, head, opts, visit, emit)
	if err == nil && len(held) > 0 && (w.Limit <= 0 || delivered < w.Limit) {
		if err = deliver(held); errors.Is(err, ErrStop) {
			err = nil
		}
	}
	return tot, err
}

// cacheRead returns usage.cacheReadTokens of an assistant/message.
func cacheRead(ev *codec.Event) (float64, bool) {
	v, ok, err := Lookup(ev.Raw, "data", "usage", "cacheReadTokens")
	if err != nil || !ok {
		return 0, false
	}
	t := Scalar(v)
	if t.Kind != codec.KindInt && t.Kind != codec.KindFloat {
		return 0, false
	}
	return t.Number(), true
}

// cacheReuse returns how many bytes of cur's wire form are an exact prefix
// of prev's, and why the shared prefix broke.
func cacheReuse(prev, cur *cacheState) (int, string) {
	if prev == nil {
		return 0, ReasonFirst
	}
	a, b := &prev.header, &cur.header
	if a.Config.HasProvider != b.Config.HasProvider || a.Config.Provider != b.Config.Provider || a.Config.Model != b.Config.Model {
		return 0, ReasonConfig
	}
	common := rebuild.FirstDifference(prev.wire, cur.wire)
	if common < 0 || common == len(prev.wire) {
		return len(prev.wire), ReasonNone
	}
	reason := ReasonNone
	switch {
	case a.System != b.System:
		reason = ReasonSystem
	case !toolsEqual(a.Tools, b.Tools):
		reason = ReasonTools
	case !slices.EqualFunc(a.Prefix, b.Prefix, bytes.Equal):
		reason = ReasonPrefix
	case cur.gen != prev.gen:
		reason = ReasonCompaction
	}
	if reason != ReasonCompaction && reason != ReasonNone && cur.snapshots != prev.snapshots && cur.lastSnapshotKind == "resume" {
		reason = ReasonResume
	}
	return common, reason
}

func toolsEqual(a, b []header.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].JSON, b[i].JSON) {
			return false
		}
	}
	return true
}

// WireOrder lays a step's request out as providers put it on the wire: the
// system prompt, the tools, then the messages (prefix, then history). The
// step must come from a Builder that built its request.
func WireOrder(s rebuild.Step) []byte {
	n := len(s.Header.System) + 2
	for _, t := range s.Header.Tools {
		n += len(t.JSON) + 1
	}
	for _, m := range s.Header.Prefix {
		n += len(m)
	}
	for _, m := range s.History {
		n += len(m)
	}
	b := make([]byte, 0, n+16)
	if s.Header.System != "" {
		b = codec.AppendJSONString(b, []byte(s.Header.System))
	}
	if len(s.Header.Tools) > 0 {
		b = s.Header.AppendToolsJSON(b)
	}
	for _, m := range s.Header.Prefix {
		b = append(b, m...)
	}
	for _, m := range s.History {
		b = append(b, m...)
	}
	return b
}
