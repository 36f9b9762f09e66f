package engine

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/errors"
	"go.opentelemetry.io/otel/metric"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/errclass"
	"github.com/sessionlog/sessionlog/internal/observe"
	"github.com/sessionlog/sessionlog/internal/sessioncache"
)

// Backend is a driver's I/O. The engine calls it with the session's
// writer lock held where a write is concerned, and never after Close.
type Backend interface {
	// Head returns a published session's head, and the driver's token
	// for it: what it compares, at commit, to tell that the session did
	// not change under an append (Write.OldToken). An unknown or
	// unpublished session is ErrNotFound; errors name the session.
	Head(ctx context.Context, id string) (h eventlog.Head, token []byte, err error)
	// Events returns the events of a published session from seq from on,
	// below end: at least one, at most a page, contiguous from from.
	// payloads are the events' payloads, their frames checked; recs,
	// when the driver keeps each event's record as the log holds it, are
	// those records (nil otherwise: the engine encodes them again). A
	// missing record is ErrCorrupt naming the session and seq.
	Events(ctx context.Context, id string, from, end int64) (payloads, recs [][]byte, err error)
	// Heads returns the heads of at most n published sessions whose ids
	// sort after after, in id order.
	Heads(ctx context.Context, after string, n int) ([]eventlog.Head, error)
	// Prepare encodes w's driver form in the writer's goroutine (the
	// committer's time is the batch's): it sets w.NewToken.
	Prepare(w *Write) error
	// Commit commits batch, the writes of one group commit, and returns
	// one result per write, in batch's order (it may reorder batch) and
	// the number of transactions it ran. A write whose check fails (the
	// session exists, or changed under the append) gets ErrConflict and
	// writes nothing; the others go on.
	Commit(batch []*Write, errs []error) ([]error, int)
	// Stage starts staging the new session hdr (header record headerRec)
	// for Import or Fork: the id is claimed in this process and no
	// Create of it is in flight. An id the store holds, published or
	// staged, is ErrConflict and nothing is written.
	Stage(ctx context.Context, hdr codec.SessionHeader, headerRec []byte) (Stage, error)
	// Close releases the driver, after the engine has answered every
	// write.
	Close() error
}

// Stage is one session being staged by Import or Fork.
type Stage interface {
	// Write stores recs, the records of events first, first+1, …;
	// publish, when not nil, is the session's final head: the write
	// publishes the session, and returns the head's token.
	Write(ctx context.Context, first int64, recs [][]byte, publish *eventlog.Head) (token []byte, err error)
	// Drop removes what was staged, if anything; its error says how the
	// store removes it later.
	Drop() error
}

// Write is one Create or Append, as the committer hands it to the
// driver.
type Write struct {
	Session string
	// Create is set for a Create, with HeaderRec the header record.
	Create    bool
	HeaderRec []byte
	// Old is the head an Append was validated against (OldToken the
	// driver's token of it); New is the head after the write (NewToken
	// its token, set by Prepare).
	Old, New           eventlog.Head
	OldToken, NewToken []byte
	// Recs are an Append's event records, from seq Old.Next.
	Recs [][]byte
	// Size is the write's record bytes: the batch's bound.
	Size int
	// Driver is the driver's own form of the write (Prepare's).
	Driver any

	done chan error
}

// Config is what a driver tells the engine.
type Config struct {
	// Name names the store in messages (a path, a URL without password).
	Name string
	// Options are the store's options; the engine applies the defaults.
	Options eventlog.Options
	// Metrics are the commit metrics (NewMetrics of the driver's kit).
	Metrics *Metrics
	// MaxBatchBytes bounds the record bytes of one group commit and of
	// one staged batch.
	MaxBatchBytes int
	// Linger is the longest the committer waits for the writers of a
	// previous batch to come back (0: never waits).
	Linger time.Duration
	// SharedWriters is set when other processes may write the same
	// sessions (PostgreSQL): a cached head that an append contradicts is
	// re-read before the append is refused.
	SharedWriters bool
	// CommitterStarted runs in the committer goroutine as it starts.
	CommitterStarted func()
}

// Engine is the shared part of a Store. Its exported methods are the
// Store's; see the package doc.
type Engine struct {
	b    Backend
	cfg  Config
	opts eventlog.Options // defaults applied
	// replay is whether a cache miss replays the stored events through a
	// fresh Validator (false for a store opened Unvalidated).
	replay bool
	m      *Metrics

	mu     sync.RWMutex // guards closed
	closed bool
	ops    sync.WaitGroup // methods in flight
	once   sync.Once

	queue         chan *Write
	committerDone chan struct{}

	locks   sessioncache.Locks
	cache   *sessioncache.Cache[*state]
	staging sessioncache.Claims // ids an Import or Fork of this store is staging

	commits, committed atomic.Int64 // see CommitStats

	// hookBatch, set only by tests before the store is used, runs in the
	// committer before each batch.
	hookBatch func(n int)
}

// state is what an appender knows about a session: its head as last
// committed (or read from the store), the driver's token of it, and the
// validation state that has seen exactly events 0..head.Next-1.
//
// INVARIANTS: a state is read and changed only by the holder of the
// session's lock.
type state struct {
	head  eventlog.Head
	token []byte
	v     eventlog.Validator
}

