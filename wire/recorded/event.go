package recorded

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"unicode/utf8"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// The event types of the recorded bytes (docs/gateway.md#what-is-recorded). Rebuild ignores
// them (they are of no type docs/format.md#event-types names); verify checks them.
const (
	TypeChunk    = "wire/chunk"
	TypeRequest  = "wire/request"
	TypeResponse = "wire/response"
)

// The reasons an answer was cut, in wire/response's cut.
const (
	// CutClient: the client went away; the upstream request was
	// cancelled.
	CutClient = "client"
	// CutUpstream: the upstream's connection failed or closed early.
	CutUpstream = "upstream"
	// CutTimeout: the upstream sent nothing for too long.
	CutTimeout = "timeout"
	// CutShutdown: the gateway stopped before the answer ended.
	CutShutdown = "shutdown"
)

// APIOther is the api of a request recorded with --record-all whose path
// is none of the recorded APIs'.
const APIOther = "other"

// Digest is a SHA-256: a chunk's name, or a whole body's.
type Digest [32]byte

// Sum is the digest of b.
func Sum(b []byte) Digest { return sha256.Sum256(b) }

// String is the digest in lower-case hex, as the events hold it.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// Short is the first 12 hex digits, for messages.
func (d Digest) Short() string { return hex.EncodeToString(d[:6]) }

func parseDigest(s []byte) (Digest, bool) {
	var d Digest
	if len(s) != 64 {
		return d, false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return d, false // lower-case only, as written
		}
	}
	_, err := hex.Decode(d[:], s)
	return d, err == nil
}

// Field is one recorded header: a lower-case name and its value (values
// of a repeated header joined with ", ").
type Field struct{ Name, Value string }

// Run names N consecutive wire/chunk events of the session, from the one
// at seq Seq: a body's chunks are a list of runs (docs/gateway.md#what-is-recorded), [SEQ,N] in
// the events. The events are named by seq, not by digest: a 64-hex digest
// per chunk cost a growing session's records more than the new bytes they
// hold (each chunk's own event keeps its digest, which Session checks).
type Run struct{ Seq, N int64 }

// AppendRun appends the chunk at seq to runs: it extends the last run
// when seq follows it, else starts a new one.
func AppendRun(runs []Run, seq int64) []Run {
	if k := len(runs) - 1; k >= 0 && runs[k].Seq+runs[k].N == seq {
		runs[k].N++
		return runs
	}
	return append(runs, Run{Seq: seq, N: 1})
}

// Request is the data of a wire/request event: what the upstream was
// sent. Chunks name the wire/chunk events whose bytes, concatenated, are
// the body as recorded: the body sent, unless Redacted says otherwise.
type Request struct {
	API, Method string
	// Path is the path and query the upstream was sent (with what a
	// redactor matched in it replaced, when Redacted).
	Path    string
	Headers []Field
	Chunks  []Run
	// Size and Digest are the body's as the upstream was sent it.
	Size   int64
	Digest Digest
	// Redacted is set when a redactor (docs/forgetting.md#redaction) replaced spans of
	// what is recorded: the chunks then hold the redacted body, whose
	// size and digest it gives, and the digest of the body sent cannot
	// be checked against them.
	Redacted *Redaction
}

// Redaction is the "redacted" member of a wire/request:
// {"spans":N,"size":S,"digest":HEX}. The recorded body, path and header
// values hold "[REDACTED]" where the redactor replaced a span; the text
// it replaced is recorded nowhere.
type Redaction struct {
	// Spans counts the spans replaced, in the path, the header values
	// and the body.
	Spans int64
	// Size and Digest are the recorded body's: its chunks'.
	Size   int64
	Digest Digest
}

// Recorded returns the size and digest of the body as its chunks hold
// it: the body sent's, or the redacted body's.
func (q *Request) Recorded() (int64, Digest) {
	if q.Redacted != nil {
		return q.Redacted.Size, q.Redacted.Digest
	}
	return q.Size, q.Digest
}

// Response is the data of a wire/response event: what the client was
// answered.
type Response struct {
	// Request is the seq of the exchange's wire/request: exchanges of
	// one session may overlap, and their events interleave.
	Request int64
	// Status is the upstream's status, 0 when no answer came (then Body
	// is false).
	Status  int
	Headers []Field
	// Body is false when no answer body was received at all (chunks
	// null); Chunks then is empty.
	Body     bool
	Chunks   []Run
	Size     int64
	Digest   Digest
	Streamed bool
	// Cut is "" for an answer that ended whole, else one of the Cut
	// constants.
	Cut string
}

