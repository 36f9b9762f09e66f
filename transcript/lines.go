package transcript

import (
	"bufio"
	"io"

	"github.com/cockroachdb/errors"
)

// lineReader splits a source into lines, keeping each line's exact bytes
// and whether it ended in a newline.
type lineReader struct {
	br  *bufio.Reader
	max int
	n   int // lines read so far
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 256<<10), max: max}
}

// next returns the next line without its newline, and whether it had
// one; io.EOF after the last. The line aliases an internal buffer valid
// until the next call.
func (l *lineReader) next() ([]byte, bool, error) {
	l.buf = l.buf[:0]
	for {
		frag, err := l.br.ReadSlice('\n')
		if len(l.buf)+len(frag) > l.max+1 {
			return nil, false, invalidf("transcript: line %d is longer than %d bytes", errors.Safe(l.n+1), errors.Safe(l.max))
		}
		switch err {
		case nil:
			l.n++
			if len(l.buf) == 0 {
				return frag[:len(frag)-1], true, nil
			}
			l.buf = append(l.buf, frag...)
			return l.buf[:len(l.buf)-1], true, nil
		case bufio.ErrBufferFull:
			l.buf = append(l.buf, frag...)
		case io.EOF:
			l.buf = append(l.buf, frag...)
			if len(l.buf) == 0 {
				return nil, false, io.EOF
			}
			l.n++
			return l.buf, false, nil
		default:
			return nil, false, errors.Wrapf(err, "read line %d", errors.Safe(l.n+1))
		}
	}
}
