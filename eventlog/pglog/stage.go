package pglog

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
)

// Import and Fork write a session in several transactions (SPEC §8.2):
// the first inserts the session row unpublished, with a random stage token
// and a lease; each copies up to Options.ImportBatch event rows in with
// the COPY protocol and renews the lease; the last one sets the head and
// published, which makes the session visible. Readers never see an
// unpublished session. On any error the staged rows are deleted; a crash
// leaves them, reserved until the lease runs out, and then a read-write
// Open removes them.

// stager accumulates one staged session.
type stager struct {
	s         *Store
	id        string
	token     []byte
	headerRec []byte
	head      eventlog.Head
	v         eventlog.Validator
	claimed   bool     // the unpublished row exists
	recs      [][]byte // records not yet written, from seq head.Next-len(recs)
	size      int
}

func (s *Store) newStager(hdr codec.SessionHeader) *stager {
	headerRec := codec.EncodeRecord(nil, hdr.Raw)
	token := make([]byte, 16)
	_, _ = rand.Read(token) // never fails (crypto/rand's contract)
	return &stager{s: s, id: hdr.ID, token: token, headerRec: headerRec, v: s.opts.Validator(hdr),
		head: eventlog.Head{Header: hdr, LastTime: hdr.CreatedAt, Chain: eventlog.ChainStart(headerRec)}}
}

// claim reserves the id: in this process, then in the database by
// inserting the unpublished row. An id that exists, published or staged,
// is ErrConflict and nothing is written.
func (st *stager) claim(ctx context.Context) error {
	if !st.s.staging.Add(st.id) {
		return conflictf("session %q is being imported or forked", errors.Safe(st.id))
	}
	var tag pgconn.CommandTag
	err := st.s.read(ctx, func() error { // a 40001 here committed nothing: rerun it
		var err error
		tag, err = st.s.pool.Exec(ctx, `INSERT INTO sessionlog_sessions
			(id, header, published, stage, lease_until, next, turns, last_time, chain, stored)
			VALUES ($1, $2, false, $3, now() + $4::interval, 0, 0, $5, $6, 0) ON CONFLICT (id) DO NOTHING`,
			st.id, st.headerRec, st.token, leaseText, st.head.LastTime, st.head.Chain[:])
		return err
	})
	switch {
	case err != nil:
		err = errors.Wrapf(err, "stage session %q", errors.Safe(st.id))
	case tag.RowsAffected() == 0:
		err = conflictf("session %q exists already (or is being imported)", errors.Safe(st.id))
	}
	if err != nil {
		st.s.staging.Remove(st.id)
		return err
	}
	st.claimed = true
	return nil
}

// leaseText is stagingLease as an SQL interval.
var leaseText = fmt.Sprintf("%d seconds", int(stagingLease/time.Second))

// release ends the claim of this process.
func (st *stager) release() { st.s.staging.Remove(st.id) }

// add folds one checked event, whose stored record is rec, into the
// session, and flushes a full batch.
func (st *stager) add(ctx context.Context, ev *codec.Event, rec []byte) error {
	if err := eventlog.Validate(st.v, st.id, ev); err != nil {
		return err
	}
	st.head.Chain = eventlog.ChainNext(st.head.Chain, ev.Raw)
	if ev.Type == codec.TypeTurnStart {
		st.head.Turns++
	}
	st.head.Next++
	st.head.LastTime = ev.Time
	st.head.StoredBytes += int64(len(rec))
	st.recs = append(st.recs, rec)
	st.size += len(rec)
	if len(st.recs) >= st.s.opts.ImportBatch || st.size >= maxBatchBytes {
		return st.flush(ctx, false)
	}
	return nil
}

// flush copies the pending records in one transaction; publish sets the
// head and publishes the session too.
func (st *stager) flush(ctx context.Context, publish bool) error {
	first := st.head.Next - int64(len(st.recs))
	var err error
	for attempt := 0; ; attempt++ {
		err = pgx.BeginFunc(ctx, st.s.pool, func(tx pgx.Tx) error { return st.flushTx(ctx, tx, first, publish) })
		if err == nil || attempt >= maxRetries || !retryable(err) {
			break
		}
		st.s.obs.retried(ctx, err)
		time.Sleep(time.Duration(1<<attempt) * time.Millisecond)
	}
	if err != nil {
		return st.s.bounded(ctx, err)
	}
	for i := range st.recs {
		st.recs[i] = nil
	}
	st.recs, st.size = st.recs[:0], 0
	if publish {
		st.s.cache.Put(st.id, &state{head: st.head, v: st.v})
	}
	return nil
}

