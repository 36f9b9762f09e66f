package loop

import (
	"context"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// DefaultStoreTimeout bounds each store call of the loop when
// Options.StoreTimeout is 0.
const DefaultStoreTimeout = time.Minute

// storeTimeout is the bound on one store call; 0 means none.
func (o *Options) storeTimeout() time.Duration {
	switch {
	case o.StoreTimeout < 0:
		return 0
	case o.StoreTimeout == 0:
		return DefaultStoreTimeout
	}
	return o.StoreTimeout
}

// bounded returns ctx bounded by Options.StoreTimeout.
func (l *Loop) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if d := l.opts.storeTimeout(); d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return context.WithCancel(ctx)
}

// append stores evs as one atomic batch. A batch the loop decided to write
// is written even when ctx is cancelled meanwhile: cancellation is
// observed between commits, so that every way a turn ends is recorded
// (docs/loop.md#how-turns-end). Only Options.StoreTimeout bounds it: a store that has not
// answered by then leaves the instance broken (the batch landed whole or
// not at all, and which is unknown), and the error is ErrStoreTimeout.
func (l *Loop) append(ctx context.Context, evs []codec.Event) error {
	if l.broken != nil {
		return l.broken
	}
	ctx, cancel := l.bounded(context.WithoutCancel(ctx))
	defer cancel()
	start := l.obs.Start()
	first, last := evs[0].Seq, evs[len(evs)-1].Seq
	var err error
	if ctx.Done() == nil {
		err = l.store.Append(ctx, l.hdr.ID, evs)
	} else {
		// The call runs in its own goroutine so that a store that ignores
		// ctx cannot hold the turn past the bound; evs is never reused.
		done := make(chan error, 1)
		go func() { done <- l.store.Append(ctx, l.hdr.ID, evs) }()
		select {
		case err = <-done:
		case <-ctx.Done():
			select {
			case err = <-done:
			default:
				err = ctx.Err()
			}
		}
	}
	l.obs.appended(ctx, start)
	if err == nil {
		return nil
	}
	if storeTimedOut(ctx, err) {
		l.broken = errclass.Mark(errors.Newf("loop: session %q: the store did not answer an append of seqs %d..%d within %s; whether the batch landed is unknown (reopen the session)",
			errors.Safe(l.hdr.ID), errors.Safe(first), errors.Safe(last), errors.Safe(l.opts.storeTimeout())), ErrStoreTimeout)
		l.obs.log.Error("loop: store append timed out", "session", l.hdr.ID, "first", first, "last", last,
			"timeout", l.opts.storeTimeout())
		return l.broken
	}
	return errors.Wrapf(err, "loop: append at seq %d", errors.Safe(first))
}

// timedOut marks err ErrStoreTimeout when it is the deadline of ctx, a
// store call's bounded context.
func (l *Loop) timedOut(ctx context.Context, err error) error {
	if storeTimedOut(ctx, err) {
		return errclass.Mark(errors.Wrapf(err, "loop: the store did not answer within %s", errors.Safe(l.opts.storeTimeout())), ErrStoreTimeout)
	}
	return err
}

// storeTimedOut says whether err is ctx's deadline, ctx being a store call's.
func storeTimedOut(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded)
}
