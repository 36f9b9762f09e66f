package engine

import (
	"context"
	"io"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
)

// Import and Fork write a session in several transactions (docs/rules.md#import):
// the driver's Stage claims the id in the store without publishing it,
// each Stage.Write stores up to Options.ImportBatch events, and the last
// one writes the head, which publishes the session. Until then readers do
// not see it; on any error the staged session is dropped, and what a
// crash leaves is removed by a later read-write Open (each driver says
// when).

// stager accumulates one staged session.
type stager struct {
	e    *Engine
	id   string
	head eventlog.Head
	ch   *chainer
	v    eventlog.Validator
	st   Stage    // nil until claimed
	recs [][]byte // records not yet written, from seq head.Next-len(recs)
	size int      // bytes in recs
}

// claim reserves hdr's id for staging: in this process, then in the
// store (Backend.Stage). The caller releases the process's claim with
// e.staging.Remove.
func (e *Engine) claim(ctx context.Context, hdr codec.SessionHeader) (*stager, error) {
	id := hdr.ID
	if !e.staging.Add(id) {
		return nil, Conflictf("eventlog: session %q is being imported or forked", errors.Safe(id))
	}
	// A Create of the id that got past its staging check holds the id's
	// lock until its write is committed: wait for it, then ask the store.
	unlock, err := e.locks.Lock(ctx, id)
	if err == nil {
		unlock()
		err = ctx.Err()
	}
	headerRec := codec.EncodeRecord(nil, hdr.Raw)
	s := &stager{e: e, id: id, v: e.newValidator(hdr),
		head: eventlog.Head{Header: hdr, LastTime: hdr.CreatedAt, Chain: eventlog.ChainStart(headerRec)}}
	s.ch = newChainer(s.head.Chain)
	if err == nil {
		s.st, err = e.b.Stage(ctx, hdr, headerRec)
	}
	if err != nil {
		e.staging.Remove(id)
		return nil, err
	}
	return s, nil
}

// add folds one checked event, whose stored record is rec, into the
// session, and writes a full batch.
func (s *stager) add(ctx context.Context, ev *codec.Event, rec []byte) error {
	if err := validate(s.v, s.id, ev); err != nil {
		return err
	}
	s.ch.add(ev.Raw)
	if ev.Type == codec.TypeTurnStart {
		s.head.Turns++
	}
	s.head.Next++
	s.head.LastTime = ev.Time
	s.head.StoredBytes += int64(len(rec))
	s.recs = append(s.recs, rec)
	s.size += len(rec)
	if len(s.recs) >= s.e.opts.ImportBatch || s.size >= s.e.cfg.MaxBatchBytes {
		return s.flush(ctx, false)
	}
	return nil
}

// flush writes the pending records; publish writes the head too.
func (s *stager) flush(ctx context.Context, publish bool) error {
	first := s.head.Next - int64(len(s.recs))
	var head *eventlog.Head
	if publish {
		s.head.Chain = s.ch.c
		head = &s.head
	}
	token, err := s.st.Write(ctx, first, s.recs, head)
	if err != nil {
		return err
	}
	for i := range s.recs {
		s.recs[i] = nil
	}
	s.recs, s.size = s.recs[:0], 0
	if publish {
		s.e.cache.Put(s.id, &state{head: s.head, token: token, v: s.v})
	}
	return nil
}

// abort drops the staged session; err is the reason.
func (s *stager) abort(err error) error {
	return errors.CombineErrors(err, s.st.Drop())
}

// Import stores the session read from src atomically (docs/rules.md#import): the
// events are checked as they stream (seq contiguous from 0, codec
// decoding, a fresh Validator) and staged in batches of
// Options.ImportBatch events; the last one publishes the session. It
// returns the number of events stored. An existing id is ErrConflict
// before anything is written; on any error nothing is left and the error
// names the seq. src's events are not retained.
func (e *Engine) Import(ctx context.Context, h codec.SessionHeader, src eventlog.Source) (int64, error) {
	if err := e.beginWrite(); err != nil {
		return 0, err
	}
	defer e.ops.Done()
	hdr, err := CheckHeader(h)
	if err != nil {
		return 0, errors.Wrap(err, "eventlog: import")
	}
	s, err := e.claim(ctx, hdr)
	if err != nil {
		return 0, errors.Wrap(err, "eventlog: import")
	}
	defer e.staging.Remove(hdr.ID)
	if err := s.importFrom(ctx, src); err != nil {
		return 0, s.abort(codec.At(err, hdr.ID, s.head.Next))
	}
	return s.head.Next, nil
}

