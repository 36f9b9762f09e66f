package pglog

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/internal/engine"
)

// Store is the PostgreSQL Store (docs/rules.md#distribution): sessions in three tables of
// one database, shared by any number of processes on any number of
// machines. It is safe for concurrent use. Open it with Open and release
// it with Close.
//
// Its Store methods (Create, Append, Head, Sessions, SessionPage, Scan,
// Fork, Import, Close) and CommitStats are the shared engine's, which
// Store embeds (see eventlog's package doc); the SQL is its own.
//
// Goroutines: a read-write Store runs the engine's committer goroutine
// (group commit, see commit.go), started by Open and ended by Close once
// every in-flight write has been answered; pgxpool runs its own health
// checker. No method leaves a goroutine behind.
type Store struct {
	*core
	pool     *pgxpool.Pool
	target   string           // the URL without its password, for messages
	opts     eventlog.Options // defaults applied
	readOnly bool
	// lockTimeout and statementTimeout are the bounds in force, as
	// messages print them.
	lockTimeout, statementTimeout string
	obs                           *observer
}

// core is the engine a Store embeds, whose exported methods are the
// Store's: an alias, so that the embedded field is unexported.
type core = engine.Engine

var _ eventlog.Store = (*Store)(nil)

// Options are the PostgreSQL store's own options, beside the
// eventlog.Options every store takes. The zero value (or nil) means the
// defaults.
//
// StatementTimeout and LockTimeout bound every statement and transaction,
// set on each connection as the server's parameters of the same names. A
// zero (or negative) one means the URL's parameter when the URL has one
// (?lock_timeout=2s), else the default. A statement past either bound is
// cancelled by the server, and the call fails with ErrLocked naming the
// operation that waited; nothing of it is written.
type Options struct {
	// ConnectTimeout bounds the connection attempt;
	// DefaultConnectTimeout when 0.
	ConnectTimeout time.Duration
	// StatementTimeout is statement_timeout: the longest one statement
	// runs, waits for locks included (DefaultStatementTimeout). It also
	// bounds how long a transaction may sit idle
	// (idle_in_transaction_session_timeout), so that no transaction of
	// the store holds its locks for longer.
	StatementTimeout time.Duration
	// LockTimeout is lock_timeout: the longest a statement waits for a
	// lock another session holds (DefaultLockTimeout), such as a table
	// lock taken by hand or a row another writer has not committed yet.
	LockTimeout time.Duration
}

// DefaultConnectTimeout bounds the connection attempt when
// Options.ConnectTimeout is 0.
const DefaultConnectTimeout = 10 * time.Second

// The bounds of every statement when neither Options nor the URL sets
// them: a lock held elsewhere makes a call fail after DefaultLockTimeout,
// never hang, and no statement runs longer than DefaultStatementTimeout
// (a group commit of 32 MiB or an import batch on a slow link included).
const (
	DefaultStatementTimeout = time.Minute
	DefaultLockTimeout      = 5 * time.Second
)

// IsURL reports whether target names a PostgreSQL database
// (postgres://… or postgresql://…) rather than a bbolt file.
func IsURL(target string) bool {
	return strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://")
}

