package recorded

import (
	"crypto/sha256"
	"fmt"
	"io"
	"sort"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
)

// Exchange is one recorded request and its answer, if one was recorded.
type Exchange struct {
	// N numbers the session's exchanges from 1, in the order of their
	// wire/request events.
	N int
	// Seq is the wire/request's seq.
	Seq     int64
	Request Request
	// ResponseSeq is the wire/response's seq, -1 when there is none (the
	// gateway stopped before the answer ended, or is still streaming).
	ResponseSeq int64
	Response    Response
}

// Problem is something a session's wire events break: a finding, or a
// warning (an exchange without an answer, which a crash or a live stream
// leaves). Messages name seqs, sizes and digest prefixes, never content.
// A Redacted problem is no break: a wire/request whose recorded body was
// redacted, whose digest (of the body sent) cannot be checked; the
// checker says how much it weighs (verify: a finding under --strict).
type Problem struct {
	Seq      int64
	Warning  bool
	Redacted bool
	Message  string
}

// Session reads a session's events in seq order (Add), keeps the bytes of
// its chunks and its exchanges, and checks the rules of docs/gateway.md#what-is-recorded: every
// chunk's digest is its bytes' SHA-256; every seq a wire/request's or
// wire/response's runs name is a wire/chunk recorded before it; a body's
// chunks concatenate to its size and digest; a wire/response answers a
// wire/request that has no answer yet; and (End) every chunk is used.
// It holds the session's chunk bytes in memory. The zero value is ready
// to use.
type Session struct {
	chunks    map[int64]*chunk // by seq
	exchanges []Exchange
	bySeq     map[int64]int // wire/request seq → index in exchanges
	order     []int64       // the chunks' seqs, in log order
}

type chunk struct {
	b    []byte
	used bool
}

// Exchanges returns the exchanges read so far, in log order.
func (s *Session) Exchanges() []Exchange { return s.exchanges }

// Add reads the next event of the session; events of other types are
// ignored. It returns what the event breaks (nil when nothing). A
// wire/chunk whose digest is not its bytes' is a finding, and is no chunk
// a body may name.
func (s *Session) Add(ev *codec.Event) []Problem {
	if s.chunks == nil {
		s.chunks, s.bySeq = map[int64]*chunk{}, map[int64]int{}
	}
	switch ev.Type {
	case TypeChunk:
		d, b, err := DecodeChunk(ev)
		if err != nil {
			return []Problem{{Seq: ev.Seq, Message: err.Error()}}
		}
		if got := Sum(b); got != d {
			return []Problem{{Seq: ev.Seq, Message: fmt.Sprintf("wire/chunk %s… holds %d bytes whose digest is %s…", d.Short(), len(b), got.Short())}}
		}
		if _, ok := s.chunks[ev.Seq]; !ok {
			s.chunks[ev.Seq] = &chunk{b: b}
			s.order = append(s.order, ev.Seq)
		}
	case TypeRequest:
		q, err := DecodeRequest(ev)
		s.bySeq[ev.Seq] = len(s.exchanges)
		s.exchanges = append(s.exchanges, Exchange{N: len(s.exchanges) + 1, Seq: ev.Seq, Request: q, ResponseSeq: -1})
		if err != nil {
			return []Problem{{Seq: ev.Seq, Message: err.Error()}}
		}
		size, d := q.Recorded()
		ps := s.body(ev.Seq, "wire/request", q.Chunks, size, d)
		switch red := q.Redacted; {
		case red == nil:
		case red.Digest != q.Digest || red.Size != q.Size:
			ps = append(ps, Problem{Seq: ev.Seq, Redacted: true, Message: fmt.Sprintf(
				"digest not checkable (redacted content): %d spans of the recorded request were redacted; its chunks hold the %d bytes recorded, the digest %s… is of the %d bytes sent",
				red.Spans, red.Size, q.Digest.Short(), q.Size)})
		default:
			ps = append(ps, Problem{Seq: ev.Seq, Redacted: true, Message: fmt.Sprintf(
				"%d spans of the recorded request's path or header values were redacted; its body is recorded as sent (digest checked)", red.Spans)})
		}
		return ps
	case TypeResponse:
		p, err := DecodeResponse(ev)
		if err != nil {
			return []Problem{{Seq: ev.Seq, Message: err.Error()}}
		}
		var out []Problem
		i, ok := s.bySeq[p.Request]
		switch {
		case !ok:
			out = append(out, Problem{Seq: ev.Seq, Message: fmt.Sprintf("wire/response answers seq %d, which is no earlier wire/request", p.Request)})
		case s.exchanges[i].ResponseSeq >= 0:
			out = append(out, Problem{Seq: ev.Seq, Message: fmt.Sprintf("wire/response answers the wire/request at seq %d, answered already at seq %d", p.Request, s.exchanges[i].ResponseSeq)})
		default:
			s.exchanges[i].ResponseSeq, s.exchanges[i].Response = ev.Seq, p
		}
		if !p.Body {
			if p.Size != 0 || p.Digest != Sum(nil) {
				out = append(out, Problem{Seq: ev.Seq, Message: "wire/response without a body (chunks null) has a size or digest"})
			}
			return out
		}
		return append(out, s.body(ev.Seq, "wire/response", p.Chunks, p.Size, p.Digest)...)
	}
	return nil
}

