package pglog

import (
	"errors"

	crdb "github.com/cockroachdb/errors"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sessionlog/sessionlog/eventlog"
)

// corruptf, conflictf, invalidf, notFoundf and unsupportedf return errors
// marked with eventlog's classes (SPEC §11), created one frame up.
func corruptf(format string, args ...interface{}) error {
	return crdb.Mark(crdb.NewWithDepthf(1, format, args...), eventlog.ErrCorrupt)
}

func conflictf(format string, args ...interface{}) error {
	return crdb.Mark(crdb.NewWithDepthf(1, format, args...), eventlog.ErrConflict)
}

func invalidf(format string, args ...interface{}) error {
	return crdb.Mark(crdb.NewWithDepthf(1, format, args...), eventlog.ErrInvalid)
}

func notFoundf(format string, args ...interface{}) error {
	return crdb.Mark(crdb.NewWithDepthf(1, format, args...), eventlog.ErrNotFound)
}

func unsupportedf(format string, args ...interface{}) error {
	return crdb.Mark(crdb.NewWithDepthf(1, format, args...), eventlog.ErrUnsupported)
}

// noSession is the ErrNotFound error for a session id.
func noSession(id string) error {
	return crdb.Mark(crdb.NewWithDepthf(1, "no session %q", crdb.Safe(id)), eventlog.ErrNotFound)
}

// SQLSTATEs the store acts on.
const (
	stateSerialization = "40001" // serialization_failure: retry
	stateDeadlock      = "40P01" // deadlock_detected: retry
	stateAmbiguous     = "40003" // statement_completion_unknown: retry, checking for our own commit
	stateUndefinedTbl  = "42P01" // undefined_table: no store here
	stateUniqueViol    = "23505" // unique_violation
	stateDupTable      = "42P07" // duplicate_table (racing schema creation)
	stateReadOnlyTx    = "25006" // read_only_sql_transaction
)

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
