package audit

import (
	"bytes"
	"context"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/compact"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/transcript"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

// The reasons of a recorded session's rows (docs/gateway.md#cache-audit) that a rebuilt
// session's do not have; first, system, tools, config and none are
// shared.
const (
	// ReasonEdited: an earlier message changed (Index names it).
	ReasonEdited = transcript.BreakEdited
	// ReasonReordered: the same items, in another order.
	ReasonReordered = transcript.BreakReordered
	// ReasonMarkers: only cache markers moved (or a one-text-block list
	// became its plain string): no effect on a cache.
	ReasonMarkers = transcript.BreakMarkers
	// ReasonNewLane: the first request of a conversation beside another
	// one of the same agent (a sub-agent, a side call).
	ReasonNewLane = "new-lane"
	// ReasonUnmapped: a body the mapping refuses (or whose chunks are
	// missing): nothing is known to be shared.
	ReasonUnmapped = "unmapped"
)

// Recorded reports whether a session was recorded by the recording
// gateway (docs/gateway.md): its header has a gateway member. Its cache report
// is computed on the recorded request bodies, one row per exchange.
func Recorded(h codec.SessionHeader) bool {
	_, ok, err := Lookup(h.Raw, "gateway")
	return err == nil && ok
}

// maxLanes bounds the previous bodies kept, one per lane seen.
const maxLanes = 64

// cacheRecorded is Cache for a recorded session (docs/gateway.md#cache-audit): a row per
// recorded exchange of a recorded API, in log order of its wire/request;
// its Ref is the mapped step's when the session has it.
func cacheRecorded(ctx context.Context, st Store, head eventlog.Head, w Window, fn func(CacheRow) error) (CacheTotals, error) {
	var (
		tot   CacheTotals
		s     recorded.Session
		rows  []*CacheRow
		bySeq = map[int64]*CacheRow{}
		lanes = map[string][]byte{} // api and root → the lane's last body
		body  bytes.Buffer
	)
	id := head.Header.ID
	err := Scan(ctx, st, id, 0, head.Next-1, func(ev *codec.Event) error {
		s.Add(ev) // what the events break is verify's to say
		switch ev.Type {
		case recorded.TypeRequest:
			xs := s.Exchanges()
			x := xs[len(xs)-1]
			q := &x.Request
			if q.API == "" || q.API == recorded.APIOther {
				return nil
			}
			// The body as recorded: a redacted one is shorter than the one
			// sent, and the row's bytes are those its prefix is taken of.
			size, _ := q.Recorded()
			row := &CacheRow{Start: -1, Exchange: x.N, RequestSeq: ev.Seq, API: q.API, Bytes: int(size), Index: -1}
			rows = append(rows, row)
			bySeq[ev.Seq] = row
			body.Reset()
			if err := s.WriteBody(&body, q.Chunks); err != nil || int64(body.Len()) != size {
				row.Reason = ReasonUnmapped
				return nil
			}
			cur := bytes.Clone(body.Bytes())
			root, _ := transcript.Root(q.API, cur)
			lane := q.API + "\x00" + root
			prev := lanes[lane]
			r, err := transcript.Prefix(q.API, prev, cur)
			if err != nil {
				row.Reason = ReasonUnmapped
				return nil
			}
			recordReuse(row, r, cur)
			if prev == nil && (len(rows) > 1 || head.Header.ParentSession != "") {
				row.Reason = ReasonNewLane
			}
			if _, ok := lanes[lane]; !ok && len(lanes) >= maxLanes {
				for k := range lanes {
					delete(lanes, k)
					break
				}
			}
			lanes[lane] = cur
		case recorded.TypeResponse:
			p, err := recorded.DecodeResponse(ev)
			row := bySeq[p.Request]
			if err != nil || row == nil || row.HasCacheRead || !p.Body {
				return nil
			}
			body.Reset()
			if s.WriteBody(&body, p.Chunks) != nil {
				return nil
			}
			a := transcript.NewAnswer(row.API, p.Status, p.Streamed)
			a.Feed(body.Bytes())
			a.End()
			if u, ok := a.Usage(); ok {
				row.setUsage(float64(u.CacheReadTokens), float64(u.InputTokens+u.CacheReadTokens+u.CacheWriteTokens))
			}
		case codec.TypeStepStart, codec.TypeAssistantMessage:
			if LookupString(ev.Raw, "data", "origin", "format") != string(transcript.Gateway) {
				return nil
			}
			v, ok, err := Lookup(ev.Raw, "data", "origin", "seq")
			if err != nil || !ok {
				return nil
			}
			row := bySeq[Scalar(v).Int]
			if row == nil {
				return nil
			}
			switch d := ev.Data.(type) {
			case *codec.StepStart:
				row.Ref, row.Start = Ref{d.Turn, d.Step}, ev.Seq
			case *codec.AssistantMessage:
				if read, ok := cacheRead(ev); ok {
					row.setUsage(read, read+usageNumber(ev, "inputTokens")+usageNumber(ev, "cacheWriteTokens"))
				}
			}
		}
		return nil
	})
	if err != nil {
		return tot, errors.Wrapf(err, "cache of recorded session %s", errors.Safe(id))
	}
	tot.Recorded, tot.Exchanges = true, len(rows)
	for i, r := range rows {
		if !w.has(i) {
			continue
		}
		tot.add(r)
		if err := fn(*r); err != nil {
			if errors.Is(err, ErrStop) {
				return tot, nil
			}
			return tot, err
		}
	}
	return tot, nil
}

// recordReuse fills a row from what its body shares with the previous
// request of its lane.
func recordReuse(row *CacheRow, r transcript.Reuse, cur []byte) {
	row.Reason = r.Break.Kind
	row.Reusable = int(r.Shared)
	switch r.Break.Kind {
	case transcript.BreakSystem:
		row.Offset = r.Break.Offset
	case transcript.BreakEdited, transcript.BreakReordered:
		row.Index = r.Break.Index
	}
	var est compact.Chars
	for _, sp := range r.Unchanged {
		row.Unchanged += int(sp.End - sp.Start)
		row.UnchangedTokens += est.System(string(cur[sp.Start:sp.End]))
	}
}

func (r *CacheRow) setUsage(read, input float64) {
	r.CacheRead, r.HasCacheRead = read, true
	r.InputTokens, r.HasInput = input, true
}

// usageNumber returns a number of an assistant/message's usage, 0 when
// absent.
func usageNumber(ev *codec.Event, key string) float64 {
	v, ok, err := Lookup(ev.Raw, "data", "usage", key)
	if err != nil || !ok {
		return 0
	}
	if t := Scalar(v); t.Kind == codec.KindInt || t.Kind == codec.KindFloat {
		return t.Number()
	}
	return 0
}
