package pglog

import (
	"context"
	"io"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
)

// state is what an appender of this process knows about a session: its
// head as last committed by this process (or read from the database) and
// the validation state that has seen exactly events 0..head.Next-1.
// Another process may have appended since: the commit's condition on
// (next, chain) catches that, and a caller naming a later seq makes the
// store reload the state.
type state struct {
	head eventlog.Head
	v    eventlog.Validator
}

// Create stores a new, empty session with its header line, published at
// once. An id that exists, or is being imported, is ErrConflict; a header
// that names a seedLength is ErrInvalid.
func (s *Store) Create(ctx context.Context, h codec.SessionHeader) error {
	if !s.obs.on {
		return s.create(ctx, h)
	}
	t := time.Now()
	err := s.create(ctx, h)
	s.obs.committed(ctx, t)
	return err
}

func (s *Store) create(ctx context.Context, h codec.SessionHeader) error {
	if err := s.beginWrite(); err != nil {
		return err
	}
	defer s.ops.Done()
	hdr, err := eventlog.CheckHeader(h)
	if err != nil {
		return err
	}
	id := hdr.ID
	if hdr.SeedLength != 0 {
		return invalidf("pglog: create session %q: a header with seedLength %d is a fork child (use Fork or Import)",
			errors.Safe(id), errors.Safe(hdr.SeedLength))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	unlock, err := s.locks.Lock(ctx, id)
	if err != nil {
		return errors.Wrapf(err, "pglog: waiting for session %q", errors.Safe(id))
	}
	defer unlock()
	headerRec := codec.EncodeRecord(nil, hdr.Raw)
	head := eventlog.Head{Header: hdr, LastTime: hdr.CreatedAt, Chain: eventlog.ChainStart(headerRec)}
	err = s.commit(&commitReq{create: true, session: id, header: headerRec, head: head})
	if err != nil {
		s.cache.Remove(id)
		return errors.Wrapf(err, "pglog: create session %q", errors.Safe(id))
	}
	s.cache.Put(id, &state{head: head, v: s.opts.Validator(hdr)})
	return nil
}

// Append stores events atomically at the end of the session (SPEC §8.2),
// as eventlog.Log does: contiguous seqs (else ErrInvalid), the first the
// session's next (else ErrConflict), every event re-decoded and validated
// before anything is written. Two writers racing for one seq, in any
// processes, get one success and one ErrConflict from the database's
// unique key. ctx is honoured until the events are queued for the commit;
// then Append waits for the commit's result.
func (s *Store) Append(ctx context.Context, session string, events []codec.Event) error {
	if !s.obs.on {
		return s.append(ctx, session, events)
	}
	t := time.Now()
	err := s.append(ctx, session, events)
	s.obs.committed(ctx, t)
	return err
}

func (s *Store) append(ctx context.Context, session string, events []codec.Event) error {
	if err := s.beginWrite(); err != nil {
		return err
	}
	defer s.ops.Done()
	if len(events) == 0 {
		return invalidf("pglog: append to session %q: no events", errors.Safe(session))
	}
	first := events[0].Seq
	decoded := make([]codec.Event, len(events))
	size := 0
	for i := range events {
		d, err := eventlog.CheckEvent(session, &events[i], first+int64(i))
		if err != nil {
			return errors.Wrap(err, "pglog: append")
		}
		decoded[i] = d
		size += len(d.Raw) + 5
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	unlock, err := s.locks.Lock(ctx, session)
	if err != nil {
		return errors.Wrapf(err, "pglog: waiting for session %q", errors.Safe(session))
	}
	defer unlock()
	st, cached, err := s.state(ctx, session)
	if err == nil && cached && first != st.head.Next {
		// Another process may have appended since this one cached the
		// session: ask the database.
		s.cache.Remove(session)
		st, _, err = s.state(ctx, session)
	}
	if err != nil {
		return errors.Wrapf(err, "pglog: append to session %q", errors.Safe(session))
	}
	if first != st.head.Next {
		s.cache.Put(session, st)
		return conflictf("pglog: append to session %q: first seq %d, but the session's next seq is %d",
			errors.Safe(session), errors.Safe(first), errors.Safe(st.head.Next))
	}
	for i := range decoded {
		if err := eventlog.Validate(st.v, session, &decoded[i]); err != nil {
			s.cache.Remove(session)
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		s.cache.Remove(session)
		return err
	}
	buf := make([]byte, 0, size)
	recs := make([][]byte, len(decoded))
	head := st.head
	for i := range decoded {
		start := len(buf)
		buf = codec.EncodeEventRecord(buf, decoded[i].Raw)
		recs[i] = buf[start:len(buf):len(buf)]
		head.Chain = eventlog.ChainNext(head.Chain, decoded[i].Raw)
		if decoded[i].Type == codec.TypeTurnStart {
			head.Turns++
		}
	}
	head.Next += int64(len(decoded))
	head.LastTime = decoded[len(decoded)-1].Time
	head.StoredBytes += int64(len(buf))
	err = s.commit(&commitReq{session: session, old: st.head, head: head, recs: recs, size: size})
	if err != nil {
		s.cache.Remove(session)
		return errors.Wrapf(err, "pglog: append to session %q seqs %d..%d",
			errors.Safe(session), errors.Safe(first), errors.Safe(head.Next-1))
	}
	st.head = head
	s.cache.Put(session, st)
	return nil
}

// state returns the session's state from the cache (cached true), or
// rebuilds it from the database: the head, and a fresh Validator fed every
// stored event. The caller holds the session's lock and puts the state
// back (or not).
func (s *Store) state(ctx context.Context, session string) (st *state, cached bool, err error) {
	if st, ok := s.cache.Lookup(ctx, session); ok {
		return st, true, nil
	}
	head, err := s.head(ctx, session)
	if err != nil {
		return nil, false, err
	}
	st = &state{head: head, v: s.opts.Validator(head.Header)}
	if !s.opts.Replays() || head.Next == 0 {
		return st, false, nil
	}
	it := &iterator{s: s, ctx: ctx, session: session, next: 0, end: head.Next}
	defer it.Close()
	for {
		ev, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false, err
		}
		if err := st.v.Validate(&ev); err != nil {
			s.obs.log.Error("pglog: a stored event fails validation on replay", "session", session, "seq", ev.Seq)
			return nil, false, errors.Wrapf(err, "session %q: replaying stored seq %d through the validator",
				errors.Safe(session), errors.Safe(ev.Seq))
		}
	}
	s.cache.Replayed(ctx, head.Next)
	return st, false, nil
}
