package pglog

import (
	"context"
	"sort"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/jackc/pgx/v5"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/internal/engine"
)

// Group commit.
//
// The engine's committer hands each batch of writes (up to 1024 writes
// or maxBatchBytes) to commit, which sends them all in one transaction as
// one pipelined batch of statements and commits once (one WAL flush, with
// synchronous_commit on); the engine answers each caller with its own
// result.
//
// Each request is one statement that checks and writes at once, so a
// request that fails its check writes nothing and aborts nothing: a
// create inserts the session row unless the id exists (ON CONFLICT DO
// NOTHING); an append updates the session row only where next and chain
// are still what the appender validated against, and inserts its event
// rows only if that update happened (a data-modifying CTE). Zero rows
// affected is the conflict. The row lock that update takes orders
// concurrent writers of one session, across processes; the primary key
// (session, seq) backs it. Requests go in session id order, so two
// processes' batches lock rows in the same order and never deadlock.
//
// A transaction that fails with SQLSTATE 40001 (serialization), 40P01
// (deadlock) or 40003 (ambiguous commit), or before it reached the
// server, runs again, up to maxRetries times. After an ambiguous commit,
// a retried append that finds the session already at its own new next
// seq and chain hash is its own earlier commit, and succeeds: the append
// names its seqs, and the chain hash covers every byte before them. Any
// other failure of the transaction as a whole makes the committer retry
// the requests one by one, each in its own transaction, so every caller
// gets its own answer; except a statement past lock_timeout or
// statement_timeout (ErrLocked), which every request of the batch gets,
// since one by one each would wait as long again.

const (
	// maxBatchBytes bounds the record bytes in one transaction.
	maxBatchBytes = 32 << 20
	// maxRetries bounds the reruns of a transaction that failed with a
	// retryable error.
	maxRetries = 8
)

// commit commits batch and returns one result per write, in batch's
// order (which it sorts by session id), and the number of transactions it
// ran.
func (s *Store) commit(batch []*engine.Write, out []error) ([]error, int) {
	sort.Slice(batch, func(i, j int) bool { return batch[i].Session < batch[j].Session })
	txns := 0
	errs, err := s.retry(batch, &txns)
	if err == nil {
		return append(out, errs...), txns
	}
	errs = make([]error, len(batch))
	if len(batch) == 1 || errors.Is(err, eventlog.ErrLocked) {
		// Past a time bound, one by one would wait that long again for
		// each write: every caller gets the batch's error.
		if len(batch) > 1 {
			s.obs.Log.Warn("pglog: group commit waited past a time bound; its writes fail",
				"target", s.target, "writes", len(batch), "sqlstate", sqlState(err))
		}
		for i := range errs {
			errs[i] = err
		}
		return append(out, errs...), txns
	}
	// The error names no user content once redacted: pgx's messages may
	// quote values.
	s.obs.Log.Warn("pglog: group commit failed; retrying its writes one by one",
		"target", s.target, "writes", len(batch), "sqlstate", sqlState(err), "err", errors.Redact(err))
	for i, w := range batch {
		one, err := s.retry([]*engine.Write{w}, &txns)
		if err != nil {
			errs[i] = err
		} else {
			errs[i] = one[0]
		}
	}
	return append(out, errs...), txns
}

// retry runs batch in one transaction, again while it fails retryably,
// counting the transactions in txns.
func (s *Store) retry(batch []*engine.Write, txns *int) ([]error, error) {
	maybeCommitted := false
	for attempt := 0; ; attempt++ {
		*txns++
		t := s.obs.start()
		errs, err := s.runTx(batch, maybeCommitted)
		s.obs.roundTripped(t)
		if err == nil {
			events := 0
			for i, e := range errs {
				if e == nil {
					events += len(batch[i].Recs)
				}
			}
			s.obs.Events(events)
			return errs, nil
		}
		if attempt >= maxRetries || !retryable(err) {
			return nil, errors.Wrapf(s.bounded(context.Background(), err), "write transaction on %s", errors.Safe(s.target))
		}
		s.obs.retried(context.Background(), err)
		if sqlState(err) == stateAmbiguous {
			maybeCommitted = true
		}
		time.Sleep(time.Duration(1<<attempt) * time.Millisecond)
	}
}

