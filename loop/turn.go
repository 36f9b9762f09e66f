package loop

import (
	"context"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
)

// Outcome is how a turn ended: its turn/end reason (docs/loop.md#how-turns-end).
type Outcome struct {
	Turn int64
	// Reason is the turn/end reason kind: completed, aborted, disposed or
	// error.
	Reason string
	// Step, Code and Message are set for an error: the step it ended in,
	// the code (the provider's, PROVIDER, INVARIANT, SCRIPT_EXHAUSTED,
	// HOST, PREFIX or PRE_STEP) and the message.
	Step          int64
	Code, Message string
	// RetryAfter is the provider's Retry-After for a provider error that
	// carried one (ProviderError); the loop never retries on its own.
	RetryAfter time.Duration
	// Steps counts the steps the turn opened.
	Steps int64
}

// ending is what ends a turn: nil continues with the next step.
type ending struct {
	kind          string
	step          int64
	code, message string
	retryAfter    time.Duration
}

func (e *ending) reason() []byte {
	if e.kind == "error" {
		return reasonError(e.step, e.message, e.code)
	}
	return reasonKind(e.kind)
}

func failed(step int64, code string, err error) *ending {
	return &ending{kind: "error", step: step, code: code, message: err.Error()}
}

// Send runs one turn for a user prompt: turn/start and the prompt as
// user/message, then steps until the model stops calling tools, then
// turn/end. content is a content-block array (JSON). Cancelling ctx ends
// the turn aborted. The error is non-nil only when the log could not be
// written (the turn may then be left open: the next instance's Open
// closes it) or on misuse; how the turn ended is the Outcome.
func (l *Loop) Send(ctx context.Context, content []byte, src Source) (Outcome, error) {
	mp, err := l.content(ctx, content, "prompt")
	if err != nil {
		return Outcome{}, err
	}
	l.lockTurn()
	if l.disposed.Load() {
		l.unlockTurn()
		return Outcome{}, ErrDisposed
	}
	if l.broken != nil {
		l.unlockTurn()
		return Outcome{}, l.broken
	}
	out, err := l.runTurn(ctx, mp, src)
	if err == nil {
		err = l.drainIdle(ctx)
	}
	l.unlockTurn()
	// An Inject that found the turn running after its last drain queued
	// its context; take it now unless another turn already did.
	for err == nil && l.hasInjected() && l.tryLockTurn() {
		err = l.drainIdle(ctx)
		l.unlockTurn()
	}
	return out, err
}

// lockTurn, tryLockTurn and unlockTurn hold the instance for one turn
// (or one drain of injections); lockTurnCtx gives up when ctx ends.
func (l *Loop) lockTurn()   { l.turnSem <- struct{}{} }
func (l *Loop) unlockTurn() { <-l.turnSem }
func (l *Loop) tryLockTurn() bool {
	select {
	case l.turnSem <- struct{}{}:
		return true
	default:
		return false
	}
}

func (l *Loop) lockTurnCtx(ctx context.Context) error {
	select {
	case l.turnSem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// turnKey marks the contexts a turn hands its callbacks.
type turnKey struct{}

// inOwnTurn says whether ctx is one this instance handed a callback.
func (l *Loop) inOwnTurn(ctx context.Context) bool {
	v, _ := ctx.Value(turnKey{}).(*Loop)
	return v == l
}

func (l *Loop) hasInjected() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.injected) > 0
}

// Inject adds mid-session context as a context/message (docs/loop.md). During a
// turn it is queued and appended after the current step's tool results,
// joining the next request; when no turn runs it is its own turn.
func (l *Loop) Inject(ctx context.Context, content []byte, src Source) error {
	mp, err := l.content(ctx, content, "injection")
	if err != nil {
		return err
	}
	l.mu.Lock()
	if l.disposed.Load() {
		l.mu.Unlock()
		return ErrDisposed
	}
	l.injected = append(l.injected, queued{content: mp, source: src})
	l.mu.Unlock()
	if !l.tryLockTurn() {
		return nil // a turn (or Dispose) holds the log: it appends the queue
	}
	defer l.unlockTurn()
	return l.drainIdle(ctx)
}

// Steer queues a steering message; it is appended at the top of the next
// step (docs/loop.md#steps, step 1) and joins that step's request.
func (l *Loop) Steer(content []byte, src Source) error {
	mp, err := l.content(context.Background(), content, "steering")
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.steering = append(l.steering, queued{content: mp, source: src})
	l.mu.Unlock()
	return nil
}