// AppendChunk adds a wire/chunk's members to o:
// {"digest":HEX,"text":STRING}, or {"digest":HEX,"base64":STRING} when b
// is not valid UTF-8.
func AppendChunk(o *codec.Object, d Digest, b []byte) {
	var hx [64]byte
	hex.Encode(hx[:], d[:])
	o.Str("digest", string(hx[:]))
	if utf8.Valid(b) {
		o.Str("text", string(b))
		return
	}
	o.Str("base64", base64.StdEncoding.EncodeToString(b))
}

func appendFields(o *codec.Object, key string, fs []Field) {
	var h codec.Object
	for _, f := range fs {
		h.Str(f.Name, f.Value)
	}
	o.Value(key, h.Bytes())
}

func appendRuns(o *codec.Object, key string, runs []Run) {
	b := codec.AppendArrayHeader(make([]byte, 0, 5+19*len(runs)), len(runs))
	for _, r := range runs {
		b = codec.AppendArrayHeader(b, 2)
		b = codec.AppendInt(codec.AppendInt(b, r.Seq), r.N)
	}
	o.Value(key, b)
}

// AppendData adds the wire/request's members to o, in the order of
// docs/gateway.md#what-is-recorded: api, method, path, headers, chunks, size, digest; then
// redacted, when set.
func (q *Request) AppendData(o *codec.Object) {
	o.Str("api", q.API).Str("method", q.Method).Str("path", q.Path)
	appendFields(o, "headers", q.Headers)
	appendRuns(o, "chunks", q.Chunks)
	o.Int("size", q.Size).Str("digest", q.Digest.String())
	if q.Redacted != nil {
		var red codec.Object
		red.Int("spans", q.Redacted.Spans).Int("size", q.Redacted.Size).Str("digest", q.Redacted.Digest.String())
		o.Value("redacted", red.Bytes())
	}
}

// AppendData adds the wire/response's members to o: request, then
// docs/gateway.md#what-is-recorded's status, headers, chunks (null when no body came), size,
// digest, streamed, cut (when cut).
func (p *Response) AppendData(o *codec.Object) {
	o.Int("request", p.Request).Int("status", int64(p.Status))
	appendFields(o, "headers", p.Headers)
	if p.Body {
		appendRuns(o, "chunks", p.Chunks)
	} else {
		o.Value("chunks", codec.AppendNil(nil))
	}
	o.Int("size", p.Size).Str("digest", p.Digest.String()).Bool("streamed", p.Streamed)
	if p.Cut != "" {
		o.Str("cut", p.Cut)
	}
}

// invalidf returns an error marked codec.ErrInvalid.
func invalidf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), codec.ErrInvalid)
}

// maxDepth bounds the nesting skipped in unknown members.
const maxDepth = 512

// members calls fn for every member of the object data of the event raw,
// with a reader positioned at the member's value; fn must read exactly
// that value.
func members(raw []byte, seq int64, fn func(k string, r *codec.Reader) error) error {
	r := codec.NewReader(raw)
	var data []byte
	if err := object(r, seq, "event", func(k string, r *codec.Reader) error {
		var err error
		if k == "data" {
			data, err = r.Value(maxDepth)
		} else {
			err = r.Skip(maxDepth)
		}
		return err
	}); err != nil {
		return err
	}
	if data == nil {
		return invalidf("recorded: seq %d: no data", errors.Safe(seq))
	}
	return object(codec.NewReader(data), seq, "data", fn)
}

func object(r *codec.Reader, seq int64, what string, fn func(k string, r *codec.Reader) error) error {
	t, err := r.Next()
	if err != nil {
		return errclass.Mark(errors.Wrapf(err, "recorded: seq %d: %s", errors.Safe(seq), errors.Safe(what)), codec.ErrCorrupt)
	}
	if t.Kind != codec.KindObject {
		return invalidf("recorded: seq %d: %s is a %s, not an object", errors.Safe(seq), errors.Safe(what), errors.Safe(t.Kind.String()))
	}
	for i := 0; i < t.N; i++ {
		k, ok, err := r.Key()
		if err != nil || !ok {
			return errclass.Mark(errors.Newf("recorded: seq %d: %s: bad key", errors.Safe(seq), errors.Safe(what)), codec.ErrCorrupt)
		}
		if err := fn(string(k), r); err != nil {
			return err
		}
	}
	return nil
}

