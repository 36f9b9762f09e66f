package pglog

import (
	"context"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/jackc/pgx/v5"

	"github.com/sessionlog/sessionlog/eventlog/internal/engine"
)

// FormatVersion is the schema version this code reads and writes,
// recorded in sessionlog_meta under "format" (docs/format.md#format-versions). A store with a
// newer version is refused with ErrUnsupported, an older one is upgraded
// by a read-write Open, never misread.
//
// Version 2 (as in the bbolt store's format 2) allows compressed event
// records (codec record version 2); the tables are unchanged, so a
// program that reads only version 1 records refuses the store at Open
// instead of refusing its records one by one.
const FormatVersion = 2

// migrations[v] upgrades a store from schema version v to v+1;
// migrations[0] creates a new store. Each runs in one transaction, with
// the version update, so a crash leaves the old version or the new one.
// The statements avoid sequences, advisory locks and serial keys, so they
// run unchanged on CockroachDB and YugabyteDB (see the package doc).
var migrations = []string{
	0: `
CREATE TABLE IF NOT EXISTS sessionlog_meta (
	name  text PRIMARY KEY,
	value bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS sessionlog_sessions (
	id          text COLLATE "C" PRIMARY KEY,
	header      bytea NOT NULL,
	published   boolean NOT NULL,
	stage       bytea,
	lease_until timestamptz,
	next        bigint NOT NULL,
	turns       bigint NOT NULL,
	last_time   double precision NOT NULL,
	chain       bytea NOT NULL,
	stored      bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS sessionlog_events (
	session text COLLATE "C" NOT NULL,
	seq     bigint NOT NULL,
	rec     bytea NOT NULL,
	PRIMARY KEY (session, seq)
);
INSERT INTO sessionlog_meta (name, value) VALUES ('format', 1) ON CONFLICT (name) DO NOTHING;
`,
	// 1 → 2: compressed event records; no table changes.
	1: `SELECT 1`,
}

// stagingLease is how long an unpublished session (an Import or Fork in
// progress) stays reserved without a sign of life; each staged batch
// renews it. A read-write Open removes the unpublished sessions whose
// lease has run out: what a crashed importer left. The clock is the
// database's, so machines' clocks need not agree.
const stagingLease = 5 * time.Minute

// format reads the store's schema version; found is false when there is
// no store (no meta table) at all.
func format(ctx context.Context, q querier) (v int64, found bool, err error) {
	err = q.QueryRow(ctx, `SELECT value FROM sessionlog_meta WHERE name = 'format'`).Scan(&v)
	switch {
	case err == nil:
		return v, true, nil
	case sqlState(err) == stateUndefinedTbl:
		return 0, false, nil
	case errors.Is(err, pgx.ErrNoRows):
		return 0, true, engine.Corruptf("sessionlog_meta has no format row")
	}
	return 0, false, err
}

// querier is what format needs: a pool, a connection or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// checkFormat refuses a store this code cannot read.
func checkFormat(v int64) error {
	switch {
	case v > FormatVersion:
		return errors.WithHint(engine.Unsupportedf("store format %d is newer than this program's %d",
			errors.Safe(v), errors.Safe(FormatVersion)), "use a newer logtool")
	case v < 1:
		return engine.Corruptf("store format %d is unknown", errors.Safe(v))
	}
	return nil
}

// prepare checks the schema and, read-write, creates or upgrades it and
// removes what crashed imports left.
func (s *Store) prepare(ctx context.Context) error {
	v, found, err := format(ctx, s.pool)
	if err != nil {
		return errors.Wrap(s.bounded(ctx, err), "read the store format")
	}
	if s.readOnly {
		if !found {
			return errors.WithHint(engine.NotFoundf("no store here"),
				"a read-only open never creates a store: check the URL, or import a session first")
		}
		return checkFormat(v)
	}
	if found {
		if err := checkFormat(v); err != nil {
			return err
		}
	}
	for attempt := 0; ; attempt++ {
		err := s.migrate(ctx, found)
		if err == nil {
			break
		}
		found = true // or the retry creates it
		// Two processes creating one store race on the catalog; the loser
		// finds the tables there on its next try.
		if attempt < 5 && (retryable(err) || sqlState(err) == stateUniqueViol || sqlState(err) == stateDupTable) {
			continue
		}
		return errors.Wrap(s.bounded(ctx, err), "create or upgrade the schema")
	}
	_, err = s.pool.Exec(ctx, `
WITH gone AS (
	DELETE FROM sessionlog_sessions WHERE NOT published AND lease_until < now() RETURNING id
)
DELETE FROM sessionlog_events WHERE session IN (SELECT id FROM gone)`)
	return errors.Wrap(s.bounded(ctx, err), "remove unpublished sessions")
}

// migrate runs the migrations from the stored version up to FormatVersion.
// found says whether the meta table exists: reading a missing table
// would abort the transaction, so a new store skips the read.
func (s *Store) migrate(ctx context.Context, found bool) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		v := int64(0)
		if found {
			// FOR UPDATE: concurrent upgraders take turns.
			err := tx.QueryRow(ctx, `SELECT value FROM sessionlog_meta WHERE name = 'format' FOR UPDATE`).Scan(&v)
			if errors.Is(err, pgx.ErrNoRows) {
				return engine.Corruptf("sessionlog_meta has no format row")
			}
			if err != nil {
				return err
			}
			if err := checkFormat(v); err != nil {
				return err
			}
		}
		for ; v < FormatVersion; v++ {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return errors.Wrapf(err, "upgrade the schema from version %d", errors.Safe(v))
			}
			if _, err := tx.Exec(ctx, `UPDATE sessionlog_meta SET value = $1 WHERE name = 'format'`, v+1); err != nil {
				return errors.Wrapf(err, "upgrade the schema from version %d", errors.Safe(v))
			}
		}
		return nil
	})
}