func (st *stager) flushTx(ctx context.Context, tx pgx.Tx, first int64, publish bool) error {
	tag, err := tx.Exec(ctx, `UPDATE sessionlog_sessions SET lease_until = now() + $3::interval
		WHERE id = $1 AND stage = $2 AND NOT published`, st.id, st.token, leaseText)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return conflictf("staged session %q changed under its import (its lease ran out?)", errors.Safe(st.id))
	}
	if len(st.recs) > 0 {
		i := 0
		n, err := tx.CopyFrom(ctx, pgx.Identifier{"sessionlog_events"}, []string{"session", "seq", "rec"},
			pgx.CopyFromFunc(func() ([]any, error) {
				if i == len(st.recs) {
					return nil, nil
				}
				row := []any{st.id, first + int64(i), st.recs[i]}
				i++
				return row, nil
			}))
		if err != nil {
			if sqlState(err) == stateUniqueViol {
				return corruptf("session %q: event rows from seq %d exist under an unpublished session",
					errors.Safe(st.id), errors.Safe(first))
			}
			return err
		}
		if n != int64(len(st.recs)) {
			return errors.AssertionFailedf("pglog: COPY stored %d of %d rows", errors.Safe(n), errors.Safe(len(st.recs)))
		}
	}
	if !publish {
		return nil
	}
	_, err = tx.Exec(ctx, `UPDATE sessionlog_sessions SET published = true, stage = NULL, lease_until = NULL,
		next = $2, turns = $3, last_time = $4, chain = $5, stored = $6 WHERE id = $1`,
		st.id, st.head.Next, st.head.Turns, st.head.LastTime, st.head.Chain[:], st.head.StoredBytes)
	return err
}

