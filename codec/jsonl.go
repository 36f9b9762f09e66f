package codec

import (
	"bufio"
	"io"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// Scanner reads a session file in the interchange format (docs/format.md#interchange): the
// header line, then one event per line, applying the crash-tail rule of
// docs/format.md#torn-tails in a single pass with memory bounded by the longest line.
//
// A damaged line is held back while the rest of the file is read: if a
// later line is a turn/end, the damage was at or before the last turn/end
// and Next returns an ErrCorrupt error naming the line; otherwise the
// damaged line and everything after it are the torn tail, Next returns
// io.EOF, and Torn describes what was dropped.
type Scanner struct {
	br   *bufio.Reader
	lim  Limits
	line int
	next int64
	// A line is read into fixed-size blocks, then joined into buf when
	// it spans more than one: growing one slice by append would leave
	// garbage several times the line (append grows large slices by a
	// quarter), and a line over the limit would cost far more than the
	// limit before it is refused. So a refused line costs at most the
	// limit, and a kept line its own size twice.
	blocks [][]byte
	buf    []byte
	torn   Torn
	err    error // sticky
}

// lineBlock is the size of the blocks a line is read into.
const lineBlock = 1 << 20

// Torn describes the torn tail a Scanner dropped.
type Torn struct {
	// FirstLine is the 1-based line where the torn tail starts; 0 when
	// nothing was dropped.
	FirstLine int
	// Lines counts dropped lines, an unterminated last line included.
	Lines int
	// Bytes counts dropped bytes.
	Bytes int64
	// Cause is why the first dropped line was not taken.
	Cause error
}

// NewScanner returns a Scanner reading r.
func NewScanner(r io.Reader, lim Limits) *Scanner {
	return &Scanner{br: bufio.NewReaderSize(r, 64<<10), lim: lim}
}

// Line is the 1-based number of the last line read.
func (s *Scanner) Line() int { return s.line }

// Torn reports the dropped tail; valid once Next has returned io.EOF.
func (s *Scanner) Torn() Torn { return s.torn }

// readLine returns the next complete line without its newline. A last
// line without a newline is reported as incomplete (ok false, err nil) and
// counted as torn. A line longer than the limit is skipped to its newline,
// holding no more than the limit meanwhile, and reported with tooLong.
func (s *Scanner) readLine() (line []byte, n int64, tooLong bool, err error) {
	s.release()
	used := 0 // bytes of the line in s.blocks
	for {
		chunk, rerr := s.br.ReadSlice('\n')
		n += int64(len(chunk))
		if !tooLong {
			if used+len(chunk) > s.lim.line()+1 {
				tooLong = true
				s.release()
			} else {
				used = s.store(used, chunk)
			}
		}
		switch {
		case rerr == nil:
			s.line++
			if tooLong {
				return nil, n, true, nil
			}
			line = s.join(used)
			return line[:len(line)-min(1, len(line))], n, false, nil
		case errors.Is(rerr, bufio.ErrBufferFull):
			continue
		case rerr == io.EOF:
			if n > 0 {
				s.torn.Lines++
				s.torn.Bytes += n
				if s.torn.FirstLine == 0 {
					s.torn.FirstLine = s.line + 1
					s.torn.Cause = errors.New("codec: last line has no newline")
				}
			}
			return nil, 0, false, io.EOF
		default:
			return nil, 0, false, errors.Wrap(rerr, "codec: read")
		}
	}
}

// store copies chunk into the blocks after the used bytes and returns the
// new count.
func (s *Scanner) store(used int, chunk []byte) int {
	for len(chunk) > 0 {
		i, off := used/lineBlock, used%lineBlock
		if i == len(s.blocks) {
			s.blocks = append(s.blocks, make([]byte, lineBlock))
		}
		k := copy(s.blocks[i][off:], chunk)
		chunk, used = chunk[k:], used+k
	}
	return used
}

// join returns the used bytes of the blocks as one slice: the first block
// itself when they fit in it, else buf.
func (s *Scanner) join(used int) []byte {
	if used <= lineBlock {
		if len(s.blocks) == 0 {
			return nil
		}
		return s.blocks[0][:used]
	}
	if cap(s.buf) < used {
		s.buf = nil // let the old one go before the new one is made
		s.buf = make([]byte, used)
	}
	s.buf = s.buf[:used]
	for i := 0; i*lineBlock < used; i++ {
		copy(s.buf[i*lineBlock:], s.blocks[i][:min(lineBlock, used-i*lineBlock)])
	}
	return s.buf
}

// release lets go of what a long line needed: every block but the first,
// and buf. A file of short lines keeps one block.
func (s *Scanner) release() {
	if len(s.blocks) > 1 {
		clear(s.blocks[1:])
		s.blocks = s.blocks[:1]
	}
	s.buf = nil
}

// Header reads and decodes line 1. A file with no complete first line, or
// a header that breaks docs/format.md#header-line, is an error naming line 1.
func (s *Scanner) Header() (SessionHeader, error) {
	line, _, tooLong, err := s.readLine()
	switch {
	case err == io.EOF:
		return SessionHeader{}, invalidf("codec: line 1: no session header line")
	case err != nil:
		return SessionHeader{}, err
	case tooLong:
		return SessionHeader{}, invalidf("codec: line 1: longer than %d bytes", errors.Safe(s.lim.line()))
	}
	raw, err := FromJSON(nil, line, s.lim)
	if err != nil {
		return SessionHeader{}, errors.Wrapf(markSyntax(err), "line 1")
	}
	h, err := DecodeSessionHeader(raw)
	return h, errors.Wrapf(err, "line 1")
}

// markSyntax marks a syntax error as corruption (it is damage, not a
// broken rule); other errors keep their class.
func markSyntax(err error) error {
	if errors.Is(err, ErrSyntax) {
		return errclass.Mark(err, ErrCorrupt)
	}
	return err
}

// Next returns the next event, io.EOF at the end of the kept events, or an
// error naming the line (and seq when known). Errors are sticky.
func (s *Scanner) Next() (Event, error) {
	if s.err != nil {
		return Event{}, s.err
	}
	ev, err := s.next1()
	if err != nil {
		s.err = err
	}
	return ev, err
}

func (s *Scanner) next1() (Event, error) {
	line, n, tooLong, err := s.readLine()
	if err != nil {
		return Event{}, err
	}
	lineNo := s.line
	if tooLong {
		return Event{}, invalidf("codec: line %d: longer than %d bytes", errors.Safe(lineNo), errors.Safe(s.lim.line()))
	}
	raw, err := FromJSON(nil, line, s.lim)
	if errors.Is(err, ErrSyntax) {
		return Event{}, s.damaged(lineNo, n, err)
	}
	if err != nil {
		return Event{}, errors.Wrapf(err, "line %d", errors.Safe(lineNo))
	}
	ev, err := DecodeEvent(raw)
	if err != nil {
		return Event{}, errors.Wrapf(err, "line %d", errors.Safe(lineNo))
	}
	if ev.Seq != s.next {
		cause := corruptf("codec: seq %d where %d was expected", errors.Safe(ev.Seq), errors.Safe(s.next))
		if ev.Type == TypeTurnEnd {
			return Event{}, errors.Wrapf(cause, "line %d", errors.Safe(lineNo))
		}
		return Event{}, s.damaged(lineNo, n, cause)
	}
	s.next++
	return ev, nil
}

// damaged handles a damaged line: it reads on, and the damage is
// corruption if a later complete line is a turn/end, else a torn tail.
func (s *Scanner) damaged(lineNo int, n int64, cause error) error {
	s.torn = Torn{FirstLine: lineNo, Lines: 1, Bytes: n, Cause: cause}
	for {
		line, n, tooLong, err := s.readLine()
		if err == io.EOF {
			return io.EOF
		}
		if err != nil {
			return err
		}
		s.torn.Lines++
		s.torn.Bytes += n
		if !tooLong && isTurnEnd(line, s.lim) {
			return errclass.Mark(errors.Wrapf(cause, "line %d (before the turn/end on line %d)",
				errors.Safe(lineNo), errors.Safe(s.line)), ErrCorrupt)
		}
	}
}

// isTurnEnd reports whether line parses as JSON and is an object whose
// type is "turn/end".
func isTurnEnd(line []byte, lim Limits) bool {
	raw, err := FromJSON(nil, line, lim)
	if err != nil {
		return false
	}
	r := Reader{b: raw}
	t, err := r.Next()
	if err != nil || t.Kind != KindObject {
		return false
	}
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			return false
		}
		if string(k.Str) == "type" {
			v, err := r.Next()
			return err == nil && v.Kind == KindString && string(v.Str) == TypeTurnEnd
		}
		if r.Skip(maxStoredDepth) != nil {
			return false
		}
	}
	return false
}
