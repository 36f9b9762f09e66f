package pglog

import (
	"context"
	"errors"

	crdb "github.com/cockroachdb/errors"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/errclass"
)

// SQLSTATEs the store acts on.
const (
	stateSerialization = "40001" // serialization_failure: retry
	stateDeadlock      = "40P01" // deadlock_detected: retry
	stateAmbiguous     = "40003" // statement_completion_unknown: retry, checking for our own commit
	stateUndefinedTbl  = "42P01" // undefined_table: no store here
	stateUniqueViol    = "23505" // unique_violation
	stateDupTable      = "42P07" // duplicate_table (racing schema creation)
	stateReadOnlyTx    = "25006" // read_only_sql_transaction
	stateLockTimeout   = "55P03" // lock_not_available: waited past lock_timeout
	stateCanceled      = "57014" // query_canceled: ran past statement_timeout
)

// bounded marks err eventlog.ErrLocked when the server cancelled a
// statement for waiting past lock_timeout or running past
// statement_timeout, saying which bound and its value; the caller's
// wrap names the operation. A statement cancelled because ctx was is the
// caller's cancellation, and other errors are returned as they are.
func (s *Store) bounded(ctx context.Context, err error) error {
	var msg, value string
	switch sqlState(err) {
	case stateLockTimeout:
		msg, value = "waited past lock_timeout (%s) for a lock another session holds", s.lockTimeout
	case stateCanceled:
		if ctx.Err() != nil {
			return err
		}
		msg, value = "ran past statement_timeout (%s)", s.statementTimeout
	default:
		return err
	}
	return crdb.WithHint(errclass.Mark(crdb.Wrapf(err, msg, crdb.Safe(value)), eventlog.ErrLocked),
		"another session holds a lock the store needs, or the server is slow; lock_timeout and "+
			"statement_timeout (URL parameters, or pglog.Options) set how long a statement may wait")
}

// sqlState returns the SQLSTATE of err, or "".
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// retryable reports whether a transaction that failed with err may be run
// again: a serialization failure or deadlock (nothing was committed), an
// ambiguous commit (something may have been: the retry recognises its own
// commit, since an append names its seqs), or a request that was never
// sent.
func retryable(err error) bool {
	switch sqlState(err) {
	case stateSerialization, stateDeadlock, stateAmbiguous:
		return true
	}
	// A request that never reached the server (a pooled connection that
	// died with a restarted server) is safe to send again.
	return pgconn.SafeToRetry(err)
}
