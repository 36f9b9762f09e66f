package loop

import (
	"context"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/compact"
	"github.com/sessionlog/sessionlog/header"
)

// Composer is what prefix contributors get while the session prefix is
// composed: a way to append context that lands before the boundary and
// joins the current request's history (docs/loop.md#steps, step 2).
type Composer struct {
	l   *Loop
	ctx context.Context
	err error
}

// Append appends a context/message now.
func (c *Composer) Append(content []byte, src Source) error {
	mp, err := c.l.content(c.ctx, content, "context")
	if err != nil {
		return err
	}
	b := c.l.batch()
	b.add(codec.TypeContextMessage, userMessage(mp, src), codec.SurfaceOp{Kind: codec.OpAppend}, nil)
	if err := b.commit(c.ctx); err != nil {
		if c.err == nil {
			c.err = err
		}
		return err
	}
	return nil
}

// composePrefix composes the session prefix once per instance (docs/loop.md
// steps 2–3): the contributors as a waterfall, the result checked,
// deep-copied and cached. A composition interrupted by cancellation or
// disposal is discarded and the turn ends without opening a step; the
// next turn composes again.
func (l *Loop) composePrefix(ctx context.Context, step int64) (*ending, error) {
	if l.composed {
		return nil, nil
	}
	c := &Composer{l: l, ctx: ctx}
	msgs, err := l.waterfall(ctx, c, 0)
	if e := l.cancelled(ctx); e != nil {
		return e, nil
	}
	if c.err != nil {
		return nil, c.err
	}
	if err != nil {
		return failed(step, "PREFIX", err), nil
	}
	var prefix [][]byte
	for _, m := range msgs {
		pm, err := header.ParseMessage(m) // a canonical copy: later mutation cannot reach it
		if err != nil {
			return failed(step, "PREFIX", err), nil
		}
		prefix = append(prefix, pm)
	}
	l.prefix, l.composed = prefix, true
	return nil, nil
}

// waterfall runs contributor i with a next that runs the rest; past the
// last contributor, next returns a fresh empty composition (the frozen
// seed: nothing a contributor does to it reaches anyone else).
func (l *Loop) waterfall(ctx context.Context, c *Composer, i int) (msgs [][]byte, err error) {
	if i == len(l.opts.Prefix) {
		return [][]byte{}, nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = errors.Newf("loop: prefix contributor %d panicked", errors.Safe(i))
		}
	}()
	return l.opts.Prefix[i](ctx, c, func() ([][]byte, error) { return l.waterfall(ctx, c, i+1) })
}

// gateSession is the loop as the compaction gate sees it.
type gateSession Loop

var _ compact.Session = (*gateSession)(nil)

func (g *gateSession) Nodes() []compact.Node { return g.nodes }
func (g *gateSession) Tokens() int           { return g.tokens }
func (g *gateSession) Revision() int64       { return g.next }

func (g *gateSession) Commit(ctx context.Context, events []compact.Pending) ([]int64, error) {
	l := (*Loop)(g)
	b := l.batch()
	seqs := make([]int64, len(events))
	for i, p := range events {
		seqs[i] = b.add(p.Type, p.Data, p.Op, p.Sources)
	}
	return seqs, b.commit(ctx)
}