func (s *stager) importFrom(ctx context.Context, src eventlog.Source) error {
	for {
		if s.head.Next%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		ev, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		d, err := checkEvent(s.id, &ev, s.head.Next)
		if err != nil {
			return err
		}
		if err := s.add(ctx, &d, codec.EncodeEventRecord(nil, d.Raw)); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.flush(ctx, true)
}

// Fork creates child holding source's events 0..at verbatim (docs/rules.md#fork):
// the same record bytes, the chain hash recomputed from child's own header.
// at must be the seq of a turn/end of source, and child's header must name
// source as parentSession and at+1 as seedLength (else ErrInvalid); an
// existing child id is ErrConflict; an unknown source is ErrNotFound. The
// copied records are checked as they are read (a damaged one is
// ErrCorrupt naming source and seq) and fed to a fresh Validator of the
// child. Large forks are staged like Import.
func (e *Engine) Fork(ctx context.Context, source string, at int64, child codec.SessionHeader) error {
	if err := e.beginWrite(); err != nil {
		return err
	}
	defer e.ops.Done()
	hdr, err := CheckHeader(child)
	if err != nil {
		return errors.Wrapf(err, "eventlog: fork of session %q", errors.Safe(source))
	}
	switch {
	case hdr.ParentSession != source:
		return Invalidf("eventlog: fork of session %q: the child's parentSession is %q",
			errors.Safe(source), errors.Safe(hdr.ParentSession))
	case hdr.SeedLength != at+1:
		return Invalidf("eventlog: fork of session %q at seq %d: the child's seedLength is %d (want %d)",
			errors.Safe(source), errors.Safe(at), errors.Safe(hdr.SeedLength), errors.Safe(at+1))
	case hdr.ID == source:
		return Conflictf("eventlog: fork of session %q onto itself", errors.Safe(source))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	srcHead, _, err := e.b.Head(ctx, source)
	if err != nil {
		return errors.Wrapf(err, "eventlog: fork of session %q", errors.Safe(source))
	}
	if at < 0 || at >= srcHead.Next {
		return Invalidf("eventlog: fork of session %q at seq %d: the session has seqs 0..%d",
			errors.Safe(source), errors.Safe(at), errors.Safe(srcHead.Next-1))
	}
	// The fork point first, so that a bad one claims nothing.
	payloads, _, err := e.events(ctx, source, at, at+1)
	if err != nil {
		return errors.Wrap(codec.At(err, source, at), "fork")
	}
	point, err := DecodeEvent(source, at, payloads[0])
	if err != nil {
		return errors.Wrap(err, "fork")
	}
	if point.Type != codec.TypeTurnEnd {
		return errors.Wrap(codec.NamesSession(codec.NamesSeq(Invalidf("eventlog: seq %d of session %q is %s, not turn/end",
			errors.Safe(at), errors.Safe(source), point.Type))), "fork")
	}
	s, err := e.claim(ctx, hdr)
	if err != nil {
		return errors.Wrapf(err, "eventlog: fork of session %q", errors.Safe(source))
	}
	defer e.staging.Remove(hdr.ID)
	if err := s.forkFrom(ctx, source, at); err != nil {
		return s.abort(errors.Wrap(codec.At(err, source, at), "fork"))
	}
	return nil
}

func (s *stager) forkFrom(ctx context.Context, source string, at int64) error {
	for next := int64(0); next <= at; {
		if err := ctx.Err(); err != nil {
			return err
		}
		payloads, recs, err := s.e.events(ctx, source, next, at+1)
		if err != nil {
			return err
		}
		for i, p := range payloads {
			ev, err := DecodeEvent(source, next+int64(i), p)
			if err != nil {
				return err
			}
			// The record as the log holds it: the driver's, or as an
			// append writes it.
			rec := codec.EncodeEventRecord(nil, p)
			if recs != nil {
				rec = recs[i]
			}
			if err := s.add(ctx, &ev, rec); err != nil {
				return err
			}
		}
		next += int64(len(payloads))
	}
	return s.flush(ctx, true)
}
