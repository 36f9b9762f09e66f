package verify

import (
	"bytes"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/transcript"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

// mapping re-runs the recording gateway's mapping (docs/gateway.md#what-is-recorded, package
// transcript) over a lane session's recorded bytes, as the gateway ran
// it: every wire/request of the lane's API through MapRequest with its
// seq and time, every wire/response through NewAnswer and MapAnswer with
// its, and a lane left awaiting an answer closed by the turn/end
// "interrupted" a restarted gateway appends; and checks that the
// session's mapped events are those events, byte for byte, at those
// seqs. The first difference is a Mapping finding, and ends the check
// (the lane's state is unknown past it).
type mapping struct {
	lane *transcript.Lane
	api  string
	// want are the events the last mapping gave, at the next seqs; at is
	// the next to compare.
	want []codec.Event
	at   int
	// origin is the seq of the wire/request the pending events map.
	origin int64
	// exchanges maps a wire/request's seq to its index in the recorded
	// session's exchanges.
	exchanges map[int64]int
	off       bool
	body      bytes.Buffer
}

// newMapping returns the check of a session whose header names a lane,
// nil for any other session.
func newMapping(h codec.SessionHeader) *mapping {
	api, _ := recorded.HeaderLane(h.Raw)
	if api == "" {
		return nil
	}
	l, err := transcript.NewLane(api)
	if err != nil {
		return nil // an API this build does not map: nothing to re-run
	}
	return &mapping{lane: l, api: api, exchanges: map[int64]int{}}
}

// add checks the next event of the session; wire has read it already.
func (m *mapping) add(ev *codec.Event, wire *recorded.Session, res *Result) {
	if m == nil || m.off {
		return
	}
	if m.at < len(m.want) {
		w := &m.want[m.at]
		switch {
		case m.at == 0 && ev.Seq == w.Seq && !mapped(ev):
			// The gateway recorded the bytes alone (the store refused
			// the mapped events): the lane's state is unknown from here.
			res.add(ev.Seq, Mapping, true, nil, "the events the recorded bytes of seq %d map to are not in the session (the gateway recorded the bytes alone); the mapping is not checked past it", m.origin)
			m.off = true
			return
		case ev.Seq != w.Seq || !bytes.Equal(ev.Raw, w.Raw):
			res.add(ev.Seq, Mapping, false, nil, "%s is not the mapping of the recorded bytes of seq %d (the mapping gives %s at seq %d)", ev.Type, m.origin, w.Type, w.Seq)
			m.off = true
			return
		}
		m.at++
		return
	}
	switch ev.Type {
	case recorded.TypeRequest:
		xs := wire.Exchanges()
		if len(xs) == 0 || xs[len(xs)-1].Seq != ev.Seq {
			return // undecodable: the wire check reports it
		}
		x := xs[len(xs)-1]
		m.exchanges[ev.Seq] = len(xs) - 1
		if x.Request.API != m.api || !m.read(wire, x.Request.Chunks) {
			return
		}
		evs, _, err := m.lane.MapRequest(m.body.Bytes(), ev.Seq, ev.Seq+1, ev.Time)
		if err == nil {
			m.expect(ev.Seq, evs)
		}
	case recorded.TypeResponse:
		p, err := recorded.DecodeResponse(ev)
		if err != nil {
			return
		}
		i, ok := m.exchanges[p.Request]
		if !ok {
			return
		}
		x := wire.Exchanges()[i]
		if x.ResponseSeq != ev.Seq || x.Request.API != m.api {
			return
		}
		a := transcript.NewAnswer(m.api, x.Response.Status, x.Response.Streamed)
		if x.Response.Body {
			if !m.read(wire, x.Response.Chunks) {
				return
			}
			a.Feed(m.body.Bytes())
		}
		if x.Response.Cut != "" {
			a.Cut(x.Response.Cut)
		} else {
			a.End()
		}
		evs, err := m.lane.MapAnswer(a, p.Request, ev.Seq+1, ev.Time)
		switch {
		case errors.Is(err, transcript.ErrStale):
		case err != nil:
			res.add(ev.Seq, Mapping, false, err, "the recorded answer does not map: %v", err)
			m.off = true
		default:
			m.expect(p.Request, evs)
		}
	default:
		if !mapped(ev) {
			return
		}
		origin := originSeq(ev)
		if m.lane.Awaiting() {
			// A restarted gateway closed the turn its crash left open.
			evs, err := m.lane.Close("interrupted", origin, ev.Seq, ev.Time)
			if err == nil {
				m.expect(origin, evs)
				m.add(ev, wire, res)
				return
			}
		}
		res.add(ev.Seq, Mapping, false, nil, "%s names the recorded request of seq %d, but no mapping of the recorded bytes gives it", ev.Type, origin)
		m.off = true
	}
}

// expect makes evs the events the next seqs must hold.
func (m *mapping) expect(origin int64, evs []codec.Event) {
	m.want, m.at, m.origin = evs, 0, origin
}

// read reassembles a recorded body into m.body.
func (m *mapping) read(wire *recorded.Session, chunks []recorded.Run) bool {
	m.body.Reset()
	return wire.WriteBody(&m.body, chunks) == nil
}

// end reports mapped events the session ends without.
func (m *mapping) end(res *Result) {
	if m == nil || m.off || m.at >= len(m.want) {
		return
	}
	if m.at == 0 {
		// The bytes alone, then the end: a refused mapping (above), or a
		// crash right after it.
		res.add(m.want[0].Seq, Mapping, true, nil, "the events the recorded bytes of seq %d map to are not in the session (the gateway recorded the bytes alone)", m.origin)
		return
	}
	res.add(m.want[m.at].Seq, Mapping, false, nil, "the session ends before the mapping of the recorded bytes of seq %d does (%d events missing)", m.origin, len(m.want)-m.at)
}

// mapped reports whether ev is a gateway-mapped event (origin format
// "gateway").
func mapped(ev *codec.Event) bool {
	f, _ := origin(ev)
	return f == string(transcript.Gateway)
}

// originSeq is the seq a mapped event's origin names (-1: none).
func originSeq(ev *codec.Event) int64 {
	_, seq := origin(ev)
	return seq
}

// origin reads an event's data.origin {format, seq}.
func origin(ev *codec.Event) (format string, seq int64) {
	seq = -1
	f := codec.NewFields(ev.Raw, codec.PrefixCodec)
	_ = f.Object("event", func(k []byte) error {
		if string(k) != "data" {
			return f.Skip()
		}
		return f.Object("data", func(k []byte) error {
			if string(k) != "origin" {
				return f.Skip()
			}
			return f.Object("origin", func(k []byte) error {
				var err error
				switch string(k) {
				case "format":
					format, err = f.Str("format")
				case "seq":
					seq, err = f.Integer("seq")
				default:
					err = f.Skip()
				}
				return err
			})
		})
	})
	return format, seq
}
