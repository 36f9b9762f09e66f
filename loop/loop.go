package loop

import (
	"context"
	"io"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/compact"
	"github.com/sessionlog/sessionlog/rebuild"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// Loop drives one session for one loop instance (docs/loop.md). Open, resume
// and fork each start a new instance: the session prefix is composed again
// and the instance's first request writes a full header snapshot.
//
// Send runs one turn at a time; Inject, Steer, Dispose, ID and Next may
// be called from any goroutine.
type Loop struct {
	store Store
	opts  Options
	hdr   codec.SessionHeader

	turnSem chan struct{} // held (full) for the whole of a turn; a mutex a waiter can give up on
	// broken is set when a store call outlived Options.StoreTimeout: what
	// the store holds is then unknown, and the instance refuses further
	// turns (a new instance's Open reads the log as it stands).
	broken error
	obs    *observer

	mu        sync.Mutex // guards the queues and cancel
	steering  []queued
	injected  []queued
	cancel    context.CancelFunc
	disposed  atomic.Bool
	inTurn    atomic.Bool
	structure rebuild.Structure

	// Log state, fed by every committed event (the loop's own objects).
	next      int64
	published atomic.Int64 // next, for Next from other goroutines
	lastTime  float64
	turn      int64
	own       *rebuild.Builder
	nodes     []compact.Node
	tokens    int // Σ node estimates
	open      openState
	est       compact.Estimator

	// The invariant checker's builder, fed only from the store.
	check     *rebuild.Builder
	checkNext int64

	// reqBuf holds the request being sent; the next step reuses it.
	reqBuf []byte

	// Instance state.
	anchored bool
	composed bool
	prefix   [][]byte
}

type queued struct {
	content []byte // storage form of the content array
	source  Source
}

// Open starts a loop instance over the existing session id. An id the
// store does not hold is eventlog.ErrNotFound: a mistyped id never starts
// a new conversation (Create does that). A session whose last turn is
// still open (a crash) first gets the crash closers of docs/loop.md, committed
// as one batch.
func Open(ctx context.Context, store Store, id string, opts Options) (*Loop, error) {
	l, err := newLoop(store, opts)
	if err != nil {
		return nil, err
	}
	hctx, cancel := l.bounded(ctx)
	head, err := store.Head(hctx, id)
	err = l.timedOut(hctx, err)
	cancel()
	if err != nil {
		return nil, errors.Wrapf(err, "loop: open session %q", errors.Safe(id))
	}
	return l.start(ctx, head.Header)
}

// Create creates session id, empty, with opts.Cwd in its header line, and
// starts a loop instance over it. An id the store holds already is
// eventlog.ErrConflict.
func Create(ctx context.Context, store Store, id string, opts Options) (*Loop, error) {
	l, err := newLoop(store, opts)
	if err != nil {
		return nil, err
	}
	h := codec.NewSessionHeader(id, opts.now(), opts.Cwd, "", 0)
	cctx, cancel := l.bounded(ctx)
	err = l.timedOut(cctx, store.Create(cctx, h))
	cancel()
	if err != nil {
		return nil, errors.Wrapf(err, "loop: create session %q", errors.Safe(id))
	}
	return l.start(ctx, h)
}

// newLoop checks opts and returns an instance not yet bound to a session.
func newLoop(store Store, opts Options) (*Loop, error) {
	if opts.Provider == nil || opts.Host == nil {
		return nil, errors.AssertionFailedf("loop: Options.Provider and Options.Host are required")
	}
	l := &Loop{store: store, opts: opts, turnSem: make(chan struct{}, 1)}
	l.obs = newObserver(opts.Logger, opts.Metrics)
	l.est = compact.Chars{}
	if g := opts.Compaction; g != nil && g.Estimator != nil {
		l.est = g.Estimator
	} else if g != nil {
		l.est = compact.Chars{PerToken: g.Config.CharsPerToken}
	}
	return l, nil
}

// start binds l to the session of header h: it loads the log and writes
// the crash closers a crashed turn is owed.
func (l *Loop) start(ctx context.Context, h codec.SessionHeader) (*Loop, error) {
	l.hdr = h
	l.lastTime = h.CreatedAt
	l.own = rebuild.NewBuilder(l.hdr, rebuild.BuilderOptions{}, discard)
	l.check = rebuild.NewBuilder(l.hdr, rebuild.BuilderOptions{}, discard)
	if err := l.load(ctx); err != nil {
		return nil, err
	}
	if err := l.closeCrashedTurn(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

// Fork forks source at the turn/end at seq at into a new session child
// (docs/rules.md#fork) and opens a loop instance over the child.
func Fork(ctx context.Context, store Forker, source string, at int64, child string, opts Options) (*Loop, error) {
	src, err := store.Head(ctx, source)
	if err != nil {
		return nil, errors.Wrap(err, "loop: fork")
	}
	h := codec.NewSessionHeader(child, opts.now(), src.Header.Cwd, source, at+1)
	if err := store.Fork(ctx, source, at, h); err != nil {
		return nil, errors.Wrap(err, "loop: fork")
	}
	return Open(ctx, store, child, opts)
}

func discard(rebuild.Step) error { return nil }

// ID is the session's id.
func (l *Loop) ID() string { return l.hdr.ID }

// Next is the seq the next event will have: the number of events the
// instance knows committed. It is safe for concurrent use, also while a
// turn runs (it then moves forward, batch by batch, as commits land).
func (l *Loop) Next() int64 { return l.published.Load() }

// load folds the stored log into the loop's state and the checker's.
func (l *Loop) load(ctx context.Context) error {
	ctx, cancel := l.bounded(ctx)
	defer cancel()
	return l.timedOut(ctx, l.loadFrom(ctx))
}

func (l *Loop) loadFrom(ctx context.Context) error {
	it, err := l.store.Scan(ctx, l.hdr.ID, 0)
	if err != nil {
		return errors.Wrap(err, "loop: load session")
	}
	defer it.Close()
	for {
		ev, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return errors.Wrap(err, "loop: load session")
		}
		if err := l.check.Add(&ev); err != nil {
			return errors.Wrap(err, "loop: load session")
		}
		if err := l.absorb(&ev); err != nil {
			return errors.Wrap(err, "loop: load session")
		}
		l.structure.Add(&ev) // breaks in stored history are verify's business
	}
	l.checkNext = l.next
	return nil
}

// absorb folds one committed event into the loop's own state.
func (l *Loop) absorb(ev *codec.Event) error {
	if err := l.own.Add(ev); err != nil {
		return err
	}
	l.next, l.lastTime = ev.Seq+1, ev.Time
	l.published.Store(l.next)
	l.open.add(ev)
	if d, ok := ev.Data.(*codec.TurnStart); ok {
		l.turn = d.Turn
	}
	switch ev.Op.Kind {
	case codec.OpAppend:
		n := compact.NodeOf(l.est, ev, l.message(ev))
		l.nodes = append(l.nodes, n)
		l.tokens += n.Tokens
	case codec.OpReplace:
		l.replaceNodes(ev)
	}
	return nil
}

// message is the derived message of ev, just folded: the fold's own
// bytes, so that the history holds a long answer once, not twice.
func (l *Loop) message(ev *codec.Event) []byte {
	if msg, ok := l.own.Fold().Message(ev.Seq); ok {
		return msg
	}
	return rebuild.Project(ev)
}

// replaceNodes mirrors a replace on the gate's view of the surface. The
// fold has checked the range already.
func (l *Loop) replaceNodes(ev *codec.Event) {
	ps, pe := -1, -1
	for i, n := range l.nodes {
		if n.Seq == ev.Op.Start {
			ps = i
		}
		if n.Seq == ev.Op.End {
			pe = i
		}
	}
	if ps < 0 || pe < ps {
		return
	}
	n := compact.NodeOf(l.est, ev, l.message(ev))
	nodes := make([]compact.Node, 0, len(l.nodes)-(pe-ps))
	nodes = append(append(append(nodes, l.nodes[:ps]...), n), l.nodes[pe+1:]...)
	l.nodes, l.tokens = nodes, 0
	for _, n := range nodes {
		l.tokens += n.Tokens
	}
}

// commit appends events as one atomic, durable batch and folds them in.
// The batch is first checked against the turn structure (docs/rules.md#turns-and-steps): the
// loop never writes a log that breaks it.
func (l *Loop) commit(ctx context.Context, evs []codec.Event) error {
	probe := l.structure.Clone()
	for i := range evs {
		if brk := probe.Add(&evs[i]); len(brk) > 0 {
			return errclass.Mark(errors.AssertionFailedf("loop: seq %d: %s", errors.Safe(brk[0].Seq), errors.Safe(brk[0].What)), ErrStructure)
		}
	}
	if err := l.append(ctx, evs); err != nil {
		return err
	}
	l.structure = probe
	for i := range evs {
		if err := l.absorb(&evs[i]); err != nil {
			return errors.Wrapf(err, "loop: fold seq %d", errors.Safe(evs[i].Seq))
		}
	}
	return nil
}

// batch collects events to commit together, assigning seqs and times.
type batch struct {
	l   *Loop
	evs []codec.Event
	err error
}

func (l *Loop) batch() *batch { return &batch{l: l} }

// add appends an event to the batch and returns its seq.
func (b *batch) add(typ string, data []byte, op codec.SurfaceOp, sources []int64) int64 {
	return b.addAt(typ, data, op, sources, b.l.opts.now())
}

func (b *batch) addAt(typ string, data []byte, op codec.SurfaceOp, sources []int64, time float64) int64 {
	seq := b.l.next + int64(len(b.evs))
	if b.err != nil {
		return seq
	}
	ev, err := codec.NewEvent(typ, seq, time, data, op, sources)
	if err != nil {
		b.err = errors.Wrapf(err, "loop: build %s", errors.Safe(typ))
		return seq
	}
	b.evs = append(b.evs, ev)
	return seq
}

func (b *batch) commit(ctx context.Context) error {
	if b.err != nil {
		return b.err
	}
	if len(b.evs) == 0 {
		return nil
	}
	return b.l.commit(ctx, b.evs)
}