// token reads the next value, which must be a scalar of kind want.
func token(r *codec.Reader, seq int64, key string, want codec.Kind) (codec.Token, error) {
	t, err := r.Next()
	if err != nil {
		return t, errclass.Mark(errors.Wrapf(err, "recorded: seq %d: %s", errors.Safe(seq), errors.Safe(key)), codec.ErrCorrupt)
	}
	if t.Kind != want {
		return t, invalidf("recorded: seq %d: %s is a %s, want a %s", errors.Safe(seq), errors.Safe(key),
			errors.Safe(t.Kind.String()), errors.Safe(want.String()))
	}
	return t, nil
}

func str(r *codec.Reader, seq int64, key string) (string, error) {
	t, err := token(r, seq, key, codec.KindString)
	return string(t.Str), err
}

func integer(r *codec.Reader, seq int64, key string) (int64, error) {
	t, err := token(r, seq, key, codec.KindInt)
	if err == nil && t.Int < 0 {
		err = invalidf("recorded: seq %d: %s is negative", errors.Safe(seq), errors.Safe(key))
	}
	return t.Int, err
}

func digest(r *codec.Reader, seq int64, key string) (Digest, error) {
	t, err := token(r, seq, key, codec.KindString)
	if err != nil {
		return Digest{}, err
	}
	d, ok := parseDigest(t.Str)
	if !ok {
		return d, invalidf("recorded: seq %d: %s is not a SHA-256 in lower-case hex", errors.Safe(seq), errors.Safe(key))
	}
	return d, nil
}

// runs reads a chunk list: [[SEQ,N]…], each run naming N ≥ 1 events
// that all come before the record at seq (so no run reaches past it).
func runs(r *codec.Reader, seq int64, key string) ([]Run, error) {
	t, err := token(r, seq, key, codec.KindArray)
	if err != nil {
		return nil, err
	}
	out := make([]Run, 0, min(t.N, 1<<16))
	for range t.N {
		p, err := token(r, seq, key, codec.KindArray)
		if err != nil {
			return nil, err
		}
		if p.N != 2 {
			return nil, invalidf("recorded: seq %d: a run of %s has %d members, not [seq,n]", errors.Safe(seq), errors.Safe(key), errors.Safe(p.N))
		}
		var run Run
		if run.Seq, err = integer(r, seq, key); err != nil {
			return nil, err
		}
		if run.N, err = integer(r, seq, key); err != nil {
			return nil, err
		}
		if run.N < 1 || run.Seq >= seq || run.N > seq-run.Seq {
			return nil, invalidf("recorded: seq %d: %s run [%d,%d] is empty or reaches past its record",
				errors.Safe(seq), errors.Safe(key), errors.Safe(run.Seq), errors.Safe(run.N))
		}
		out = append(out, run)
	}
	return out, nil
}

func fields(r *codec.Reader, seq int64, key string) ([]Field, error) {
	var out []Field
	err := object(r, seq, key, func(k string, r *codec.Reader) error {
		v, err := str(r, seq, key)
		out = append(out, Field{Name: k, Value: v})
		return err
	})
	return out, err
}

// have tracks the required members read.
type have uint16

func (h have) missing(seq int64, typ string, names ...string) error {
	for i, n := range names {
		if h&(1<<i) == 0 {
			return invalidf("recorded: seq %d: %s without %s", errors.Safe(seq), errors.Safe(typ), errors.Safe(n))
		}
	}
	return nil
}

// DecodeChunk decodes a wire/chunk event: its digest as written, and its
// bytes.
func DecodeChunk(ev *codec.Event) (Digest, []byte, error) {
	var d Digest
	var b []byte
	var h have
	err := members(ev.Raw, ev.Seq, func(k string, r *codec.Reader) error {
		var err error
		switch k {
		case "digest":
			h |= 1
			d, err = digest(r, ev.Seq, k)
		case "text", "base64":
			if h&2 != 0 {
				return invalidf("recorded: seq %d: wire/chunk with both text and base64", errors.Safe(ev.Seq))
			}
			h |= 2
			var s string
			if s, err = str(r, ev.Seq, k); err != nil {
				return err
			}
			if k == "text" {
				b = []byte(s)
			} else if b, err = base64.StdEncoding.DecodeString(s); err != nil {
				return invalidf("recorded: seq %d: wire/chunk base64 does not decode", errors.Safe(ev.Seq))
			}
		default:
			err = r.Skip(maxDepth)
		}
		return err
	})
	if err == nil {
		err = h.missing(ev.Seq, TypeChunk, "digest", "text or base64")
	}
	if err == nil && len(b) == 0 {
		// The gateway never records one: a body of no bytes has no chunks.
		// Refused, an empty chunk cannot pad a run to any length.
		err = invalidf("recorded: seq %d: wire/chunk without bytes", errors.Safe(ev.Seq))
	}
	return d, b, err
}

