package pglog

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/sessioncache"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// Store is the PostgreSQL Store (SPEC §8.6): sessions in three tables of
// one database, shared by any number of processes on any number of
// machines. It is safe for concurrent use. Open it with Open and release
// it with Close.
//
// Goroutines: a read-write Store runs one committer goroutine (group
// commit, see commit.go), started by Open and ended by Close once every
// in-flight write has been answered; pgxpool runs its own health checker.
// No method leaves a goroutine behind.
type Store struct {
	pool     *pgxpool.Pool
	target   string // the URL without its password, for messages
	opts     eventlog.Options
	readOnly bool
	// lockTimeout and statementTimeout are the bounds in force, as
	// messages print them.
	lockTimeout, statementTimeout string

	mu     sync.RWMutex // guards closed
	closed bool
	ops    sync.WaitGroup
	once   sync.Once

	queue         chan *commitReq
	committerDone chan struct{}

	locks   sessioncache.Locks
	cache   *sessioncache.Cache[*state]
	staging sessioncache.Claims // ids an Import or Fork of this process is staging

	commits, committed atomic.Int64 // see CommitStats
	obs                *observer
}

var _ eventlog.Store = (*Store)(nil)

// DefaultConnectTimeout bounds the connection attempt when
// Options.LockTimeout is 0.
const DefaultConnectTimeout = 10 * time.Second

// The bounds of every statement when neither Options.Postgres nor the URL
// sets them (see eventlog.PostgresOptions): a lock held elsewhere makes a
// call fail after DefaultLockTimeout, never hang, and no statement runs
// longer than DefaultStatementTimeout (a group commit of 32 MiB or an
// import batch on a slow link included).
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
// ErrNotFound. opts.LockTimeout bounds the connection attempt
// (DefaultConnectTimeout when 0); opts.Postgres bounds every statement
// and transaction after it (lock_timeout, statement_timeout). A newer
// schema is ErrUnsupported. As with eventlog.Open, a writable store needs
// opts.NewValidator or opts.Unvalidated.
func Open(ctx context.Context, url string, opts *eventlog.Options) (*Store, error) {
	var o eventlog.Options
	if opts != nil {
		o = *opts
	}
	connect := o.LockTimeout
	if connect <= 0 {
		connect = DefaultConnectTimeout
	}
	o = o.WithDefaults()
	if err := o.CheckWritable(); err != nil {
		return nil, errors.WithHint(err,
			"set Options.NewValidator (sessionlog.Open wires the default, rebuild.NewValidator) or Options.Unvalidated")
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message may quote the URL, password included: say only
		// that it does not parse.
		return nil, errors.WithHint(invalidf("pglog: the database URL does not parse"),
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
		// Acknowledged means durable (SPEC §8.6), whatever the server's
		// default; NoSync is for tests and benchmarks.
		rp["synchronous_commit"] = "on"
		if o.NoSync {
			rp["synchronous_commit"] = "off"
		}
	}
	lockTimeout := bound(rp, "lock_timeout", o.Postgres.LockTimeout, DefaultLockTimeout)
	statementTimeout := bound(rp, "statement_timeout", o.Postgres.StatementTimeout, DefaultStatementTimeout)
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
		lockTimeout: lockTimeout, statementTimeout: statementTimeout,
		cache: sessioncache.New[*state](o.ValidatorCache), obs: newObserver(o.Logger, o.Metrics)}
	s.cache.Observe(s.obs.kit)
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
	if !s.readOnly {
		s.queue = make(chan *commitReq, maxBatch)
		s.committerDone = make(chan struct{})
		go s.committer()
	}
	s.obs.log.Info("pglog: store opened", "target", target, "readOnly", o.ReadOnly, "validated", o.Replays())
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

// CommitStats reports the group commit's work since Open: the number of
// write transactions the committer ran (retries included) and the number
// of writes (Create and Append calls) they committed.
func (s *Store) CommitStats() (transactions, writes int64) {
	return s.commits.Load(), s.committed.Load()
}

// Close waits for the methods in flight, stops the committer and closes
// the connections. It may be called more than once; later calls return
// nil.
func (s *Store) Close() error {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.ops.Wait()
		if s.queue != nil {
			close(s.queue)
			<-s.committerDone
		}
		s.pool.Close()
	})
	return nil
}

// begin registers a method in flight; the caller must call s.ops.Done.
func (s *Store) begin() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return errclass.Mark(errors.NewWithDepthf(1, "pglog: store %s is closed", errors.Safe(s.target)), eventlog.ErrClosed)
	}
	s.ops.Add(1)
	return nil
}

// beginWrite is begin for the write methods.
func (s *Store) beginWrite() error {
	if err := s.begin(); err != nil {
		return err
	}
	if s.readOnly {
		s.ops.Done()
		return errclass.Mark(errors.NewWithDepthf(1, "pglog: store %s is open read-only", errors.Safe(s.target)), eventlog.ErrReadOnly)
	}
	return nil
}