// body checks a body's chunks and marks them used. It reads no further
// than the first seq that is no chunk, or the first byte past size: a
// run's length costs no more than the chunks that exist.
func (s *Session) body(seq int64, what string, runs []Run, size int64, want Digest) []Problem {
	h := sha256.New()
	var n int64
	var out []Problem
	for i, r := range runs {
		for q := r.Seq; q < r.Seq+r.N; q++ {
			c, ok := s.chunks[q]
			if !ok {
				out = append(out, Problem{Seq: seq, Message: fmt.Sprintf("%s run %d names seq %d, which is no wire/chunk recorded before it", what, i, q)})
				break
			}
			c.used = true
			if n += int64(len(c.b)); n > size {
				return append(out, Problem{Seq: seq, Message: fmt.Sprintf("%s chunks hold more than the %d bytes its size says", what, size)})
			}
			h.Write(c.b)
		}
	}
	if out != nil {
		return out
	}
	if n != size {
		return []Problem{{Seq: seq, Message: fmt.Sprintf("%s chunks hold %d bytes, its size says %d", what, n, size)}}
	}
	if got := Digest(h.Sum(nil)); got != want {
		return []Problem{{Seq: seq, Message: fmt.Sprintf("%s chunks' digest is %s…, its digest says %s…", what, got.Short(), want.Short())}}
	}
	return nil
}

// End reports what only the whole session shows: a wire/chunk no
// wire/request or wire/response uses (a finding), and each exchange
// without an answer (a warning: the gateway stopped, crashed or is still
// streaming). Chunks recorded after such an exchange's request are its
// answer's so far; unused, they are part of that warning, not findings.
func (s *Session) End() []Problem {
	var out []Problem
	firstOpen := int64(-1)
	for _, x := range s.exchanges {
		if x.ResponseSeq < 0 {
			if firstOpen < 0 {
				firstOpen = x.Seq
			}
			out = append(out, Problem{Seq: x.Seq, Warning: true,
				Message: fmt.Sprintf("exchange %d has no wire/response: the gateway stopped before the answer ended, or is still streaming it", x.N)})
		}
	}
	unusedAfterOpen := 0
	for _, q := range s.order {
		switch c := s.chunks[q]; {
		case c.used:
		case firstOpen >= 0 && q > firstOpen:
			unusedAfterOpen++
		default:
			out = append(out, Problem{Seq: q, Message: "wire/chunk used by no wire/request or wire/response"})
		}
	}
	if unusedAfterOpen > 0 {
		out = append(out, Problem{Seq: firstOpen, Warning: true,
			Message: fmt.Sprintf("%d wire/chunk events after it are used by no record yet: the partial answer of an exchange without a wire/response", unusedAfterOpen)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// WriteBody writes the body made of the chunks runs name to w.
func (s *Session) WriteBody(w io.Writer, runs []Run) error {
	for _, r := range runs {
		for q := r.Seq; q < r.Seq+r.N; q++ {
			c, ok := s.chunks[q]
			if !ok {
				return invalidf("recorded: seq %d, named by the body, is no wire/chunk of the session", errors.Safe(q))
			}
			if _, err := w.Write(c.b); err != nil {
				return err
			}
		}
	}
	return nil
}
