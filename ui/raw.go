package ui

import (
	"bufio"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// rawEvent downloads one event's canonical JSON line, as logtool export
// writes it, streamed from its stored image: however big the event, the
// answer is never built in memory.
func (s *Server) rawEvent(w http.ResponseWriter, r *http.Request) error {
	h, err := s.head(r)
	if err != nil {
		return err
	}
	seq, err := strconv.ParseInt(r.PathValue("seq"), 10, 64)
	if err != nil || seq < 0 || seq >= h.Next {
		return errclass.Mark(errors.Newf("session %s has no event %s", errors.Safe(h.Header.ID), errors.Safe(strconv.Quote(r.PathValue("seq")))), eventlog.ErrNotFound)
	}
	var raw []byte
	err = audit.Scan(r.Context(), s.st, h.Header.ID, seq, seq, func(ev *codec.Event) error {
		raw = ev.Raw
		return nil
	})
	if err != nil {
		return err
	}
	// Check the image whole before the first byte goes out, so that a
	// damaged event is an error status, not a torn answer.
	if err := streamJSON(nopWriter{}, raw); err != nil {
		return errors.Wrapf(err, "session %s: event %d", errors.Safe(h.Header.ID), errors.Safe(seq))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="event-`+strconv.FormatInt(seq, 10)+`.json"`)
	bw := bufio.NewWriterSize(w, 32<<10)
	if err := streamJSON(bw, raw); err != nil {
		return err
	}
	return bw.Flush()
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error)       { return len(p), nil }
func (nopWriter) WriteString(s string) (int, error) { return len(s), nil }

// jsonSink is where streamJSON writes.
type jsonSink interface {
	Write(p []byte) (int, error)
	WriteString(s string) (int, error)
}

// streamChunk is the most of a string streamJSON encodes at once.
const streamChunk = 16 << 10

// streamJSON writes the JSON text of the stored value mp to w, exactly
// as codec.ToJSON appends it, holding no more than streamChunk of it at
// once: a long string is encoded a piece at a time, cut at character
// boundaries (codec.AppendJSONString escapes each character on its own).
// mp must be one whole value.
func streamJSON(w jsonSink, mp []byte) error {
	rd := codec.NewReader(mp)
	var buf []byte
	if err := streamValue(w, rd, &buf, codec.MaxStoredDepth); err != nil {
		return errclass.Mark(errors.Wrapf(err, "ui: transcode at byte %d", errors.Safe(rd.Offset())), codec.ErrCorrupt)
	}
	if rd.Len() != 0 {
		return errclass.Mark(errors.Newf("ui: %d bytes after the event", errors.Safe(rd.Len())), codec.ErrCorrupt)
	}
	return nil
}

func streamValue(w jsonSink, rd *codec.Reader, buf *[]byte, depth int) error {
	t, err := rd.Next()
	if err != nil {
		return err
	}
	b := (*buf)[:0]
	switch t.Kind {
	case codec.KindNull:
		_, err = w.WriteString("null")
	case codec.KindBool:
		_, err = w.WriteString(strconv.FormatBool(t.Bool))
	case codec.KindInt:
		_, err = w.Write(codec.AppendJSONInt(b, t.Int))
	case codec.KindFloat:
		_, err = w.Write(codec.AppendJSONNumber(b, t.Float))
	case codec.KindString:
		err = streamString(w, t.Str, buf)
	case codec.KindArray, codec.KindObject:
		if depth <= 0 {
			return errors.New("ui: nesting too deep")
		}
		open, close := "[", "]"
		if t.Kind == codec.KindObject {
			open, close = "{", "}"
		}
		if _, err = w.WriteString(open); err != nil {
			return err
		}
		for i := 0; i < t.N; i++ {
			if i > 0 {
				if _, err = w.WriteString(","); err != nil {
					return err
				}
			}
			if t.Kind == codec.KindObject {
				k, err := rd.Next()
				if err != nil {
					return err
				}
				if k.Kind != codec.KindString {
					return errors.Newf("ui: object key is a %s", errors.Safe(k.Kind.String()))
				}
				if err := streamString(w, k.Str, buf); err != nil {
					return err
				}
				if _, err := w.WriteString(":"); err != nil {
					return err
				}
			}
			if err := streamValue(w, rd, buf, depth-1); err != nil {
				return err
			}
		}
		_, err = w.WriteString(close)
	default:
		return errors.Newf("ui: unexpected %s", errors.Safe(t.Kind.String()))
	}
	return err
}

// streamString writes s as a JSON string a chunk at a time.
func streamString(w jsonSink, s []byte, buf *[]byte) error {
	if _, err := w.WriteString(`"`); err != nil {
		return err
	}
	for len(s) > 0 {
		n := min(len(s), streamChunk)
		for n < len(s) && n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		if n == 0 { // no boundary in a whole chunk: not text, but keep going
			n = min(len(s), streamChunk)
		}
		b := codec.AppendJSONString((*buf)[:0], s[:n])
		*buf = b
		if _, err := w.Write(b[1 : len(b)-1]); err != nil {
			return err
		}
		s = s[n:]
	}
	_, err := w.WriteString(`"`)
	return err
}