// abort deletes the staged rows, if any; err is the reason.
func (st *stager) abort(err error) error {
	if !st.claimed {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	derr := st.s.read(ctx, func() error { return st.deleteStaged(ctx) })
	if derr != nil {
		derr = errors.WithHint(errors.Wrapf(derr, "pglog: remove staged session %q", errors.Safe(st.id)),
			"a read-write open of the store removes it once its lease has run out")
	}
	return errors.CombineErrors(err, derr)
}

// deleteStaged deletes the staged rows of this stager, if they are still
// its own.
func (st *stager) deleteStaged(ctx context.Context) error {
	return pgx.BeginFunc(ctx, st.s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM sessionlog_sessions WHERE id = $1 AND stage = $2 AND NOT published`,
			st.id, st.token)
		if err != nil || tag.RowsAffected() == 0 {
			return err // gone already: not ours to delete
		}
		_, err = tx.Exec(ctx, `DELETE FROM sessionlog_events WHERE session = $1`, st.id)
		return err
	})
}

// Import stores the session read from src atomically (SPEC §8.2): events
// checked as they stream (seqs contiguous from 0, codec decoding, a fresh
// Validator), copied in batches of Options.ImportBatch, published by the
// last transaction. It returns the number of events stored. An existing
// id is ErrConflict before anything is written; on any error nothing is
// left and the error names the seq.
func (s *Store) Import(ctx context.Context, h codec.SessionHeader, src eventlog.Source) (int64, error) {
	if err := s.beginWrite(); err != nil {
		return 0, err
	}
	defer s.ops.Done()
	hdr, err := eventlog.CheckHeader(h)
	if err != nil {
		return 0, errors.Wrap(err, "pglog: import")
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	st := s.newStager(hdr)
	if err := st.claim(ctx); err != nil {
		return 0, errors.Wrap(err, "pglog: import")
	}
	defer st.release()
	if err := st.importFrom(ctx, src); err != nil {
		return 0, st.abort(errors.Wrapf(err, "pglog: import session %q at seq %d", errors.Safe(hdr.ID), errors.Safe(st.head.Next)))
	}
	return st.head.Next, nil
}

func (st *stager) importFrom(ctx context.Context, src eventlog.Source) error {
	for {
		if st.head.Next%256 == 0 {
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
		d, err := eventlog.CheckEvent(st.id, &ev, st.head.Next)
		if err != nil {
			return err
		}
		if err := st.add(ctx, &d, codec.EncodeEventRecord(nil, d.Raw)); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return st.flush(ctx, true)
}

// Fork creates child holding source's events 0..at verbatim (SPEC §8.5),
// as eventlog.Log does: the same record bytes, the chain hash recomputed
// from child's own header, at the seq of a turn/end (else ErrInvalid),
// child naming source and at+1 (else ErrInvalid), an existing child
// ErrConflict, an unknown source ErrNotFound. Staged like Import.
func (s *Store) Fork(ctx context.Context, source string, at int64, child codec.SessionHeader) error {
	if err := s.beginWrite(); err != nil {
		return err
	}
	defer s.ops.Done()
	hdr, err := eventlog.CheckHeader(child)
	if err != nil {
		return errors.Wrapf(err, "pglog: fork of session %q", errors.Safe(source))
	}
	switch {
	case hdr.ParentSession != source:
		return invalidf("pglog: fork of session %q: the child's parentSession is %q",
			errors.Safe(source), errors.Safe(hdr.ParentSession))
	case hdr.SeedLength != at+1:
		return invalidf("pglog: fork of session %q at seq %d: the child's seedLength is %d (want %d)",
			errors.Safe(source), errors.Safe(at), errors.Safe(hdr.SeedLength), errors.Safe(at+1))
	case hdr.ID == source:
		return conflictf("pglog: fork of session %q onto itself", errors.Safe(source))
	}
	srcHead, err := s.head(ctx, source)
	if err != nil {
		return errors.Wrapf(err, "pglog: fork of session %q", errors.Safe(source))
	}
	if at < 0 || at >= srcHead.Next {
		return invalidf("pglog: fork of session %q at seq %d: the session has seqs 0..%d",
			errors.Safe(source), errors.Safe(at), errors.Safe(srcHead.Next-1))
	}
	// The fork point first, so that a bad one writes nothing.
	var point codec.Event
	err = s.page(ctx, source, at, at+1, func(seq int64, rec []byte) error {
		var err error
		point, err = eventlog.DecodeStoredEvent(source, seq, rec)
		return err
	})
	if err == nil && point.Raw == nil {
		err = corruptf("session %q seq %d: record is missing", errors.Safe(source), errors.Safe(at))
	}
	if err != nil {
		return errors.Wrapf(err, "pglog: fork of session %q", errors.Safe(source))
	}
	if point.Type != codec.TypeTurnEnd {
		return invalidf("pglog: fork of session %q: seq %d is %s, not turn/end",
			errors.Safe(source), errors.Safe(at), point.Type)
	}
	st := s.newStager(hdr)
	if err := st.claim(ctx); err != nil {
		return errors.Wrapf(err, "pglog: fork of session %q", errors.Safe(source))
	}
	defer st.release()
	if err := st.forkFrom(ctx, source, at); err != nil {
		return st.abort(errors.Wrapf(err, "pglog: fork of session %q at seq %d into %q",
			errors.Safe(source), errors.Safe(at), errors.Safe(hdr.ID)))
	}
	return nil
}

func (st *stager) forkFrom(ctx context.Context, source string, at int64) error {
	for next := int64(0); next <= at; {
		if err := ctx.Err(); err != nil {
			return err
		}
		start := next
		var evs []codec.Event
		var recs [][]byte
		err := st.s.page(ctx, source, next, at+1, func(seq int64, rec []byte) error {
			if seq != next {
				return corruptf("session %q seq %d: record is missing (the next stored is seq %d)",
					errors.Safe(source), errors.Safe(next), errors.Safe(seq))
			}
			ev, err := eventlog.DecodeStoredEvent(source, seq, rec)
			if err != nil {
				return err
			}
			evs, recs = append(evs, ev), append(recs, rec)
			next++
			return nil
		})
		if err != nil {
			return err
		}
		if next == start {
			return corruptf("session %q: records of seqs %d..%d are missing",
				errors.Safe(source), errors.Safe(next), errors.Safe(at))
		}
		// Add after the page's query is done: a flush needs a connection.
		for i := range evs {
			if err := st.add(ctx, &evs[i], recs[i]); err != nil {
				return err
			}
		}
	}
	return st.flush(ctx, true)
}