// Dispose ends the instance: a running turn ends disposed, and later Send
// and Inject calls fail with ErrDisposed. It returns nil once the instance
// writes nothing more: after the turn in flight has ended and the
// injections Inject accepted are written. So a new instance opened over
// the session afterwards never races this one.
//
// ctx bounds the wait: when it ends first, Dispose returns its error (the
// turn still ends disposed, later). Called from inside the instance's own
// turn (a tool, the provider, the host, a hook or a contributor, with the
// context the loop gave it), Dispose does not wait for the turn it runs
// in: it tells the turn to end disposed and returns ErrInTurn at once.
// (A callback that passes an unrelated context is not recognised, and
// waits until that context ends.) A failure to write the injections is
// the store's, returned too.
func (l *Loop) Dispose(ctx context.Context) error {
	l.mu.Lock()
	l.disposed.Store(true)
	if l.cancel != nil {
		l.cancel()
	}
	l.mu.Unlock()
	if l.inOwnTurn(ctx) {
		return errors.WithHint(ErrInTurn, "call Dispose from outside the loop's callbacks to wait for the turn's end")
	}
	if err := l.lockTurnCtx(ctx); err != nil {
		return errors.Wrap(err, "loop: dispose: waiting for the turn in flight")
	}
	defer l.unlockTurn()
	// Accepted injections are the host's writes: they land.
	if l.broken != nil {
		return l.broken
	}
	return l.drainIdle(context.WithoutCancel(ctx))
}

// drainIdle runs the queued injections, each as its own turn:
// turn/start{trigger: injection}, the context/message, turn/end{completed}.
// The caller holds the turn.
func (l *Loop) drainIdle(ctx context.Context) error {
	for {
		q := l.takeInjected(1)
		if len(q) == 0 {
			return nil
		}
		turn := l.turn + 1
		b := l.batch()
		b.add(codec.TypeTurnStart, turnStart(turn, "injection", q[0].source), codec.SurfaceOp{}, nil)
		b.add(codec.TypeContextMessage, userMessage(q[0].content, q[0].source), codec.SurfaceOp{Kind: codec.OpAppend}, nil)
		b.add(codec.TypeTurnEnd, turnEnd(turn, reasonKind("completed")), codec.SurfaceOp{}, nil)
		if err := b.commit(ctx); err != nil {
			return err
		}
	}
}

func (l *Loop) takeInjected(max int) []queued {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.injected)
	if max > 0 && n > max {
		n = max
	}
	q := l.injected[:n:n]
	l.injected = l.injected[n:]
	return q
}

func (l *Loop) takeSteering() []queued {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.steering
	l.steering = nil
	return q
}

// runTurn runs one prompted turn. The caller holds the turn.
func (l *Loop) runTurn(ctx context.Context, prompt []byte, src Source) (Outcome, error) {
	tctx, cancel := context.WithCancel(context.WithValue(ctx, turnKey{}, l))
	l.mu.Lock()
	l.cancel = cancel
	l.mu.Unlock()
	l.inTurn.Store(true)
	defer func() {
		l.inTurn.Store(false)
		l.mu.Lock()
		l.cancel = nil
		l.mu.Unlock()
		cancel()
	}()
	turn := l.turn + 1
	out := Outcome{Turn: turn}
	b := l.batch()
	b.add(codec.TypeTurnStart, turnStart(turn, "message", src), codec.SurfaceOp{}, nil)
	b.add(codec.TypeUserMessage, userMessage(prompt, src), codec.SurfaceOp{Kind: codec.OpAppend}, nil)
	if err := b.commit(ctx); err != nil {
		return out, err
	}
	var end *ending
	for step := int64(1); end == nil; step++ {
		var err error
		var opened bool
		end, opened, err = l.step(tctx, turn, step)
		if opened {
			out.Steps = step
		}
		if err != nil {
			return out, err
		}
	}
	if end.kind == "aborted" && l.disposed.Load() {
		end.kind = "disposed"
	}
	// The turn's end is written even when ctx was cancelled.
	b = l.batch()
	b.add(codec.TypeTurnEnd, turnEnd(turn, end.reason()), codec.SurfaceOp{}, nil)
	if err := b.commit(ctx); err != nil {
		return out, err
	}
	out.Reason, out.Step, out.Code, out.Message = end.kind, end.step, end.code, end.message
	out.RetryAfter = end.retryAfter
	l.obs.log.Info("loop: turn ended", "session", l.hdr.ID, "turn", turn, "reason", end.kind,
		"steps", out.Steps, "code", end.code)
	return out, nil
}

// cancelled returns the ending for a cancelled turn, or nil.
func (l *Loop) cancelled(ctx context.Context) *ending {
	if l.disposed.Load() {
		return &ending{kind: "disposed"}
	}
	if ctx.Err() != nil {
		return &ending{kind: "aborted"}
	}
	return nil
}

// providerFailed is the ending of a step whose provider failed: the
// ProviderError's code, message and Retry-After when err carries one, else
// code PROVIDER and err's text (docs/loop.md#how-turns-end).
func providerFailed(step int64, err error) *ending {
	if pe, ok := providerError(err); ok {
		msg := pe.Message
		if msg == "" {
			msg = pe.Error()
		}
		return &ending{kind: "error", step: step, code: pe.Code, message: msg, retryAfter: pe.RetryAfter}
	}
	return failed(step, "PROVIDER", err)
}
