package compact

import (
	"context"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// Summarizer condenses a span of history.
type Summarizer interface {
	// Summarize returns a summary of msgs (derived messages, as JSON).
	// They are the session's history itself: read them, never modify them.
	Summarize(ctx context.Context, msgs [][]byte) (Summary, error)
}

// Summary is a summarizer's answer and the envelope of the call that made
// it, recorded on compact/summary.
type Summary struct {
	// Content is the summary as a content-block array (JSON).
	Content []byte
	// Provider is "" when the call had none; MaxTokens 0 when unset.
	Provider  string
	Model     string
	MaxTokens int64
}

// Preamble opens every framed summary. It tells the model what the
// message is; the text is part of what the log records, so changing it
// changes only future compactions.
const Preamble = "The conversation so far was longer than the context window, so its earlier part " +
	"has been condensed into the summary below. Treat the summary as the history up to this point: " +
	"it records the goals, decisions, facts and open work that came before. Build on it and continue " +
	"from where it ends."

// Frame returns the content of the message that replaces a compacted span
// (docs/rules.md#compaction): the preamble ending in "\n\n<compacted-summary>", the summary's
// blocks, then "</compacted-summary>". summary is a content array (JSON).
func Frame(summary []byte) ([]byte, error) {
	mp, err := codec.FromJSON(nil, summary, codec.Limits{})
	if err != nil {
		return nil, errors.Wrap(err, "compact: summary content")
	}
	r := codec.NewReader(mp)
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindArray {
		return nil, errclass.Mark(errors.New("compact: summary content is not an array"), codec.ErrInvalid)
	}
	out := []byte(`[{"type":"text","text":`)
	out = codec.AppendJSONString(out, []byte(Preamble+"\n\n<compacted-summary>"))
	out = append(out, '}')
	for i := 0; i < t.N; i++ {
		out = append(out, ',')
		if out, err = r.AppendJSON(out); err != nil {
			return nil, errors.Wrap(err, "compact: summary content")
		}
	}
	return append(out, `,{"type":"text","text":"</compacted-summary>"}]`...), nil
}

// attempt runs one compaction bracket over span. It returns false, nil
// when the attempt failed and was recorded as compact/end{error}; an error
// only when the log could not be written.
func (g *Gate) attempt(ctx context.Context, s Session, est Estimator, turn int64, span []Node) (bool, error) {
	var start codec.Object
	start.Int("turn", turn)
	seqs, err := s.Commit(ctx, []Pending{{Type: codec.TypeCompactStart, Data: start.Bytes()}})
	if err != nil {
		return false, err
	}
	startSeq := seqs[0]
	rev := s.Revision()
	var msgs [][]byte
	shadowed, replaced := 0, make([]int64, 0, len(span))
	for _, n := range span {
		if n.Msg != nil {
			msgs = append(msgs, n.Msg)
		}
		shadowed += n.Tokens
		replaced = append(replaced, n.Seq)
	}
	sum, err := g.summarize(ctx, msgs)
	var framed []byte
	if err == nil && s.Revision() != rev {
		err = ErrLogChanged
	}
	if err == nil {
		framed, err = Frame(sum.Content)
	}
	if err == nil && est.Message(wrapUser(framed))+4 >= shadowed {
		err = errors.Wrapf(ErrNotSmaller, "compact: framed summary vs %d tokens", errors.Safe(shadowed))
	}
	// Closing writes must land even when ctx was cancelled meanwhile.
	wctx := context.WithoutCancel(ctx)
	if err != nil {
		var end codec.Object
		end.Int("turn", turn).Str("error", err.Error())
		_, cerr := s.Commit(wctx, []Pending{{Type: codec.TypeCompactEnd, Data: end.Bytes()}})
		return false, cerr
	}
	summarySeq := s.Revision()
	summaryData, err := summaryEvent(sum, span, replaced, shadowed)
	if err != nil {
		return false, err
	}
	framedMP, err := codec.FromJSON(nil, framed, codec.Limits{})
	if err != nil {
		return false, errors.Wrap(err, "compact: framed summary")
	}
	var user, source, end codec.Object
	source.Str("kind", "plugin").Str("plugin", "compact")
	user.Value("content", framedMP).Value("source", source.Bytes())
	end.Int("turn", turn)
	sources := append([]int64{startSeq, summarySeq}, replaced...)
	_, err = s.Commit(wctx, []Pending{
		{Type: codec.TypeCompactSummary, Data: summaryData},
		{Type: codec.TypeUserMessage, Data: user.Bytes(),
			Op:      codec.SurfaceOp{Kind: codec.OpReplace, Start: span[0].Seq, End: span[len(span)-1].Seq},
			Sources: sources},
		{Type: codec.TypeCompactEnd, Data: end.Bytes()},
	})
	return err == nil, err
}

func (g *Gate) summarize(ctx context.Context, msgs [][]byte) (s Summary, err error) {
	if g.Summarizer == nil {
		return Summary{}, errors.New("compact: no summarizer")
	}
	defer func() {
		if r := recover(); r != nil {
			err = errors.Newf("compact: summarizer panicked: %v", r)
		}
	}()
	return g.Summarizer.Summarize(ctx, msgs)
}

// summaryEvent builds compact/summary's data in docs/format.md#event-types order.
func summaryEvent(sum Summary, span []Node, replaced []int64, shadowed int) ([]byte, error) {
	content, err := codec.FromJSON(nil, sum.Content, codec.Limits{})
	if err != nil {
		return nil, errors.Wrap(err, "compact: summary content")
	}
	var rng, o codec.Object
	rng.Int("start", span[0].Seq).Int("end", span[len(span)-1].Seq)
	o.Value("summary", content).Value("shadowedRange", rng.Bytes()).
		Ints("shadowedSeqs", replaced).Int("shadowedTokenCount", int64(shadowed))
	if sum.Provider != "" {
		o.Str("provider", sum.Provider)
	}
	o.Str("model", sum.Model)
	if sum.MaxTokens > 0 {
		o.Int("maxTokens", sum.MaxTokens)
	}
	return o.Bytes(), nil
}

// wrapUser returns the derived message of a user/message with content c.
func wrapUser(c []byte) []byte {
	out := append([]byte(`{"role":"user","content":`), c...)
	return append(out, '}')
}
