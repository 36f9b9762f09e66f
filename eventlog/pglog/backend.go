package pglog

import (
	"context"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/internal/engine"
)

// backend is the Store as the engine's driver: its methods are exported
// for the engine's interface, and kept off Store's own method set.
type backend struct{ s *Store }

// Head reads the head; the commit's condition is on the head itself
// (next and chain), so there is no token.
func (b backend) Head(ctx context.Context, id string) (eventlog.Head, []byte, error) {
	h, err := b.s.head(ctx, id)
	return h, nil, errors.Wrapf(err, "pglog: head of session %q", errors.Safe(id))
}

func (b backend) Events(ctx context.Context, id string, from, end int64) ([][]byte, [][]byte, error) {
	return b.s.events(ctx, id, from, end)
}

func (b backend) Heads(ctx context.Context, after string, n int) ([]eventlog.Head, error) {
	return b.s.heads(ctx, after, n)
}

// Prepare has nothing to encode: the statements take the heads as they
// are.
func (b backend) Prepare(*engine.Write) error { return nil }

func (b backend) Commit(batch []*engine.Write, errs []error) ([]error, int) {
	return b.s.commit(batch, errs)
}

func (b backend) Stage(ctx context.Context, hdr codec.SessionHeader, headerRec []byte) (engine.Stage, error) {
	st, err := b.s.stage(ctx, hdr, headerRec)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// Close closes the connections.
func (b backend) Close() error {
	b.s.pool.Close()
	return nil
}
