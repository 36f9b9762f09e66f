package boltlog

import (
	"context"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/internal/engine"
)

// backend is the Log as the engine's driver: its methods are exported for
// the engine's interface, and kept off Log's own method set.
type backend struct{ l *Log }

func (b backend) Head(_ context.Context, id string) (eventlog.Head, []byte, error) {
	return b.l.head(id)
}

func (b backend) Events(_ context.Context, id string, from, end int64) ([][]byte, [][]byte, error) {
	p, err := b.l.events(id, from, end)
	return p, nil, err
}

func (b backend) Heads(_ context.Context, after string, n int) ([]eventlog.Head, error) {
	return b.l.heads(after, n)
}

func (b backend) Prepare(w *engine.Write) error { return b.l.prepareWrite(w) }

func (b backend) Commit(batch []*engine.Write, errs []error) ([]error, int) {
	return b.l.commit(batch, errs)
}

func (b backend) Stage(_ context.Context, hdr codec.SessionHeader, headerRec []byte) (engine.Stage, error) {
	s, err := b.l.stage(hdr, headerRec)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (b backend) Close() error { return b.l.close() }