// Open connects to the database at url (postgres://…, with any
// parameter pgx understands; search_path selects the schema) and checks
// its schema. A read-write Open creates or upgrades the schema and removes
// what crashed imports left; a read-only Open runs every transaction
// read-only and creates nothing: a database without a store is
// ErrNotFound. popts bound the connection attempt and every statement
// and transaction after it (see Options; either options may be nil). A
// newer schema is ErrUnsupported. As with boltlog.Open, a writable store
// needs opts.NewValidator or opts.Unvalidated.
func Open(ctx context.Context, url string, opts *eventlog.Options, popts *Options) (*Store, error) {
	var o eventlog.Options
	if opts != nil {
		o = *opts
	}
	var po Options
	if popts != nil {
		po = *popts
	}
	connect := po.ConnectTimeout
	if connect <= 0 {
		connect = DefaultConnectTimeout
	}
	o = engine.WithDefaults(o)
	if err := engine.CheckWritable(&o); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message may quote the URL, password included: say only
		// that it does not parse.
		return nil, errors.WithHint(engine.Invalidf("pglog: the database URL does not parse"),
			"the form is postgres://USER@HOST:PORT/DATABASE[?search_path=SCHEMA]")
	}
	target := redact(cfg)
	cfg.ConnConfig.ConnectTimeout = connect
	rp := cfg.ConnConfig.RuntimeParams
	if o.ReadOnly {
		// Every transaction read-only: a read command cannot write, even
		// by mistake.
		rp["default_transaction_read_only"] = "on"
	} else {
		// Acknowledged means durable (docs/rules.md#distribution), whatever the server's
		// default; NoSync is for tests and benchmarks.
		rp["synchronous_commit"] = "on"
		if o.NoSync {
			rp["synchronous_commit"] = "off"
		}
	}
	lockTimeout := bound(rp, "lock_timeout", po.LockTimeout, DefaultLockTimeout)
	statementTimeout := bound(rp, "statement_timeout", po.StatementTimeout, DefaultStatementTimeout)
	if _, ok := rp["idle_in_transaction_session_timeout"]; !ok {
		rp["idle_in_transaction_session_timeout"] = rp["statement_timeout"]
	}
	if cfg.MaxConns < 8 {
		cfg.MaxConns = 8
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, errors.Wrapf(err, "pglog: connect to %s", errors.Safe(target))
	}
	s := &Store{pool: pool, target: target, opts: o, readOnly: o.ReadOnly,
		lockTimeout: lockTimeout, statementTimeout: statementTimeout, obs: newObserver(o.Logger, o.Metrics)}
	pctx, cancel := context.WithTimeout(ctx, connect+time.Minute)
	defer cancel()
	if err := s.pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, errors.WithHint(errors.Wrapf(err, "pglog: connect to %s", errors.Safe(target)),
			"is PostgreSQL running and reachable there?")
	}
	if err := s.prepare(pctx); err != nil {
		pool.Close()
		return nil, errors.Wrapf(err, "pglog: open %s", errors.Safe(target))
	}
	s.core = engine.New(engine.Config{Name: target, Options: o, Metrics: s.obs.Metrics,
		MaxBatchBytes: maxBatchBytes, SharedWriters: true}, backend{s})
	s.obs.Log.Info("pglog: store opened", "target", target, "readOnly", o.ReadOnly,
		"validated", o.NewValidator != nil && !o.Unvalidated)
	return s, nil
}

// bound sets the server parameter name (a time) in rp, the parameters of
// every connection: opt when it is positive, else the URL's value when
// the URL set one, else def. It returns the value in force, for messages.
func bound(rp map[string]string, name string, opt, def time.Duration) string {
	if opt <= 0 {
		if v, ok := rp[name]; ok {
			if _, err := strconv.ParseInt(v, 10, 64); err == nil {
				return v + "ms" // the server's unit for a bare number
			}
			return v
		}
		opt = def
	}
	ms := max(opt.Milliseconds(), 1) // 0 would mean no bound at all
	rp[name] = strconv.FormatInt(ms, 10) + "ms"
	return (time.Duration(ms) * time.Millisecond).String()
}

// redact renders the connection target without its password.
func redact(cfg *pgxpool.Config) string {
	c := cfg.ConnConfig
	t := fmt.Sprintf("postgres://%s@%s:%d/%s", c.User, c.Host, c.Port, c.Database)
	if sp := c.RuntimeParams["search_path"]; sp != "" {
		t += "?search_path=" + sp
	}
	return t
}

// Target is the database the store is connected to, as a URL without its
// password.
func (s *Store) Target() string { return s.target }

// begin registers a method of the Store's own in flight (engine.Begin):
// ErrClosed after Close. The caller defers done.
func (s *Store) begin() (done func(), err error) { return engine.Begin(s.core) }
