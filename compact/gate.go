package compact

import (
	"context"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
)

// Config holds the gate's knobs (docs/rules.md#compaction). Zero fields take the defaults:
// ContextWindow 128000, ThresholdRatio 0.8, RetainTokens 16% of the
// window, CharsPerToken 4. Retries is the number of attempts after the
// first; set NoRetry for none, since 0 means the default of 1.
type Config struct {
	ContextWindow  int
	ThresholdRatio float64
	RetainTokens   int
	CharsPerToken  int
	Retries        int
	NoRetry        bool
}

func (c Config) withDefaults() Config {
	if c.ContextWindow <= 0 {
		c.ContextWindow = 128000
	}
	if c.ThresholdRatio <= 0 {
		c.ThresholdRatio = 0.8
	}
	if c.RetainTokens <= 0 {
		c.RetainTokens = c.ContextWindow * 16 / 100
	}
	if c.CharsPerToken <= 0 {
		c.CharsPerToken = 4
	}
	switch {
	case c.NoRetry:
		c.Retries = 0
	case c.Retries <= 0:
		c.Retries = 1
	}
	return c
}

// Threshold is ⌊contextWindow × thresholdRatio⌋.
func (c Config) Threshold() int {
	c = c.withDefaults()
	return int(float64(c.ContextWindow) * c.ThresholdRatio)
}

// Node is one surface node as the gate sees it.
type Node struct {
	Seq int64
	// Msg is the node's derived message JSON; nil when it projects to nothing.
	Msg []byte
	// Tokens is the node's estimate: the message's content estimate + 4,
	// or 0 when it projects to nothing.
	Tokens int
	// Calls is the node's effect on the count of open tool calls in
	// surface order: +n for an assistant message with n tool-call blocks,
	// -1 for a tool result, 0 otherwise.
	Calls int
}

// NodeOf returns the gate's view of a surface event whose derived message
// is msg (nil when none).
func NodeOf(e Estimator, ev *codec.Event, msg []byte) Node {
	n := Node{Seq: ev.Seq, Msg: msg}
	if msg != nil {
		n.Tokens = e.Message(msg) + 4
	}
	switch d := ev.Data.(type) {
	case *codec.AssistantMessage:
		for _, b := range d.Content.Blocks {
			if b.Type == codec.BlockToolCall {
				n.Calls++
			}
		}
	case *codec.ToolResult:
		n.Calls = -1
	}
	return n
}

// Cut returns how many head nodes to compact: the retained tail keeps the
// newest nodes whose estimates sum to retain (the node that makes the sum
// reach it is kept), then the cut moves toward the head until the count of
// open tool calls across it is zero. 0 means nothing to compact.
func Cut(nodes []Node, retain int) int {
	cut, sum := 0, 0
	for i := len(nodes) - 1; i >= 0; i-- {
		sum += nodes[i].Tokens
		if sum >= retain {
			cut = i
			break
		}
	}
	for ; cut > 0; cut-- {
		open := 0
		for _, n := range nodes[:cut] {
			open += n.Calls
		}
		if open <= 0 {
			break
		}
	}
	return cut
}

// Pressure returns the estimate of a request (docs/rules.md#compaction) from the sum of
// the surface nodes' estimates, the prefix and the system prompt.
func Pressure(e Estimator, surfaceTokens int, prefix [][]byte, system string) int {
	sum := e.System(system) + surfaceTokens
	for _, m := range prefix {
		sum += e.Message(m) + 4
	}
	return sum
}

// SurfaceTokens sums the nodes' estimates.
func SurfaceTokens(nodes []Node) int {
	sum := 0
	for _, n := range nodes {
		sum += n.Tokens
	}
	return sum
}

// Session is what the gate needs from the loop that owns the log.
type Session interface {
	// Nodes returns the current surface, head first. The gate does not
	// modify it.
	Nodes() []Node
	// Tokens returns SurfaceTokens(Nodes()), which the session keeps up to
	// date as it appends, so that checking the pressure costs nothing in
	// the length of the history.
	Tokens() int
	// Revision changes whenever the log does (the next seq).
	Revision() int64
	// Commit appends events as one atomic, durable batch and returns
	// their seqs.
	Commit(ctx context.Context, events []Pending) ([]int64, error)
}

// Pending is an event to commit: its type, data (storage form), and for
// surface types the surface op and sources.
type Pending struct {
	Type    string
	Data    []byte
	Op      codec.SurfaceOp
	Sources []int64
}

// Gate decides and runs compactions before a step's boundary.
type Gate struct {
	Config     Config
	Estimator  Estimator
	Summarizer Summarizer
}

// Result says what Run did.
type Result struct {
	// Before and After are the estimates before the first and after the
	// last attempt.
	Before, After int
	// Compactions counts successful replaces; Failures failed attempts.
	Compactions, Failures int
}

// Run compacts the head of s's surface while the request estimate is at
// or above the threshold, up to Retries+1 attempts. It returns ErrGaveUp
// (with the Result) when the estimate is still at or above the threshold
// afterwards; any other error is the log's (a commit failed) or ctx's.
func (g *Gate) Run(ctx context.Context, s Session, turn int64, system string, prefix [][]byte) (Result, error) {
	c := g.Config.withDefaults()
	est := g.estimator(c)
	threshold := c.Threshold()
	res := Result{Before: Pressure(est, s.Tokens(), prefix, system)}
	res.After = res.Before
	if res.Before < threshold {
		return res, nil
	}
	for attempt := 0; attempt <= c.Retries; attempt++ {
		nodes := s.Nodes()
		cut := Cut(nodes, c.RetainTokens)
		if cut == 0 {
			break
		}
		ok, err := g.attempt(ctx, s, est, turn, nodes[:cut])
		if err != nil {
			return res, err
		}
		if ok {
			res.Compactions++
		} else {
			res.Failures++
		}
		res.After = Pressure(est, s.Tokens(), prefix, system)
		if res.After < threshold {
			return res, nil
		}
	}
	return res, errors.Wrapf(ErrGaveUp, "compact: estimate %d, threshold %d", errors.Safe(res.After), errors.Safe(threshold))
}

func (g *Gate) estimator(c Config) Estimator {
	if g.Estimator != nil {
		return g.Estimator
	}
	return Chars{PerToken: c.CharsPerToken}
}
