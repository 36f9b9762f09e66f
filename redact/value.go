package redact

import (
	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/internal/errclass"
)

// structural reports whether the string value of key k names the schema
// rather than holding content: a type or kind, a role, an id that pairs
// records, a digest, a format, an enumerated reason or envelope. Those
// values are never redacted, so that a redacted value keeps its meaning
// (a text block stays a text block, a tool result its call).
func structural(k []byte) bool {
	switch string(k) {
	case "type", "kind", "role", "id", "callId", "toolCallId", "tool_use_id", "call_id",
		"sha256", "digest", "format", "reason", "envelope":
		return true
	}
	return false
}

// Structural reports whether the string value of an object member named
// key is left alone by every Redactor: type, kind, role, id, callId,
// toolCallId, tool_use_id, call_id, sha256, digest, format, reason and
// envelope name the schema (docs/format.md#event-types's enumerations, the ids that pair
// calls and results, the APIs' roles), and redacting them would change
// what a value means. (A secret does not live there; a pattern of one's
// own that matches such a word is kept from breaking the event.)
func Structural(key string) bool { return structural([]byte(key)) }

// walker walks a stored value (msgpack, the storage form) and redacts its
// string values: into out, built lazily from the first change, or (when
// collect is set) into found, the spans of each string value by its
// ordinal among the value's strings, for JSON.
type walker struct {
	r      *Redactor
	in     []byte
	rd     *codec.Reader
	out    []byte // nil until the first change
	copied int    // in[:copied] is in out
	n      int    // spans replaced
	spans  []Span // scratch
	// collect: record found instead of building out; ord counts the
	// string values read (structural ones included).
	collect bool
	ord     int
	found   []stringSpans
}

// stringSpans are the spans to replace in the string value of ordinal
// ord.
type stringSpans struct {
	ord   int
	spans []Span
}

func corruptf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), codec.ErrCorrupt)
}

// value redacts the next value; a string under a structural key (skip)
// is left alone.
func (w *walker) value(depth int, skip bool) error {
	start := w.rd.Offset()
	t, err := w.rd.Next()
	if err != nil {
		return corruptf("redact: byte %d: %v", errors.Safe(start), errors.Safe(err.Error()))
	}
	switch t.Kind {
	case codec.KindString:
		if !skip {
			w.str(start, t.Str)
		}
		w.ord++
	case codec.KindArray:
		if depth <= 0 {
			return corruptf("redact: byte %d: nested deeper than %d", errors.Safe(start), errors.Safe(codec.MaxStoredDepth))
		}
		for range t.N {
			if err := w.value(depth-1, false); err != nil {
				return err
			}
		}
	case codec.KindObject:
		if depth <= 0 {
			return corruptf("redact: byte %d: nested deeper than %d", errors.Safe(start), errors.Safe(codec.MaxStoredDepth))
		}
		for range t.N {
			at := w.rd.Offset()
			k, ok, err := w.rd.Key()
			if err != nil || !ok {
				return corruptf("redact: byte %d: an object key that is not a string", errors.Safe(at))
			}
			if err := w.value(depth-1, structural(k)); err != nil {
				return err
			}
		}
	}
	return nil
}

// str redacts the string s whose msgpack item begins at start.
func (w *walker) str(start int, s []byte) {
	w.spans = w.r.find(w.spans[:0], s)
	if len(w.spans) == 0 {
		return
	}
	w.n += len(w.spans)
	if w.collect {
		w.found = append(w.found, stringSpans{ord: w.ord, spans: append([]Span(nil), w.spans...)})
		return
	}
	end := w.rd.Offset()
	if w.out == nil {
		w.out = make([]byte, 0, len(w.in)+len(Marker)*len(w.spans))
	}
	w.out = append(w.out, w.in[w.copied:start]...)
	size := len(s)
	for _, sp := range w.spans {
		size += len(Marker) - (sp.End - sp.Start)
	}
	w.out = codec.AppendStringHeader(w.out, size)
	w.out = replace(w.out, s, w.spans)
	w.copied = end
}

// result is the walked value with its strings redacted: the input itself
// when nothing was.
func (w *walker) result() []byte {
	if w.out == nil {
		return w.in
	}
	return append(w.out, w.in[w.copied:]...)
}

// Value redacts the string values of a stored value mp (msgpack, the
// storage form: codec.FromJSON's output) and returns the value and the
// number of spans replaced; mp itself when none. Keys, numbers,
// booleans, nulls, the nesting and structural values are unchanged, byte
// for byte; a string that changes is re-encoded with its new length.
// Bytes that are not one whole msgpack value are codec.ErrCorrupt, but
// bytes in which none of the matchers' anchors appears are returned
// unread (the ready matchers' anchors are their literals: sk-, AIza, …):
// there is nothing to redact in them.
func (r *Redactor) Value(mp []byte) ([]byte, int, error) {
	if r.blind(mp) {
		return mp, 0, nil
	}
	w := walker{r: r, in: mp, rd: codec.NewReader(mp)}
	if err := w.value(codec.MaxStoredDepth, false); err != nil {
		return nil, 0, err
	}
	if w.rd.Len() != 0 {
		return nil, 0, corruptf("redact: %d bytes after the value", errors.Safe(w.rd.Len()))
	}
	return w.result(), w.n, nil
}

// Event redacts an event's payload (its storage form, codec.Event.Raw):
// the string values of its data, as Value does; type, seq, time, the
// markers and every other member stay as they are. It returns the
// payload and the number of spans replaced; payload itself when none. A
// changed payload is decoded again (codec.DecodeStoredEvent): one that
// no longer decodes (an opaque value whose strings a pattern turned into
// something the schema refuses) is an error marked codec.ErrInvalid, and
// nothing is returned. A payload in which no anchor of the matchers
// appears is returned unread, as Value does.
func (r *Redactor) Event(payload []byte) ([]byte, int, error) {
	if r.blind(payload) {
		return payload, 0, nil
	}
	w := walker{r: r, in: payload, rd: codec.NewReader(payload)}
	t, err := w.rd.Next()
	if err != nil || t.Kind != codec.KindObject {
		return nil, 0, corruptf("redact: an event payload is not an object")
	}
	for range t.N {
		at := w.rd.Offset()
		k, ok, err := w.rd.Key()
		if err != nil || !ok {
			return nil, 0, corruptf("redact: byte %d: an event key that is not a string", errors.Safe(at))
		}
		if string(k) == "data" {
			if err := w.value(codec.MaxStoredDepth-1, false); err != nil {
				return nil, 0, err
			}
			continue
		}
		if err := w.rd.Skip(codec.MaxStoredDepth - 1); err != nil {
			return nil, 0, corruptf("redact: byte %d: %v", errors.Safe(at), errors.Safe(err.Error()))
		}
	}
	if w.rd.Len() != 0 {
		return nil, 0, corruptf("redact: %d bytes after the event", errors.Safe(w.rd.Len()))
	}
	out := w.result()
	if w.n > 0 {
		if _, err := codec.DecodeStoredEvent(out); err != nil {
			return nil, 0, errclass.Mark(errors.Wrap(err, "redact: the redacted event does not decode"), codec.ErrInvalid)
		}
	}
	return out, w.n, nil
}
