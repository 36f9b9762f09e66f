package transcript

import (
	"slices"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/wire"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// Why an answer was cut before its end (docs/gateway.md#running-it), as Answer.Cut takes
// it.
const (
	CutClient   = "client"   // the client went away: the turn is aborted
	CutUpstream = "upstream" // the upstream went away: an error STREAM_CLOSED
	CutTimeout  = "timeout"  // the upstream timed out: an error TIMEOUT
	CutShutdown = "shutdown" // the gateway stopped: the turn is interrupted
)

// Answer gathers what MapAnswer needs of one answer: the finished blocks
// (block-end chunks), the usage and the finish, or how it failed. Deltas
// are not kept, so the gateway may hand every chunk its translator gives
// as it streams, holding only the finished blocks.
type Answer struct {
	blocks map[int64][]byte // storage form, by block index
	usage  *wire.Usage
	finish value
	err    *wire.Error
	cut    string

	// What Feed and End read the answer's bytes with (NewAnswer): the
	// translator of a streamed 2xx answer, else the body kept (up to
	// maxKept of an error's).
	api      string
	status   int
	tr       *wire.Translator
	body     []byte
	chunks   []wire.Chunk
	overflow bool
	fed      int64 // bytes of a stream fed to the translator
}

// MaxStreamed bounds the bytes of a streamed answer that are mapped: the
// translator holds the blocks it assembles, so a longer stream would hold
// an answer's content whole. An answer past it fails the mapping
// (MALFORMED_RESPONSE, "over 8 MiB") after its first MaxStreamed bytes,
// whatever their split, so the gateway and verify map it alike; its bytes
// are all in its wire/response.
const MaxStreamed = 8 << 20

// maxKept bounds the body an Answer keeps of an error answer (its
// message is at its start); a whole answer that was not streamed is kept
// up to the 64 MiB an SSE event may have.
const (
	maxKept = 64 << 10
	maxBody = 64 << 20
)

// NewAnswer returns the Answer of one answer of api with the HTTP status
// the upstream gave; streamed says the body is a stream (text/event-
// stream). Feed it the body's bytes as they arrive, in any split, then
// call End: a streamed 2xx body goes through the API's stream
// translator as it comes (the Answer keeps the finished blocks, never the
// stream); a 2xx body that is not a stream is translated whole at End
// (wire's TranslateJSON, TranslateResponsesJSON); any other status is a
// failure read from the body's error (HTTPError). The gateway and verify
// both read an answer this way, so verify's re-run gives the gateway's
// events.
func NewAnswer(api string, status int, streamed bool) *Answer {
	a := &Answer{api: api, status: status}
	if status/100 == 2 && streamed {
		if api == APIResponses {
			a.tr = wire.NewResponsesTranslator()
		} else if r, err := wire.Lookup(renderer(api)); err == nil {
			a.tr = r.NewTranslator()
		}
	}
	return a
}

// renderer is the wire renderer whose translator reads api's answers.
func renderer(api string) string {
	if api == APIAnthropic {
		return "anthropic-messages"
	}
	return "openai-chat"
}

// Feed takes the answer's next bytes. A failure of the stream is
// recorded (Fail); bytes after it are ignored.
func (a *Answer) Feed(p []byte) {
	if a.err != nil || len(p) == 0 {
		return
	}
	if a.tr != nil {
		over := a.fed+int64(len(p)) > MaxStreamed
		if over {
			p = p[:MaxStreamed-a.fed]
		}
		a.fed += int64(len(p))
		var err error
		if a.chunks, err = a.tr.Feed(a.chunks[:0], p); err != nil {
			a.Fail(err)
			return
		}
		a.take(a.chunks)
		if over {
			a.blocks, a.tr, a.chunks = nil, nil, nil // what was held is not mapped
			a.Fail(&wire.Error{Code: wire.CodeMalformed, Message: "the streamed answer is over 8 MiB: it is not mapped past that (its bytes are in its wire/response)"})
		}
		return
	}
	limit := maxBody
	if a.status/100 != 2 {
		limit = maxKept
	}
	if n := min(len(p), limit-len(a.body)); n > 0 {
		a.body = append(a.body, p[:n]...)
	}
	if len(a.body)+len(p) > limit {
		a.overflow = true
	}
}

// End says the body ended (whole, or cut: see Cut).
func (a *Answer) End() {
	if a.err != nil {
		return
	}
	switch {
	case a.status/100 != 2:
		a.err = HTTPError(a.api, a.status, a.body)
	case a.tr != nil:
		var err error
		if a.chunks, err = a.tr.End(a.chunks[:0]); err != nil {
			a.Fail(err)
			return
		}
		a.take(a.chunks)
	case a.overflow:
		a.err = &wire.Error{Code: wire.CodeMalformed, Message: "the response is over 64 MiB"}
	default:
		var cs []wire.Chunk
		var err error
		if a.api == APIResponses {
			cs, err = wire.TranslateResponsesJSON(nil, a.body)
		} else if r, lerr := wire.Lookup(renderer(a.api)); lerr == nil {
			cs, err = r.TranslateJSON(nil, a.body)
		}
		if err != nil {
			a.Fail(err)
			return
		}
		a.take(cs)
	}
	a.body = nil
}

// take adds a translator's chunks; a block that is not JSON (which
// wire's translators never give) fails the answer.
func (a *Answer) take(cs []wire.Chunk) {
	if err := a.Add(cs...); err != nil {
		a.err = &wire.Error{Code: wire.CodeMalformed}
	}
}

// Add takes chunks of the answer, in order. A block-end whose block is
// not JSON is refused (ErrInvalid).
func (a *Answer) Add(chunks ...wire.Chunk) error {
	for i := range chunks {
		c := &chunks[i]
		switch c.Type {
		case wire.ChunkBlockEnd:
			mp, err := codec.FromJSON(nil, c.Block, codec.Limits{})
			if err != nil {
				return errclass.Mark(errors.Newf("transcript: the block-end of block %d is not JSON", errors.Safe(c.Index)), codec.ErrInvalid)
			}
			if a.blocks == nil {
				a.blocks = map[int64][]byte{}
			}
			a.blocks[c.Index] = mp
		case wire.ChunkUsage:
			u := c.Usage
			a.usage = &u
		case wire.ChunkFinish:
			mp, err := codec.FromJSON(nil, c.Reason, codec.Limits{})
			if err != nil {
				return errclass.Mark(errors.New("transcript: a finish reason is not JSON"), codec.ErrInvalid)
			}
			a.finish = mp
		}
	}
	return nil
}

// Fail records that the answer failed: a translator's error (a
// *wire.Error: STREAM_CLOSED, MALFORMED_RESPONSE, …) or an HTTP error
// (wire's HTTPError of the status and body). Any other error is recorded
// with the code MALFORMED_RESPONSE and no message.
func (a *Answer) Fail(err error) {
	var we *wire.Error
	if errors.As(err, &we) {
		a.err = we
		return
	}
	a.err = &wire.Error{Code: wire.CodeMalformed}
}

// Cut records that the answer was cut before its end, and why (CutClient,
// CutUpstream, CutTimeout, CutShutdown).
func (a *Answer) Cut(reason string) { a.cut = reason }

// HTTPError is the failure of an answer of api with a non-2xx status
// (docs/wire.md#openai-chat, docs/wire.md#anthropic-messages): the Responses API's errors read as Chat
// Completions' (both are OpenAI's).
func HTTPError(api string, status int, body []byte) *wire.Error {
	r, err := wire.Lookup(renderer(api))
	if err != nil {
		return &wire.Error{Code: "SERVER", Status: status}
	}
	return r.HTTPError(status, body)
}

// MapAnswer maps the answer to the lane's open request (docs/gateway.md#what-is-recorded,
// docs/loop.md#how-turns-end), the events' seqs from next, origin and time as MapRequest's:
//
//   - an answer that finished (stop, tool-calls, max-tokens) is an
//     assistant/message with its blocks, usage and provenance {provider,
//     model}, and a tool/call for each tool-call block; with calls the
//     step stays open for their results, which the next request brings
//     (their tool/result events then end it); without, step/end and
//     turn/end completed (max-tokens for max-tokens);
//   - a failure (Fail, or a finish of kind error) ends the step and the
//     turn with error {step, message, code}, and a cut (Cut) with aborted
//     (the client went), interrupted (the gateway stopped) or error (the
//     upstream went: STREAM_CLOSED; timed out: TIMEOUT); no
//     assistant/message then, as the loop writes none for a failed
//     stream; the answer's bytes are in its wire/response.
//
// origin must name the request the answer answers (its wire/request's
// seq, as MapRequest was given): an answer to a request that is not the
// lane's open one (a later request of the lane was mapped while it
// streamed, or none waits) is ErrStale, and maps to nothing: the gateway
// records its wire/response alone.
func (l *Lane) MapAnswer(a *Answer, origin, next int64, time float64) ([]codec.Event, error) {
	if !l.Awaiting() || origin != l.open {
		return nil, errors.Wrapf(ErrStale, "transcript: the answer to the request at seq %d", errors.Safe(origin))
	}
	line := int(origin)
	l.start(next, time)
	kind := a.finish.get("kind").text()
	var reason []byte
	switch {
	case a.cut != "":
		reason = l.cutReason(a.cut)
	case a.err != nil:
		reason = l.errorReason(a.err.Message, a.err.Code)
	case a.finish == nil:
		reason = l.errorReason("the stream ended before its end marker", wire.CodeStreamClosed)
	case kind == "error":
		f := a.finish.fields("message", "code")
		reason = l.errorReason(f[0].text(), f[1].text())
	}
	if reason != nil {
		if err := l.closeTurn(line, reason); err != nil {
			return nil, err
		}
		l.answered = true
		return l.done(), nil
	}
	idx := make([]int64, 0, len(a.blocks))
	for i := range a.blocks {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	blocks := make([][]byte, 0, len(idx))
	var calls []toolCall
	for _, i := range idx {
		bl := a.blocks[i]
		blocks = append(blocks, bl)
		f := value(bl).fields("type", "id", "name", "arguments")
		if f[0].text() == codec.BlockToolCall {
			calls = append(calls, toolCall{id: f[1].text(), name: f[2].text(), args: f[3].text(), line: line, time: l.b.time})
		}
	}
	var usage []byte
	if a.usage != nil {
		usage = a.usage.AppendStorage(nil)
		l.stats.addUsage(usage)
	}
	if err := l.b.assistant(line, blocks, nil, usage, providerOf(l.api), l.model, codec.SurfaceOp{Kind: codec.OpAppend}); err != nil {
		return nil, err
	}
	if k := assistantKey(blocks); k != emptyAssistant {
		l.items = append(l.items, laneItem{seq: l.b.seq - 1, key: k})
	}
	for _, c := range calls {
		if err := l.b.toolCall(c); err != nil {
			return nil, err
		}
		l.pending = append(l.pending, c.id)
	}
	l.answered = true
	if len(calls) == 0 {
		var r []byte
		if kind == "max-tokens" {
			var o codec.Object
			o.Str("kind", "max-tokens")
			r = o.Bytes()
		}
		if err := l.closeTurn(line, r); err != nil {
			return nil, err
		}
	}
	return l.done(), nil
}

// errorReason is turn/end's error {step, message, code} (code PROVIDER
// when none is known), the server's message cut as a provider cuts it
// (wire.Message; the gateway holds no key to redact).
func (l *Lane) errorReason(message, code string) []byte {
	if code == "" {
		code = "PROVIDER"
	}
	message = wire.Message(message, "")
	var r codec.Object
	r.Str("kind", "error").Int("step", l.b.steps).Str("message", message).Str("code", code)
	return r.Bytes()
}

// cutReason is turn/end's reason for an answer cut for why.
func (l *Lane) cutReason(why string) []byte {
	switch why {
	case CutClient:
		var r codec.Object
		r.Str("kind", "aborted").Str("reason", "the client went away")
		return r.Bytes()
	case CutShutdown:
		return interrupted()
	case CutUpstream:
		return l.errorReason("the upstream went away mid-answer", wire.CodeStreamClosed)
	}
	return l.errorReason("the answer was cut: "+why, strings.ToUpper(why))
}

// Close ends the lane's open step and turn, if any, with turn/end of the
// kind given (docs/loop.md#how-turns-end: "interrupted" for a request whose answer a
// crash lost; the gateway calls it when it finds Awaiting true on
// restart). Nothing when no turn is open.
func (l *Lane) Close(kind string, origin, next int64, time float64) ([]codec.Event, error) {
	l.start(next, time)
	var r codec.Object
	r.Str("kind", kind)
	if err := l.closeTurn(int(origin), r.Bytes()); err != nil {
		return nil, err
	}
	l.answered = true
	return l.done(), nil
}
