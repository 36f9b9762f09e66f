package wire

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/sessionlog/sessionlog/codec"
)

// Chunk types (docs/format.md#event-types assistant/chunk).
const (
	ChunkBlockStart     = "block-start"
	ChunkTextDelta      = "text-delta"
	ChunkReasoningDelta = "reasoning-delta"
	ChunkToolCallDelta  = "tool-call-delta"
	ChunkBlockEnd       = "block-end"
	ChunkUsage          = "usage"
	ChunkFinish         = "finish"
)

// Chunk is one piece of a streamed answer (docs/format.md#event-types assistant/chunk), as
// a translator produces it and as the loop logs it (loop.Chunk is this
// type). Which fields count depends on Type: block-start {Index,
// BlockType}; text-delta and reasoning-delta {Index, Text};
// tool-call-delta {Index, ID, Name (optional), ArgumentsDelta}; block-end
// {Index, Block}; usage {Usage}; finish {Reason, ReplayState (optional)}.
type Chunk struct {
	Type           string
	Index          int64
	BlockType      string
	Text           string
	ID, Name       string
	ArgumentsDelta string
	// Block is the finished content block, JSON text.
	Block []byte
	Usage Usage
	// Reason is the finish reason object, JSON text, e.g. {"kind":"stop"}.
	Reason []byte
	// ReplayState is the provider's opaque replay state, JSON text, if
	// any. The translators of docs/wire.md never set it.
	ReplayState []byte
}

// Usage is token usage in the disjoint buckets of docs/format.md#event-types; zero means
// not reported (the loop writes the optional buckets only when non-zero).
type Usage struct {
	InputTokens, OutputTokens                          int64
	CacheReadTokens, CacheWriteTokens, ReasoningTokens int64
}

// AppendStorage appends u's storage form (docs/format.md#event-types usage) to dst:
// inputTokens and outputTokens, then each optional bucket only when it is
// non-zero. The loop and the gateway's mapping write usage with it.
func (u Usage) AppendStorage(dst []byte) []byte {
	var o codec.Object
	o.Int("inputTokens", u.InputTokens).Int("outputTokens", u.OutputTokens)
	if u.CacheReadTokens != 0 {
		o.Int("cacheReadTokens", u.CacheReadTokens)
	}
	if u.CacheWriteTokens != 0 {
		o.Int("cacheWriteTokens", u.CacheWriteTokens)
	}
	if u.ReasoningTokens != 0 {
		o.Int("reasoningTokens", u.ReasoningTokens)
	}
	return o.AppendTo(dst)
}

// Error is a failure with a code of docs/wire.md (AUTH, RATE_LIMIT, SERVER,
// HTTP_N, INVALID_REQUEST, CONTEXT_WINDOW_EXCEEDED, OVERLOADED,
// EMPTY_RESPONSE, STREAM_CLOSED, MALFORMED_RESPONSE, WIRE_MISMATCH, or an
// error event's type). Message never holds request content.
type Error struct {
	Code    string
	Message string
	// Status is the HTTP status, when there was one.
	Status int
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "wire: " + e.Code
	}
	return "wire: " + e.Code + ": " + e.Message
}

// Codes of failures of the stream itself (docs/wire.md#openai-chat).
const (
	CodeStreamClosed = "STREAM_CLOSED"
	CodeMalformed    = "MALFORMED_RESPONSE"
	CodeEmpty        = "EMPTY_RESPONSE"
	CodeMismatch     = "WIRE_MISMATCH"
)

// maxEvent bounds one SSE event's data (the codec's line limit): a server
// cannot make a translator hold more than this.
const maxEvent = 64 << 20

// translator turns one API's SSE events into chunks.
type translator interface {
	// event handles one dispatched event; it returns true at the stream's
	// proper end ([DONE], message_stop).
	event(name, data []byte, emit func(Chunk)) (bool, error)
}

// Translator translates one streamed answer, fed incrementally as bytes
// arrive in any split, into chunks (docs/wire.md#openai-chat, docs/wire.md#anthropic-messages). It holds the
// current incomplete SSE line and the text of each open block (the
// block-end chunk carries the finished block), never the stream. It is
// not safe for concurrent use.
type Translator struct {
	t      translator
	line   []byte // the current incomplete line
	data   []byte // the data lines of the current event, joined by \n
	hasDat bool
	name   []byte
	skipLF bool // the last line ended with \r: a following \n belongs to it
	fed    bool
	done   bool
	err    error
	out    []Chunk
}

// NewTranslator returns a translator for one answer of r's API.
func (r *Renderer) NewTranslator() *Translator { return &Translator{t: r.stream()} }

// Done reports whether the stream reached its proper end.
func (t *Translator) Done() bool { return t.done }

// Feed parses p, the next bytes of the body, and appends the chunks they
// complete to dst. After the proper end, further bytes are ignored. An
// error (an *Error) is final.
func (t *Translator) Feed(dst []Chunk, p []byte) ([]Chunk, error) {
	if t.err != nil {
		return dst, t.err
	}
	if len(p) > 0 {
		t.fed = true
	}
	t.out = dst
	for len(p) > 0 && !t.done {
		if t.skipLF {
			t.skipLF = false
			if p[0] == '\n' {
				p = p[1:]
				continue
			}
		}
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			if len(t.line)+len(p) > maxEvent {
				return t.fail(&Error{Code: CodeMalformed, Message: "an SSE line exceeds 64 MiB"})
			}
			t.line = append(t.line, p...)
			break
		}
		var line []byte
		if len(t.line) > 0 {
			t.line = append(t.line, p[:i]...)
			line = t.line
		} else {
			line = p[:i]
		}
		t.skipLF = p[i] == '\r'
		p = p[i+1:]
		if err := t.lineDone(line); err != nil {
			return t.fail(err)
		}
		t.line = t.line[:0]
	}
	return t.out, nil
}

