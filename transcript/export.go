package transcript

import (
	"bufio"
	"encoding/base64"
	"io"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
)

// Events is what WriteSource reads: a session's events in seq order, then
// io.EOF (an eventlog.Iterator is one).
type Events interface {
	Next() (codec.Event, error)
}

// Line is a decoded source/line event.
type Line struct {
	Format Format
	N      int64
	// Text is the line's exact bytes, without its newline.
	Text []byte
	// Newline is false only for a last line that had none.
	Newline bool
}

// SourceLine decodes ev as a source/line event; ok is false for events
// of other types.
func SourceLine(ev *codec.Event) (l Line, ok bool, err error) {
	if ev.Type != TypeSourceLine {
		return Line{}, false, nil
	}
	data := value(ev.Raw).get("data")
	l.Format = Format(data.get("format").text())
	n, okN := data.get("line").num()
	l.N = int64(n)
	l.Newline = true
	if nl, ok := data.get("newline").boolean(); ok {
		l.Newline = nl
	}
	if s, ok := data.get("text").str(); ok {
		l.Text = []byte(s)
	} else if s, ok := data.get("base64").str(); ok {
		if l.Text, err = base64.StdEncoding.DecodeString(s); err != nil {
			okN = false
		}
	} else {
		okN = false
	}
	if !okN {
		return l, true, invalidf("transcript: seq %d: source/line without line and text", errors.Safe(ev.Seq))
	}
	return l, true, nil
}

// WriteSource writes the source file an imported session came from, byte
// for byte: the text of its source/line events in order, each followed
// by a newline unless it had none. A session without source lines was
// not imported from a transcript: that is an error, as is a gap in the
// line numbers.
func WriteSource(w io.Writer, evs Events) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var next int64 = 1
	for {
		ev, err := evs.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		l, ok, err := SourceLine(&ev)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if l.N != next {
			return invalidf("transcript: seq %d holds source line %d where line %d was expected",
				errors.Safe(ev.Seq), errors.Safe(l.N), errors.Safe(next))
		}
		next++
		bw.Write(l.Text)
		if l.Newline {
			bw.WriteByte('\n')
		}
	}
	if next == 1 {
		return invalidf("transcript: the session has no source lines: it was not imported from a transcript")
	}
	return errors.Wrap(bw.Flush(), "transcript: write source")
}
