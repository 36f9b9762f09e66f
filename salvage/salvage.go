package salvage

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/errclass"
	"github.com/sessionlog/sessionlog/rebuild"
)

// Source is the damaged store salvage reads. *boltlog.Log (opened
// read-only) implements it. Its methods may fail or panic on damage; each
// call runs under recover.
type Source interface {
	// SessionIDs lists the published sessions without decoding their
	// records. Ids returned together with an error are salvaged too.
	SessionIDs(ctx context.Context) ([]string, error)
	// Head returns a session's head record, decoded.
	Head(ctx context.Context, session string) (eventlog.Head, error)
	// HeaderRecord returns a session's stored header record, not decoded.
	HeaderRecord(ctx context.Context, session string) ([]byte, error)
	// Records calls fn with every stored record of the session from key
	// seq from on, in key order, not decoded; rec is valid only during
	// the call, and an error from fn stops the walk and is returned as is.
	Records(ctx context.Context, session string, from int64, fn func(seq int64, rec []byte) error) error
}

// Destination is the new store salvage writes. *boltlog.Log implements
// it.
type Destination interface {
	Import(ctx context.Context, h codec.SessionHeader, src eventlog.Source) (int64, error)
}

// Chunks of records read per call of Source.Records: at most chunkRecords
// records or chunkBytes bytes (but at least one record), so that memory
// stays bounded whatever a session's length.
const (
	chunkRecords = 256
	chunkBytes   = 4 << 20
)

// errChunk stops a Records walk once a chunk is full.
var errChunk = errors.New("salvage: chunk full")

// Copy copies every session of src into dst, each as the longest prefix of
// its events that still verifies (see the package doc), and reports what
// it copied and lost. dst should be a new, empty store. The error is
// non-nil only when the copy itself failed: ctx was cancelled, or dst
// failed to write; damage in src is reported in the Report, never as an
// error. Sessions are copied one at a time, in the order src lists them.
func Copy(ctx context.Context, src Source, dst Destination) (Report, error) {
	var rep Report
	var ids []string
	err := protect("list sessions", func() error {
		var err error
		ids, err = src.SessionIDs(ctx)
		return err
	})
	if cerr := ctx.Err(); cerr != nil {
		return rep, errors.Wrap(cerr, "salvage")
	}
	if err != nil {
		rep.List = err
	}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			rep.Sessions = append(rep.Sessions, Session{ID: id, Lost: true, End: -1, Cause: Duplicate, At: -1,
				Err: damagedf("salvage: the session list names session %q again", errors.Safe(id))})
			continue
		}
		seen[id] = true
		s, err := copySession(ctx, src, dst, id)
		if err != nil {
			return rep, err
		}
		rep.Sessions = append(rep.Sessions, s)
	}
	return rep, nil
}

// copySession copies one session. The error is non-nil only when the copy
// must stop (ctx, or dst failing).
func copySession(ctx context.Context, src Source, dst Destination, id string) (Session, error) {
	s := Session{ID: id, End: -1, At: -1}
	var hrec []byte
	err := protect(fmt.Sprintf("session %q: header record", id), func() error {
		var err error
		hrec, err = src.HeaderRecord(ctx, id)
		return err
	})
	if cerr := ctx.Err(); cerr != nil {
		return s, errors.Wrap(cerr, "salvage")
	}
	if err != nil {
		s.Lost, s.Cause, s.Err = true, Bucket, err
		return s, nil
	}
	hdr, err := decodeHeader(id, hrec)
	if err != nil {
		s.Lost, s.Cause, s.Err = true, Header, err
		return s, s.count(ctx, src)
	}
	var head eventlog.Head
	err = protect(fmt.Sprintf("session %q: head record", id), func() error {
		var err error
		head, err = src.Head(ctx, id)
		return err
	})
	if cerr := ctx.Err(); cerr != nil {
		return s, errors.Wrap(cerr, "salvage")
	}
	switch {
	case errors.Is(err, ErrUnpublished):
		s.Cause, s.Err = Unpublished, err
		return s, nil
	case err != nil:
		s.HeadErr = err
	default:
		s.End = head.Next
	}

	// Import the prefix that verifies. The new store checks every event
	// again; should it refuse one that passed here, import again without
	// it and what follows.
	var refused error
	limit := int64(-1)
	var r *reader
	for {
		r = newReader(ctx, src, id, hrec, s.End, limit)
		n, err := dst.Import(ctx, hdr, r)
		if err == nil {
			s.Copied = n
			break
		}
		if cerr := ctx.Err(); cerr != nil {
			return s, errors.Wrap(cerr, "salvage")
		}
		if !errors.Is(err, eventlog.ErrInvalid) {
			return s, errors.Wrapf(err, "salvage: session %q: write the new store", errors.Safe(id))
		}
		if r.handed == 0 {
			s.Lost, s.Cause, s.Err = true, Refused, err
			return s, nil
		}
		limit, refused = r.handed-1, err // strictly less than the last limit: this ends
	}

	switch {
	case r.stop != nil:
		s.Cause, s.At, s.Err = r.stop.cause, r.stop.seq, r.stop.err
	case refused != nil:
		s.Cause, s.At, s.Err = Refused, limit, refused
	case s.HeadErr == nil && r.chain != head.Chain:
		s.Cause, s.Err = Chain, damagedf("salvage: session %q: the chain hash of its %d events is %x…, the head's %x…",
			errors.Safe(id), errors.Safe(s.Copied), errors.Safe(r.chain[:6]), errors.Safe(head.Chain[:6]))
	}
	if err := s.survey(ctx, src, r.next); err != nil {
		return s, err
	}
	return s, nil
}

