// Package pglog is the PostgreSQL Store (docs/rules.md#distribution): the session log of a
// fleet of hosts on many machines, in one database that any of them
// writes and reads. It passes the same conformance suite as the bbolt Log
// (package eventlogtest), byte for byte: the same records, heads, chain
// hashes, errors and classes. Open takes a postgres:// (or postgresql://)
// URL; its search_path parameter selects the schema.
//
// # Schema
//
// Three tables, created by a read-write Open and upgraded by it (never by
// hand); sessionlog_meta records the schema version (FormatVersion), and a
// newer one is refused with ErrUnsupported (docs/format.md#format-versions).
//
//	sessionlog_meta      name text PK, value bigint       ("format" → 2)
//	sessionlog_sessions  id text COLLATE "C" PK            one row per session
//	                     header bytea                      record: codec.EncodeRecord(header line)
//	                     published boolean                 false while an Import or Fork stages it
//	                     stage bytea, lease_until timestamptz  the stager's token and lease
//	                     next, turns bigint                head: next seq, turn/start count
//	                     last_time double precision        head: time of the last event
//	                     chain bytea                       head: chain hash (docs/rules.md#chain-hash), 32 bytes
//	                     stored bigint                     head: sum of the stored record sizes
//	sessionlog_events    session text COLLATE "C", seq bigint   PK (session, seq)
//	                     rec bytea                         record: codec.EncodeEventRecord(payload)
//
// Records are the bbolt store's records exactly (version byte, msgpack
// payload, CRC32C), so verify checks them the same way and a copy between
// the stores moves bytes, not values. The head columns are the fields of
// bbolt's head record. Ids sort bytewise (COLLATE "C"), as in bbolt.
//
// # Writes
//
// The primary key (session, seq) and an append's condition on the
// session's (next, chain) give optimistic concurrency from the database
// itself: of two writers racing for one seq, in any processes on any
// machines, one succeeds and the other gets ErrConflict. Each append is
// one statement (see commit.go), so a conflict aborts nothing else, and
// appends of different sessions in flight together share one transaction
// and one WAL flush (group commit). synchronous_commit is on for every
// connection of a writable Store, so an acknowledged append is durable.
// The converse does not hold: a process killed after sending a batch may
// still have it committed, as the server finishes what it was sent (an
// acknowledgement lost, as a crash loses one); a writer that then
// extends the session from an older view gets ErrConflict.
//
// Validation is eventlog's: the same checks (eventlog.CheckEvent), the
// same injected Validator, kept per session in the same bounded LRU
// (internal/sessioncache) and rebuilt by replaying the stored events on a
// miss. Another process may append to a session this one has cached: the
// commit's condition catches a stale state, and an append naming a later
// seq than the cache knows makes the store reload it from the database.
//
// Import and Fork stage the session unpublished (with a random token and a
// lease of stagingLease, renewed by every batch), copy its event rows in
// with the COPY protocol in batches of Options.ImportBatch, and publish it
// with one final update of the head. Readers never see an unpublished
// session. A read-write Open removes the staged rows whose lease has run
// out: what a crashed importer left (the database's clock decides, so
// machines' clocks need not agree).
//
// # Reads
//
// Scans read pages of at most 256 rows (and 4 MiB), one short query each,
// so memory stays bounded and no transaction stays open between calls.
// A read-only Store sets default_transaction_read_only on every
// connection and never creates anything: a database without the schema
// is ErrNotFound.
//
// # Time limits
//
// Every connection is opened with lock_timeout (DefaultLockTimeout, 5 s),
// statement_timeout (DefaultStatementTimeout, 1 min) and
// idle_in_transaction_session_timeout (the statement timeout), so no
// statement waits without end for a lock another session holds (a LOCK
// TABLE by hand, a migration, a stalled writer) and no transaction of the
// store holds its locks for long. Options (this package's) sets them;
// a zero field keeps the URL's parameter of that name, else the default.
// A statement the server cancels for either bound (SQLSTATE 55P03,
// 57014) fails its call with eventlog.ErrLocked, the message naming the
// operation and the bound, never SQL or values; a write so refused wrote
// nothing. A group commit past a bound fails every write of its batch at
// once rather than retrying them one by one, each waiting again.
// Options.ConnectTimeout bounds the connection attempt.
//
// # Logs and metrics
//
// eventlog.Options.Logger and Metrics work as for the bbolt Log, under the
// same names where the meaning is the same: eventlog.MetricCommitDuration
// (a Create or Append until durable), eventlog.MetricCommitEvents (events
// per group-commit transaction) and the eventlog.MetricValidator counters
// (recorded by the validator cache both stores share). bbolt's
// eventlog.MetricSyncDuration has no counterpart: the server's WAL flush
// is part of MetricRoundTrip, the time of one group-commit transaction
// on the server. MetricRetries counts the transactions run again, by
// SQLSTATE. Log lines name the target without its password, session ids,
// seqs and SQLSTATEs, and errors only redacted (cockroachdb/errors
// Redact); never event content. Nil options log and count nothing.
//
// # Distributed SQL: CockroachDB and YugabyteDB (design, untested here)
//
// These databases cannot run on this project's machines, so what follows
// is the design the SQL was written for, not a tested claim. The store
// uses no advisory locks, no sequences and no global counter row: every
// write names its own keys (session id, seq), so nothing serialises
// writers of different sessions. The statements are plain PostgreSQL that
// both databases accept (INSERT … ON CONFLICT DO NOTHING, a data-modifying
// CTE, unnest of arrays, COPY FROM STDIN); the collation clause COLLATE
// "C" would be dropped there, since both order text keys bytewise already.
//
// Both run every transaction SERIALIZABLE and report conflicts as SQLSTATE
// 40001, and an ambiguous commit (a node lost mid-commit) as 40003. The
// committer retries both, up to maxRetries times: an append names its
// seqs and is conditional on the head it extends, so a rerun either
// commits once or finds its own earlier commit (the session already at
// its new next seq and chain hash) and reports success. The test suite
// runs the conformance suite with default_transaction_isolation =
// serializable to exercise that path on PostgreSQL.
//
// Hot spots: the primary keys start with the session id, which hosts
// draw at random (UUIDs), so ranges split across nodes by session and a
// session's events sit together, in seq order, for scans. No key is
// sequential across sessions, so hash-sharded indexes are not needed; a
// deployment whose ids were sequential (time-ordered) should hash-shard
// both primary keys (CockroachDB: USING HASH; YugabyteDB: HASH on the
// session column). Group commit matters less there (a commit costs a
// consensus round, not an fsync) but still cuts round trips. The staging
// lease uses now(), which both provide from their hybrid clocks.
package pglog
