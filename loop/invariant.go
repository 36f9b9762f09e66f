package loop

import (
	"context"
	"io"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/rebuild"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// invariant checks the request the loop is about to send against an
// independent rebuild from the records the store holds (docs/loop.md#steps, step 9).
// A difference is an error marked ErrInvariant that names it by position
// only: byte offset, JSON path, both digests.
//
// The check reads the store to the end even when ctx is cancelled
// meanwhile (a cancellation then ends the step before anything is sent);
// Options.StoreTimeout bounds it, and a read that outlives the bound is
// ErrStoreTimeout, not ErrInvariant.
func (l *Loop) invariant(ctx context.Context, mine rebuild.Step) error {
	var theirs rebuild.Step
	if l.opts.Invariant == InvariantOff {
		return nil
	}
	ctx, cancel := l.bounded(context.WithoutCancel(ctx))
	defer cancel()
	switch l.opts.Invariant {
	case InvariantFromScratch:
		evs, err := l.readAll(ctx)
		if err != nil {
			return l.readError(ctx, err)
		}
		if theirs, err = rebuild.Request(l.hdr, evs, mine.Start); err != nil {
			return errclass.Mark(errors.Wrap(err, "loop: invariant rebuild"), ErrInvariant)
		}
	default:
		err := l.scan(ctx, l.checkNext, func(ev *codec.Event) error {
			l.checkNext = ev.Seq + 1
			return l.check.Add(ev)
		})
		if err != nil {
			// The checker's fold is now unknown: rebuild it from scratch next time.
			l.check, l.checkNext = rebuild.NewBuilder(l.hdr, rebuild.BuilderOptions{}, discard), 0
			if storeTimedOut(ctx, err) {
				return l.readError(ctx, err)
			}
			return errclass.Mark(errors.Wrap(err, "loop: invariant rebuild"), ErrInvariant)
		}
		var ok bool
		if theirs, ok = l.check.Peek(); !ok || theirs.Start != mine.Start {
			return errclass.Mark(errors.Newf("loop: invariant: the log holds no open step at seq %d", errors.Safe(mine.Start)), ErrInvariant)
		}
	}
	if theirs.Null == mine.Null && theirs.Digest == mine.Digest {
		return nil
	}
	return l.describe(ctx, mine, theirs)
}

// describe builds the refusal: where the sent request and the log's
// rebuild first differ.
func (l *Loop) describe(ctx context.Context, mine, theirs rebuild.Step) error {
	var logReq []byte
	if evs, err := l.readAll(ctx); err == nil {
		if s, err := rebuild.Request(l.hdr, evs, mine.Start); err == nil {
			logReq = s.Request
		}
	}
	off := rebuild.FirstDifference(mine.Request, logReq)
	return errclass.Mark(errors.Newf("loop: step %d.%d: request differs from the log's rebuild at byte %d (%s): sent %x, log %x",
		errors.Safe(mine.Turn), errors.Safe(mine.Step), errors.Safe(off),
		errors.Safe(rebuild.PathAt(mine.Request, off)), errors.Safe(mine.Digest), errors.Safe(theirs.Digest)), ErrInvariant)
}

// scan reads the stored events from seq from on.
func (l *Loop) scan(ctx context.Context, from int64, fn func(*codec.Event) error) error {
	it, err := l.store.Scan(ctx, l.hdr.ID, from)
	if err != nil {
		return err
	}
	defer it.Close()
	for {
		ev, err := it.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(&ev); err != nil {
			return err
		}
	}
}

func (l *Loop) readAll(ctx context.Context) ([]codec.Event, error) {
	var evs []codec.Event
	err := l.scan(ctx, 0, func(ev *codec.Event) error {
		evs = append(evs, *ev)
		return nil
	})
	return evs, err
}

// readError classifies a failed read of the invariant check.
func (l *Loop) readError(ctx context.Context, err error) error {
	if storeTimedOut(ctx, err) {
		// The step stays open in the log: like a timed-out append, the
		// instance is done, and Open closes the turn.
		l.broken = errclass.Mark(errors.Wrapf(err, "loop: session %q: the invariant check's read of the store did not finish within %s",
			errors.Safe(l.hdr.ID), errors.Safe(l.opts.storeTimeout())), ErrStoreTimeout)
		return l.broken
	}
	return errors.Wrap(err, "loop: invariant read")
}