// survey walks the records past the copied prefix, when there are any to
// look at: it counts the ones after the damage that still pass their CRC
// (Later), finds the end of a session whose head is damaged, and flags
// records past the head's count (Extra).
func (s *Session) survey(ctx context.Context, src Source, from int64) error {
	if s.Cause == None && s.HeadErr == nil {
		from = s.End // only records past the head's count are of interest
	} else if s.At >= 0 && s.Cause != Gap {
		from = s.At + 1 // the damaged record itself is not counted
	}
	last, later, extra := int64(-1), int64(0), int64(0)
	err := protect(fmt.Sprintf("session %q: records from seq %d", s.ID, from), func() error {
		return src.Records(ctx, s.ID, from, func(seq int64, rec []byte) error {
			if s.HeadErr == nil && seq >= s.End {
				extra++
				return errChunk // one is enough to know
			}
			last = seq
			if _, err := codec.DecodeRecord(rec); err == nil {
				later++
			}
			return nil
		})
	})
	if cerr := ctx.Err(); cerr != nil {
		return errors.Wrap(cerr, "salvage")
	}
	if s.Cause != None || s.HeadErr != nil {
		s.Later = later
	}
	if s.HeadErr != nil {
		if err != nil {
			s.End = -1 // the walk broke: the end is not known
		} else {
			s.End = max(s.Copied, last+1)
		}
	}
	if extra > 0 && s.Cause == None {
		s.Cause, s.At = Extra, s.End
		s.Err = damagedf("salvage: session %q: records past the head's count of %d events", errors.Safe(s.ID), errors.Safe(s.End))
	}
	return nil
}

// count sets End, for a session that is lost whole, to one past the last
// key of its records; it stays -1 when they cannot be walked.
func (s *Session) count(ctx context.Context, src Source) error {
	last := int64(-1)
	err := protect(fmt.Sprintf("session %q: records", s.ID), func() error {
		return src.Records(ctx, s.ID, 0, func(seq int64, _ []byte) error {
			last = seq
			return nil
		})
	})
	if cerr := ctx.Err(); cerr != nil {
		return errors.Wrap(cerr, "salvage")
	}
	if err == nil {
		s.End = last + 1
	}
	return nil
}

// decodeHeader decodes a stored header record, which must name session id.
func decodeHeader(id string, rec []byte) (codec.SessionHeader, error) {
	payload, err := codec.DecodeRecord(rec)
	if err != nil {
		return codec.SessionHeader{}, errors.Wrapf(err, "salvage: session %q: header record", errors.Safe(id))
	}
	h, err := codec.DecodeSessionHeader(payload)
	if err != nil {
		return codec.SessionHeader{}, errclass.Mark(errors.Wrapf(err, "salvage: session %q: header record", errors.Safe(id)), ErrDamaged)
	}
	if h.ID != id {
		return codec.SessionHeader{}, damagedf("salvage: session %q: its header record names session %q",
			errors.Safe(id), errors.Safe(h.ID))
	}
	return h, nil
}

// stop is where and why a reader stopped before the end of the session.
type stop struct {
	cause Cause
	seq   int64
	err   error
}

// record is a stored record copied out of the source, with its key.
type record struct {
	seq int64
	b   []byte
}

// reader is the eventlog.Source that Import pulls a session's events
// from: it reads the source's records in chunks and hands out events for
// as long as they verify, then io.EOF.
type reader struct {
	ctx   context.Context
	src   Source
	id    string
	end   int64 // the head's count; -1 when unknown
	limit int64 // hand out at most this many events; -1: no limit
	fold  *rebuild.Fold
	chain [32]byte

	next    int64 // the seq of the next event
	handed  int64 // events handed out
	recs    []record
	readErr error // the error that ended the walk of the records
	walked  bool  // the walk of the records has ended
	stop    *stop
}