// WithDefaults returns o with its zero values replaced by the defaults.
func WithDefaults(o eventlog.Options) eventlog.Options {
	if o.ValidatorCache <= 0 {
		o.ValidatorCache = eventlog.DefaultValidatorCache
	}
	if o.ImportBatch <= 0 {
		o.ImportBatch = eventlog.DefaultImportBatch
	}
	return o
}

// CheckWritable reports ErrNoValidation for options that open a writable
// store with neither NewValidator nor Unvalidated, with the hint that
// says what to set.
func CheckWritable(o *eventlog.Options) error {
	if !o.ReadOnly && o.NewValidator == nil && !o.Unvalidated {
		return errors.WithHint(eventlog.ErrNoValidation,
			"set Options.NewValidator (sessionlog.Open wires the default, rebuild.NewValidator) or Options.Unvalidated")
	}
	return nil
}

// New returns the engine of a store whose I/O is b, and starts its
// committer unless the store is read-only.
func New(cfg Config, b Backend) *Engine {
	o := WithDefaults(cfg.Options)
	e := &Engine{b: b, cfg: cfg, opts: o, m: cfg.Metrics, replay: o.NewValidator != nil && !o.Unvalidated,
		cache: sessioncache.New[*state](o.ValidatorCache)}
	e.cache.Observe(e.m.kit)
	if !o.ReadOnly {
		e.queue = make(chan *Write, maxBatch)
		e.committerDone = make(chan struct{})
		go e.committer()
	}
	return e
}

// Close waits for the methods in flight (an Append waits for its commit),
// stops the committer and closes the driver. It may be called more than
// once; later calls return nil.
func (e *Engine) Close() error {
	var err error
	e.once.Do(func() {
		e.mu.Lock()
		e.closed = true
		e.mu.Unlock()
		e.ops.Wait()
		if e.queue != nil {
			close(e.queue)
			<-e.committerDone
		}
		err = e.b.Close()
	})
	return err
}

// CommitStats reports the group commit's work since Open: the number of
// write transactions the committer ran (retries included) and the number
// of writes (Create and Append calls) they committed.
func (e *Engine) CommitStats() (transactions, writes int64) {
	return e.commits.Load(), e.committed.Load()
}

// Begin registers a driver's method in flight, failing with ErrClosed
// after Close; the caller calls the returned done.
func Begin(e *Engine) (done func(), err error) {
	if err := e.begin(); err != nil {
		return nil, err
	}
	return e.ops.Done, nil
}

// BeginWrite is Begin for a driver's write method: ErrReadOnly on a
// read-only store.
func BeginWrite(e *Engine) (done func(), err error) {
	if err := e.beginWrite(); err != nil {
		return nil, err
	}
	return e.ops.Done, nil
}

// begin registers a method in flight; the caller must call e.ops.Done.
func (e *Engine) begin() error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return errclass.Mark(errors.NewWithDepthf(1, "eventlog: store %s is closed", errors.Safe(e.cfg.Name)), eventlog.ErrClosed)
	}
	e.ops.Add(1)
	return nil
}

// beginWrite is begin for the write methods.
func (e *Engine) beginWrite() error {
	if err := e.begin(); err != nil {
		return err
	}
	if e.opts.ReadOnly {
		e.ops.Done()
		return errclass.Mark(errors.NewWithDepthf(1, "eventlog: store %s is open read-only", errors.Safe(e.cfg.Name)), eventlog.ErrReadOnly)
	}
	return nil
}

// Validator returns the validation state of a new session of header h:
// NewValidator's, or one that accepts every event when the store is
// Unvalidated (or read-only, where nothing is appended). A NewValidator
// that returns nil yields one that refuses every event, never a silent
// accept-all.
func (e *Engine) newValidator(h codec.SessionHeader) eventlog.Validator {
	if e.opts.Unvalidated || e.opts.NewValidator == nil {
		return acceptAll{}
	}
	if v := e.opts.NewValidator(h); v != nil {
		return v
	}
	return refuseAll{}
}

// acceptAll is the Validator of a store opened with Options.Unvalidated:
// it accepts every event (codec.DecodeEvent's envelope checks still apply).
type acceptAll struct{}

func (acceptAll) Validate(*codec.Event) error { return nil }

// refuseAll stands in for a nil returned by Options.NewValidator: every
// append of the session fails, rather than pass unchecked.
type refuseAll struct{}

func (refuseAll) Validate(*codec.Event) error {
	return errors.AssertionFailedf("eventlog: Options.NewValidator returned nil")
}

// Metrics are the instruments every store records, made from a driver's
// kit (which also makes the driver's own): with no MeterProvider nothing
// is made, timed or counted.
type Metrics struct {
	kit    *observe.Kit
	Log    *slog.Logger
	On     bool
	commit metric.Float64Histogram
	events metric.Int64Histogram
}

// NewMetrics makes the commit metrics from k.
func NewMetrics(k *observe.Kit) *Metrics {
	m := &Metrics{kit: k, Log: k.Log, On: k.On()}
	m.commit = k.Seconds(eventlog.MetricCommitDuration, "time of one Create or Append until durable")
	m.events = k.Histogram(eventlog.MetricCommitEvents, "{event}", "events written by one group commit")
	return m
}

// Events records the events one group-commit transaction wrote.
func (m *Metrics) Events(n int) {
	if m.On {
		m.events.Record(context.Background(), int64(n))
	}
}

// committed records one Create or Append since t.
func (m *Metrics) committed(ctx context.Context, t time.Time) {
	if m.On {
		m.commit.Record(context.WithoutCancel(ctx), observe.Since(t))
	}
}
