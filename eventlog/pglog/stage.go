package pglog

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/internal/engine"
)

// Import and Fork write a session in several transactions (docs/rules.md#import;
// the engine drives them): the first inserts the session row unpublished, with a random stage token
// and a lease; each copies up to Options.ImportBatch event rows in with
// the COPY protocol and renews the lease; the last one sets the head and
// published, which makes the session visible. Readers never see an
// unpublished session. On any error the staged rows are deleted; a crash
// leaves them, reserved until the lease runs out, and then a read-write
// Open removes them.

// staged is one session being staged.
type staged struct {
	s         *Store
	id        string
	token     []byte
	headerRec []byte
	head      eventlog.Head // the head the unpublished row starts with
}

// stage reserves the id in the database by inserting the unpublished row
// (the engine has claimed it in this process). An id that exists,
// published or staged, is ErrConflict and nothing is written.
func (s *Store) stage(ctx context.Context, hdr codec.SessionHeader, headerRec []byte) (*staged, error) {
	token := make([]byte, 16)
	_, _ = rand.Read(token) // never fails (crypto/rand's contract)
	st := &staged{s: s, id: hdr.ID, token: token, headerRec: headerRec,
		head: eventlog.Head{Header: hdr, LastTime: hdr.CreatedAt, Chain: eventlog.ChainStart(headerRec)}}
	var tag pgconn.CommandTag
	err := s.read(ctx, func() error { // a 40001 here committed nothing: rerun it
		var err error
		tag, err = s.pool.Exec(ctx, `INSERT INTO sessionlog_sessions
			(id, header, published, stage, lease_until, next, turns, last_time, chain, stored)
			VALUES ($1, $2, false, $3, now() + $4::interval, 0, 0, $5, $6, 0) ON CONFLICT (id) DO NOTHING`,
			st.id, st.headerRec, st.token, leaseText, st.head.LastTime, st.head.Chain[:])
		return err
	})
	switch {
	case err != nil:
		return nil, errors.Wrapf(err, "pglog: stage session %q", errors.Safe(st.id))
	case tag.RowsAffected() == 0:
		return nil, engine.Conflictf("pglog: session %q exists already (or is being imported)", errors.Safe(st.id))
	}
	return st, nil
}

// leaseText is stagingLease as an SQL interval.
var leaseText = fmt.Sprintf("%d seconds", int(stagingLease/time.Second))

// Write copies recs in one transaction; publish sets the head and
// publishes the session too.
func (st *staged) Write(ctx context.Context, first int64, recs [][]byte, publish *eventlog.Head) ([]byte, error) {
	var err error
	for attempt := 0; ; attempt++ {
		err = pgx.BeginFunc(ctx, st.s.pool, func(tx pgx.Tx) error { return st.writeTx(ctx, tx, first, recs, publish) })
		if err == nil || attempt >= maxRetries || !retryable(err) {
			break
		}
		st.s.obs.retried(ctx, err)
		time.Sleep(time.Duration(1<<attempt) * time.Millisecond)
	}
	return nil, st.s.bounded(ctx, err)
}

func (st *staged) writeTx(ctx context.Context, tx pgx.Tx, first int64, recs [][]byte, publish *eventlog.Head) error {
	tag, err := tx.Exec(ctx, `UPDATE sessionlog_sessions SET lease_until = now() + $3::interval
		WHERE id = $1 AND stage = $2 AND NOT published`, st.id, st.token, leaseText)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return engine.Conflictf("staged session %q changed under its import (its lease ran out?)", errors.Safe(st.id))
	}
	if len(recs) > 0 {
		i := 0
		n, err := tx.CopyFrom(ctx, pgx.Identifier{"sessionlog_events"}, []string{"session", "seq", "rec"},
			pgx.CopyFromFunc(func() ([]any, error) {
				if i == len(recs) {
					return nil, nil
				}
				row := []any{st.id, first + int64(i), recs[i]}
				i++
				return row, nil
			}))
		if err != nil {
			if sqlState(err) == stateUniqueViol {
				return engine.Corruptf("session %q: event rows from seq %d exist under an unpublished session",
					errors.Safe(st.id), errors.Safe(first))
			}
			return err
		}
		if n != int64(len(recs)) {
			return errors.AssertionFailedf("pglog: COPY stored %d of %d rows", errors.Safe(n), errors.Safe(len(recs)))
		}
	}
	if publish == nil {
		return nil
	}
	_, err = tx.Exec(ctx, `UPDATE sessionlog_sessions SET published = true, stage = NULL, lease_until = NULL,
		next = $2, turns = $3, last_time = $4, chain = $5, stored = $6 WHERE id = $1`,
		st.id, publish.Next, publish.Turns, publish.LastTime, publish.Chain[:], publish.StoredBytes)
	return err
}

// Drop deletes the staged rows.
func (st *staged) Drop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := st.s.read(ctx, func() error { return st.deleteStaged(ctx) })
	if err != nil {
		return errors.WithHint(errors.Wrapf(err, "pglog: remove staged session %q", errors.Safe(st.id)),
			"a read-write open of the store removes it once its lease has run out")
	}
	return nil
}

// deleteStaged deletes the staged rows of this staged session, if they are still
// its own.
func (st *staged) deleteStaged(ctx context.Context) error {
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