func (t *Translator) fail(err error) ([]Chunk, error) {
	t.err = err
	return t.out, err
}

func (t *Translator) emit(c Chunk) { t.out = append(t.out, c) }

// lineDone handles one complete line (SSE: field, comment or blank).
func (t *Translator) lineDone(line []byte) error {
	if len(line) == 0 {
		return t.dispatch()
	}
	if line[0] == ':' {
		return nil
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "data":
		if t.hasDat {
			t.data = append(t.data, '\n')
		}
		if len(t.data)+len(value) > maxEvent {
			return &Error{Code: CodeMalformed, Message: "an SSE event exceeds 64 MiB"}
		}
		t.data = append(t.data, value...)
		t.hasDat = true
	case "event":
		t.name = append(t.name[:0], value...)
	}
	return nil
}

// dispatch hands the current event to the API's translator.
func (t *Translator) dispatch() error {
	if !t.hasDat {
		t.name = t.name[:0]
		return nil
	}
	done, err := t.t.event(t.name, t.data, t.emit)
	t.data, t.hasDat, t.name = t.data[:0], false, t.name[:0]
	if err != nil {
		return err
	}
	t.done = done
	return nil
}

// End is called when the body ends. An event still pending (its blank
// line missing) is dispatched; then a stream that never reached its
// proper end fails: EMPTY_RESPONSE when the body was empty, else
// STREAM_CLOSED.
func (t *Translator) End(dst []Chunk) ([]Chunk, error) {
	if t.err != nil {
		return dst, t.err
	}
	t.out = dst
	if !t.done && len(t.line) > 0 {
		if err := t.lineDone(t.line); err != nil {
			return t.fail(err)
		}
		t.line = t.line[:0]
	}
	if !t.done {
		if err := t.dispatch(); err != nil {
			return t.fail(err)
		}
	}
	switch {
	case t.done:
		return t.out, nil
	case !t.fed:
		return t.fail(&Error{Code: CodeEmpty, Message: "the response has no body"})
	}
	return t.fail(&Error{Code: CodeStreamClosed, Message: "the stream ended before its end marker"})
}

// sblock is a block a translator opened: its type and what its block-end
// will carry.
type sblock struct {
	typ      string
	text     []byte // text, reasoning, or a tool call's arguments
	id, name string
}

// finished returns the block's JSON (docs/format.md#content-blocks).
func (b *sblock) finished() []byte {
	out := []byte(`{"type":`)
	out = codec.AppendJSONString(out, []byte(b.typ))
	if b.typ == "tool-call" {
		out = append(out, `,"id":`...)
		out = codec.AppendJSONString(out, []byte(b.id))
		out = append(out, `,"name":`...)
		out = codec.AppendJSONString(out, []byte(b.name))
		out = append(out, `,"arguments":`...)
		out = codec.AppendJSONString(out, b.text)
	} else {
		out = append(out, `,"text":`...)
		out = codec.AppendJSONString(out, b.text)
	}
	return append(out, '}')
}

// Finish reasons.
var (
	reasonStop      = []byte(`{"kind":"stop"}`)
	reasonToolCalls = []byte(`{"kind":"tool-calls"}`)
	reasonMaxTokens = []byte(`{"kind":"max-tokens"}`)
)

// reasonOther is the finish of an unknown stop reason R: an error whose
// code is R upper-cased.
func reasonOther(r string) []byte {
	return reasonError("model stopped: "+r, strings.ToUpper(r))
}

// reasonError is a finish of kind error.
func reasonError(message, code string) []byte {
	out := []byte(`{"kind":"error","message":`)
	out = codec.AppendJSONString(out, []byte(message))
	out = append(out, `,"code":`...)
	out = codec.AppendJSONString(out, []byte(code))
	return append(out, '}')
}

// blockSet is the blocks of one answer in opening order.
type blockSet struct{ blocks []*sblock }

// open opens a block and emits its block-start; it returns its index.
func (s *blockSet) open(typ string, emit func(Chunk)) int64 {
	s.blocks = append(s.blocks, &sblock{typ: typ})
	i := int64(len(s.blocks) - 1)
	emit(Chunk{Type: ChunkBlockStart, Index: i, BlockType: typ})
	return i
}

// end emits block-end for block i.
func (s *blockSet) end(i int64, emit func(Chunk)) {
	emit(Chunk{Type: ChunkBlockEnd, Index: i, Block: s.blocks[i].finished()})
}

// payload decodes an event's JSON data into its storage form.
func payload(scratch *[]byte, data []byte) ([]byte, error) {
	mp, err := codec.FromJSON((*scratch)[:0], data, codec.Limits{})
	if err != nil {
		return nil, &Error{Code: CodeMalformed, Message: "an event's data is not JSON (" + strconv.Itoa(len(data)) + " bytes)"}
	}
	*scratch = mp
	return mp, nil
}

// intOf reads a stored integer (0 when it is not one).
func intOf(mp []byte) int64 {
	t := token(mp)
	switch t.Kind {
	case codec.KindInt:
		return t.Int
	case codec.KindFloat:
		return int64(t.Float)
	}
	return 0
}