func newReader(ctx context.Context, src Source, id string, hrec []byte, end, limit int64) *reader {
	return &reader{ctx: ctx, src: src, id: id, end: end, limit: limit, fold: rebuild.NewFold(false),
		chain: eventlog.ChainStart(hrec)}
}

// Next implements eventlog.Source.
func (r *reader) Next() (codec.Event, error) {
	switch {
	case r.stop != nil,
		r.limit >= 0 && r.handed >= r.limit,
		r.end >= 0 && r.next >= r.end:
		return codec.Event{}, io.EOF
	}
	if len(r.recs) == 0 && !r.walked {
		if err := r.fill(); err != nil {
			return codec.Event{}, err
		}
	}
	if len(r.recs) == 0 {
		switch {
		case r.readErr != nil:
			r.halt(Read, r.readErr)
		case r.end >= 0:
			r.halt(Missing, damagedf("salvage: session %q: the records end at seq %d, the head counts %d events",
				errors.Safe(r.id), errors.Safe(r.next), errors.Safe(r.end)))
		}
		return codec.Event{}, io.EOF
	}
	rec := r.recs[0]
	r.recs[0] = record{}
	r.recs = r.recs[1:]
	ev, cause, err := r.check(rec)
	if err != nil {
		r.halt(cause, err)
		return codec.Event{}, io.EOF
	}
	r.next++
	r.handed++
	return ev, nil
}

// halt stops the reader at r.next.
func (r *reader) halt(cause Cause, err error) {
	r.stop = &stop{cause: cause, seq: r.next, err: err}
}

// fill reads the next chunk of records. Its error is ctx's only: a
// failure of the source ends the walk (readErr) after the records read
// before it.
func (r *reader) fill() error {
	r.recs = r.recs[:0]
	size := 0
	err := protect(fmt.Sprintf("session %q: records from seq %d", r.id, r.next), func() error {
		return r.src.Records(r.ctx, r.id, r.next, func(seq int64, rec []byte) error {
			r.recs = append(r.recs, record{seq: seq, b: append([]byte(nil), rec...)})
			size += len(rec)
			if len(r.recs) >= chunkRecords || size >= chunkBytes {
				return errChunk
			}
			return nil
		})
	})
	if cerr := r.ctx.Err(); cerr != nil {
		return errors.Wrap(cerr, "salvage")
	}
	switch {
	case errors.Is(err, errChunk):
	case err != nil:
		r.readErr, r.walked = err, true
	default:
		r.walked = true
	}
	return nil
}

// check verifies one record as the event of seq r.next and folds it.
func (r *reader) check(rec record) (codec.Event, Cause, error) {
	if rec.seq != r.next {
		return codec.Event{}, Gap, damagedf("salvage: session %q: no record of seq %d (the next key is seq %d)",
			errors.Safe(r.id), errors.Safe(r.next), errors.Safe(rec.seq))
	}
	payload, err := codec.DecodeRecord(rec.b)
	if err != nil {
		cause := Frame
		if codec.ChecksumMismatch(rec.b) {
			cause = CRC
		}
		return codec.Event{}, cause, errors.Wrapf(err, "salvage: session %q seq %d", errors.Safe(r.id), errors.Safe(r.next))
	}
	ev, err := codec.DecodeEvent(payload)
	if err != nil {
		return codec.Event{}, Decode, errclass.Mark(errors.Wrapf(err, "salvage: session %q seq %d",
			errors.Safe(r.id), errors.Safe(r.next)), ErrDamaged)
	}
	if ev.Seq != r.next {
		return codec.Event{}, Key, damagedf("salvage: session %q: the record under key seq %d holds seq %d",
			errors.Safe(r.id), errors.Safe(r.next), errors.Safe(ev.Seq))
	}
	if err := r.fold.Add(&ev); err != nil {
		return codec.Event{}, Fold, errclass.Mark(errors.Wrapf(err, "salvage: session %q seq %d",
			errors.Safe(r.id), errors.Safe(r.next)), ErrDamaged)
	}
	r.chain = eventlog.ChainNext(r.chain, payload)
	return ev, None, nil
}

// protect runs fn, a read of the source, so that damage cannot crash the
// caller: a panic (bbolt panics on some malformed pages, and a pointer
// past the end of its memory map faults, which SetPanicOnFault turns into
// a panic) becomes an ErrDamaged error naming what was being read. The
// panic value is kept: bbolt's hold page ids, never content.
func protect(what string, fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if p := recover(); p != nil {
			err = damagedf("salvage: %s: reading the store panicked: %s", errors.Safe(what), errors.Safe(fmt.Sprint(p)))
		}
	}()
	return fn()
}