// DecodeRequest decodes a wire/request event.
func DecodeRequest(ev *codec.Event) (Request, error) {
	var q Request
	var h have
	err := members(ev.Raw, ev.Seq, func(k string, r *codec.Reader) error {
		var err error
		switch k {
		case "api":
			h |= 1
			q.API, err = str(r, ev.Seq, k)
		case "method":
			h |= 2
			q.Method, err = str(r, ev.Seq, k)
		case "path":
			h |= 4
			q.Path, err = str(r, ev.Seq, k)
		case "headers":
			h |= 8
			q.Headers, err = fields(r, ev.Seq, k)
		case "chunks":
			h |= 16
			q.Chunks, err = runs(r, ev.Seq, k)
		case "size":
			h |= 32
			q.Size, err = integer(r, ev.Seq, k)
		case "digest":
			h |= 64
			q.Digest, err = digest(r, ev.Seq, k)
		case "redacted":
			q.Redacted, err = redaction(r, ev.Seq)
		default:
			err = r.Skip(maxDepth)
		}
		return err
	})
	if err == nil {
		err = h.missing(ev.Seq, TypeRequest, "api", "method", "path", "headers", "chunks", "size", "digest")
	}
	return q, err
}

// redaction reads a wire/request's redacted member.
func redaction(r *codec.Reader, seq int64) (*Redaction, error) {
	var red Redaction
	var h have
	err := object(r, seq, "redacted", func(k string, r *codec.Reader) error {
		var err error
		switch k {
		case "spans":
			h |= 1
			red.Spans, err = integer(r, seq, "redacted.spans")
		case "size":
			h |= 2
			red.Size, err = integer(r, seq, "redacted.size")
		case "digest":
			h |= 4
			red.Digest, err = digest(r, seq, "redacted.digest")
		default:
			err = r.Skip(maxDepth)
		}
		return err
	})
	if err == nil {
		err = h.missing(seq, "wire/request redacted", "spans", "size", "digest")
	}
	return &red, err
}

// DecodeResponse decodes a wire/response event.
func DecodeResponse(ev *codec.Event) (Response, error) {
	var p Response
	var h have
	err := members(ev.Raw, ev.Seq, func(k string, r *codec.Reader) error {
		var err error
		switch k {
		case "request":
			h |= 1
			p.Request, err = integer(r, ev.Seq, k)
		case "status":
			h |= 2
			var s int64
			s, err = integer(r, ev.Seq, k)
			p.Status = int(min(s, 999))
		case "headers":
			h |= 4
			p.Headers, err = fields(r, ev.Seq, k)
		case "chunks":
			h |= 8
			v, verr := r.Value(maxDepth)
			if verr != nil {
				return errclass.Mark(errors.Wrapf(verr, "recorded: seq %d: chunks", errors.Safe(ev.Seq)), codec.ErrCorrupt)
			}
			if len(v) == 1 && v[0] == 0xc0 { // null: no body came
				return nil
			}
			p.Body = true
			p.Chunks, err = runs(codec.NewReader(v), ev.Seq, k)
		case "size":
			h |= 16
			p.Size, err = integer(r, ev.Seq, k)
		case "digest":
			h |= 32
			p.Digest, err = digest(r, ev.Seq, k)
		case "streamed":
			h |= 64
			var t codec.Token
			t, err = token(r, ev.Seq, k, codec.KindBool)
			p.Streamed = t.Bool
		case "cut":
			p.Cut, err = str(r, ev.Seq, k)
		default:
			err = r.Skip(maxDepth)
		}
		return err
	})
	if err == nil {
		err = h.missing(ev.Seq, TypeResponse, "request", "status", "headers", "chunks", "size", "digest", "streamed")
	}
	return p, err
}