// The statements of a batch.
const (
	sqlCreate = `INSERT INTO sessionlog_sessions (id, header, published, next, turns, last_time, chain, stored)
VALUES ($1, $2, true, 0, 0, $3, $4, 0) ON CONFLICT (id) DO NOTHING`
	sqlAppend = `WITH u AS (
	UPDATE sessionlog_sessions SET next = $3, turns = $4, last_time = $5, chain = $6, stored = $7
	WHERE id = $1 AND published AND next = $2 AND chain = $8
	RETURNING id
)
INSERT INTO sessionlog_events (session, seq, rec)
SELECT u.id, t.seq, t.rec FROM u, unnest($9::bigint[], $10::bytea[]) AS t(seq, rec)`
)

// runTx runs batch in one transaction. A request whose check fails gets
// its error in errs; err is the failure of the transaction as a whole.
//
// Normally the batch is sent as one pipeline, which the server runs as
// one implicit transaction committed at its end: one round trip and one
// WAL flush for the whole batch, acknowledged only once the commit is.
// After an ambiguous commit, it runs in an explicit transaction instead,
// to look for its own earlier commit before committing.
func (s *Store) runTx(batch []*engine.Write, maybeCommitted bool) (errs []error, err error) {
	ctx := context.Background()
	b := s.batchOf(batch)
	if !maybeCommitted {
		br := s.pool.SendBatch(ctx, b)
		errs, err = results(br, batch)
		// Close reads up to the end of the pipeline: the commit.
		if cerr := br.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		return errs, nil
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(ctx)
		}
	}()
	br := tx.SendBatch(ctx, b)
	errs, err = results(br, batch)
	if cerr := br.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	for i, r := range batch {
		if errs[i] == nil {
			continue
		}
		var next int64
		var chain []byte
		err := tx.QueryRow(ctx, `SELECT next, chain FROM sessionlog_sessions WHERE id = $1 AND published`,
			r.Session).Scan(&next, &chain)
		if err == nil && next == r.New.Next && string(chain) == string(r.New.Chain[:]) {
			errs[i] = nil // our own commit, whose answer was lost
		}
	}
	return errs, tx.Commit(ctx)
}

// batchOf queues the statements of batch.
func (s *Store) batchOf(batch []*engine.Write) *pgx.Batch {
	b := &pgx.Batch{}
	for _, r := range batch {
		if r.Create {
			b.Queue(sqlCreate, r.Session, r.HeaderRec, r.New.LastTime, r.New.Chain[:])
			continue
		}
		seqs := make([]int64, len(r.Recs))
		for i := range seqs {
			seqs[i] = r.Old.Next + int64(i)
		}
		b.Queue(sqlAppend, r.Session, r.Old.Next, r.New.Next, r.New.Turns, r.New.LastTime, r.New.Chain[:],
			r.New.StoredBytes, r.Old.Chain[:], seqs, r.Recs)
	}
	return b
}

// results reads one result per request: zero rows affected is the
// request's conflict; an error is the batch's.
func results(br pgx.BatchResults, batch []*engine.Write) ([]error, error) {
	errs := make([]error, len(batch))
	for i, r := range batch {
		tag, err := br.Exec()
		if err != nil {
			return nil, err
		}
		if tag.RowsAffected() != 0 {
			continue
		}
		if r.Create {
			errs[i] = engine.Conflictf("pglog: session %q exists already (or is being imported)", errors.Safe(r.Session))
		} else {
			errs[i] = engine.Conflictf("pglog: session %q changed under this writer", errors.Safe(r.Session))
		}
	}
	return errs, nil
}
