package gateway

import (
	"strconv"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/transcript"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

// parse parses x's body once, for its lane's root and its mapping, when
// its API is one that is mapped (x.req stays nil otherwise, and when the
// body is not of the API's shape: x.parseErr says why).
func (x *exchange) parse() {
	switch x.api {
	case transcript.APIAnthropic, transcript.APIChat, transcript.APIResponses:
		x.req, x.parseErr = transcript.ParseRequest(x.api, x.rec)
	}
}

// redact makes x.rec, what is recorded of x's body, and redacts x's
// recorded path, with Options.Redactor: a JSON body in its string values
// (byte for byte elsewhere), any other body as text. Without a redactor
// rec is body.
func (g *Gateway) redact(x *exchange) {
	x.rec = x.body
	r := g.opts.Redactor
	if r == nil {
		return
	}
	rec, n, err := r.JSON(x.body)
	if err != nil {
		rec, n = r.Text(x.body)
	}
	p, k := r.Text([]byte(x.path))
	x.rec, x.path, x.redacted = rec, string(p), n+k
}

// root is the root of x's conversation (transcript.Request.Root), ""
// when its API is not mapped or the body has none: such a request is
// recorded in its agent's base session, as bytes (and mapped there when
// that session is a lane of its API).
func (x *exchange) root() string {
	if x.req == nil {
		return ""
	}
	root, err := x.req.Root()
	if err != nil {
		return ""
	}
	return root
}

// mapRequest maps x's body in s's lane, its wire/request at seq
// (docs/gateway.md#what-is-recorded): the events to append after it, nil when s is no lane of x's
// API or the mapping refuses the body (counted, and logged without
// content). It sets x's step and break. s.mu is held.
func (g *Gateway) mapRequest(s *session, x *exchange, seq int64, now float64) []codec.Event {
	if s.lane == nil || x.api != s.api {
		return nil
	}
	err := x.parseErr
	var evs []codec.Event
	var brk transcript.Break
	if x.req != nil {
		evs, brk, err = s.lane.Map(x.req, seq, seq+1, now)
		x.req = nil // the lane's from now on
	}
	if err != nil {
		g.stats.unmapped.Add(1)
		g.log.Warn("a request could not be mapped; its bytes are recorded alone", "session", s.id, "err", err.Error())
		return nil
	}
	x.mapped, x.brk = true, brk.Kind
	switch brk.Kind {
	case transcript.BreakEdited, transcript.BreakReordered:
		x.brk += "@" + strconv.Itoa(brk.Index)
	case transcript.BreakSystem:
		x.brk += "@" + strconv.Itoa(brk.Offset)
	}
	for i := range evs {
		if evs[i].Type != codec.TypeStepStart {
			continue
		}
		if d, err := codec.DecodeEvent(evs[i].Raw); err == nil {
			if st, ok := d.Data.(*codec.StepStart); ok {
				x.step = strconv.FormatInt(st.Turn, 10) + "." + strconv.FormatInt(st.Step, 10)
			}
		}
	}
	return evs
}

// mapAnswer maps the answer whose wire/response is built (resp, the next
// seq after it next) in its session's lane: nil when its request was not
// mapped, or is no longer the lane's open one (transcript.ErrStale: the
// wire/response stands alone). a.x.sess.mu is held.
func (a *answer) mapAnswer(resp *recorded.Response, next int64, now float64) []codec.Event {
	s := a.x.sess
	if a.ma == nil || s.lane == nil {
		return nil
	}
	if resp.Cut != "" {
		a.ma.Cut(resp.Cut)
	} else {
		a.ma.End()
	}
	evs, err := s.lane.MapAnswer(a.ma, a.x.seq, next, now)
	a.ma = nil
	if err != nil {
		if !errors.Is(err, transcript.ErrStale) {
			a.g.stats.unmapped.Add(1)
			a.g.log.Warn("an answer could not be mapped; its bytes are recorded alone", "session", s.id, "err", err.Error())
		}
		return nil
	}
	for i := range evs {
		if evs[i].Type == codec.TypeAssistantMessage {
			a.x.cacheRead = cacheRead(evs[i].Raw)
		}
	}
	return evs
}

// cacheRead is the cacheReadTokens of an assistant/message's usage (0
// when it has usage without them, -1 when it has no usage).
func cacheRead(raw []byte) int64 {
	n := int64(-1)
	f := codec.NewFields(raw, codec.PrefixCodec)
	_ = f.Object("event", func(k []byte) error {
		if string(k) != "data" {
			return f.Skip()
		}
		return f.Object("data", func(k []byte) error {
			if string(k) != "usage" {
				return f.Skip()
			}
			n = 0
			return f.Object("usage", func(k []byte) error {
				if string(k) != "cacheReadTokens" {
					return f.Skip()
				}
				v, err := f.Integer("cacheReadTokens")
				n = v
				return err
			})
		})
	})
	return n
}
