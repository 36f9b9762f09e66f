package engine

import (
	"context"
	"io"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/errclass"
)

// sessionPage is the number of heads one read of Sessions, or a
// SessionPage with n <= 0, takes.
const sessionPage = 512

// Head returns the session's head record; ErrNotFound if the session does
// not exist or is not published.
func (e *Engine) Head(ctx context.Context, session string) (eventlog.Head, error) {
	if err := e.begin(); err != nil {
		return eventlog.Head{}, err
	}
	defer e.ops.Done()
	if err := ctx.Err(); err != nil {
		return eventlog.Head{}, err
	}
	h, _, err := e.b.Head(ctx, session)
	return h, err
}

// Sessions returns the heads of all published sessions, ordered by id
// (bytewise), read a page at a time (SessionPage).
func (e *Engine) Sessions(ctx context.Context) ([]eventlog.Head, error) {
	var heads []eventlog.Head
	after := ""
	for {
		page, err := e.SessionPage(ctx, after, sessionPage)
		if err != nil {
			return nil, err
		}
		heads = append(heads, page...)
		if len(page) < sessionPage {
			return heads, nil
		}
		after = page[len(page)-1].Header.ID
	}
}

// SessionPage returns the heads of at most n published sessions (n <= 0:
// 512) whose ids sort after after (bytewise; "" starts at the first, as
// ids are never empty), ordered by id, read in one short transaction or
// query. A page shorter than n is the last. It is Sessions for a caller
// that must not hold every head in memory at once, as logtool ls.
func (e *Engine) SessionPage(ctx context.Context, after string, n int) ([]eventlog.Head, error) {
	if err := e.begin(); err != nil {
		return nil, err
	}
	defer e.ops.Done()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if n <= 0 {
		n = sessionPage
	}
	return e.b.Heads(ctx, after, n)
}

// Scan returns an iterator over the session's events from seq from on, in
// seq order, up to the session's next seq at the time of the call (events
// appended later are not seen). It holds at most one page of events in
// memory; events returned alias their page's buffer, which is never
// reused. An unknown session is ErrNotFound; from < 0 is ErrInvalid; from
// at or past the end yields io.EOF at once. Every record is checked
// (frame, CRC, decode, seq = key); a failure is ErrCorrupt naming the
// session and seq.
func (e *Engine) Scan(ctx context.Context, session string, from int64) (eventlog.Iterator, error) {
	if err := e.begin(); err != nil {
		return nil, err
	}
	defer e.ops.Done()
	if from < 0 {
		return nil, Invalidf("eventlog: scan session %q from seq %d", errors.Safe(session), errors.Safe(from))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h, _, err := e.b.Head(ctx, session)
	if err != nil {
		return nil, errors.Wrapf(err, "eventlog: scan session %q", errors.Safe(session))
	}
	return &iterator{e: e, ctx: ctx, session: session, next: from, end: h.Next}, nil
}

// iterator is the Iterator of Scan.
type iterator struct {
	e       *Engine
	ctx     context.Context
	session string
	next    int64 // seq of the first event not yet loaded
	end     int64 // seq to stop at
	buf     []codec.Event
	i       int
	err     error // sticky
	closed  bool
}

// Next returns the next event, io.EOF after the last, or an error naming
// the session and seq. Errors are sticky.
func (it *iterator) Next() (codec.Event, error) {
	if it.closed {
		return codec.Event{}, errclass.Mark(errors.Newf("eventlog: scan of session %q: iterator is closed",
			errors.Safe(it.session)), eventlog.ErrClosed)
	}
	if it.err != nil {
		return codec.Event{}, it.err
	}
	if it.i == len(it.buf) {
		if it.next >= it.end {
			it.err = io.EOF
			return codec.Event{}, io.EOF
		}
		if err := it.load(); err != nil {
			it.err = err
			return codec.Event{}, err
		}
	}
	ev := it.buf[it.i]
	it.buf[it.i] = codec.Event{} // the caller's now: the iterator keeps no view of it
	it.i++
	return ev, nil
}

// Close releases the iterator. It may be called more than once.
func (it *iterator) Close() error {
	it.closed = true
	it.buf = nil
	return nil
}

// load reads and decodes the next page.
func (it *iterator) load() error {
	if err := it.ctx.Err(); err != nil {
		return errors.Wrapf(err, "eventlog: scan of session %q at seq %d", errors.Safe(it.session), errors.Safe(it.next))
	}
	payloads, _, err := it.e.events(it.ctx, it.session, it.next, it.end)
	if err != nil {
		return errors.Wrapf(err, "eventlog: scan of session %q at seq %d", errors.Safe(it.session), errors.Safe(it.next))
	}
	evs := make([]codec.Event, len(payloads))
	for i, p := range payloads {
		ev, err := DecodeEvent(it.session, it.next+int64(i), p)
		if err != nil {
			return err
		}
		evs[i] = ev
	}
	it.buf, it.i = evs, 0
	it.next += int64(len(payloads))
	return nil
}

// events reads a page of the session's events through the driver, as a
// method in flight (it fails with ErrClosed after Close).
func (e *Engine) events(ctx context.Context, session string, from, end int64) (payloads, recs [][]byte, err error) {
	if err := e.begin(); err != nil {
		return nil, nil, err
	}
	defer e.ops.Done()
	payloads, recs, err = e.b.Events(ctx, session, from, end)
	if err == nil && len(payloads) == 0 {
		err = Corruptf("eventlog: session %q: records of seqs %d..%d are missing",
			errors.Safe(session), errors.Safe(from), errors.Safe(end-1))
	}
	return payloads, recs, err
}
