package scenario

import (
	"context"
	"io"
	"strings"
	"sync"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/compact"
	"github.com/sessionlog/sessionlog/loop"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// exhausted is the provider error when a turn's replies have run out.
func exhausted() error {
	return &loop.ProviderError{Code: "SCRIPT_EXHAUSTED", Message: "scenario: the scripted replies of this turn have run out"}
}

// Provider is a scripted model: it answers each request with the next
// reply of the current turn, streamed the way a live provider streams
// (block-start, one text delta per word, block-end, usage, finish), so
// the log has a live session's shape. Usage is estimated with the
// estimator of docs/rules.md#compaction.
type Provider struct {
	Estimator compact.Estimator

	mu      sync.Mutex
	replies [][]byte
}

var _ loop.Provider = (*Provider)(nil)

// SetReplies replaces the queue of replies (content arrays, JSON).
func (p *Provider) SetReplies(replies [][]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.replies = append([][]byte(nil), replies...)
}

// Unused returns how many replies were not consumed.
func (p *Provider) Unused() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.replies)
}

func (p *Provider) estimator() compact.Estimator {
	if p.Estimator != nil {
		return p.Estimator
	}
	return compact.Chars{}
}

// Stream answers req with the next reply.
func (p *Provider) Stream(ctx context.Context, req *loop.Request) (loop.Stream, error) {
	p.mu.Lock()
	if len(p.replies) == 0 {
		p.mu.Unlock()
		return nil, exhausted()
	}
	reply := p.replies[0]
	p.replies = p.replies[1:]
	p.mu.Unlock()
	chunks, err := Chunks(reply, p.estimator(), req.JSON)
	if err != nil {
		return nil, err
	}
	return &stream{ctx: ctx, chunks: chunks}, nil
}

// Complete answers a one-shot request (the compaction summarizer's) with
// the next reply, unstreamed.
func (p *Provider) Complete(ctx context.Context, request []byte) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.replies) == 0 {
		return nil, exhausted()
	}
	reply := p.replies[0]
	p.replies = p.replies[1:]
	return reply, nil
}

type stream struct {
	ctx    context.Context
	chunks []loop.Chunk
}

func (s *stream) Next() (loop.Chunk, error) {
	if err := s.ctx.Err(); err != nil {
		return loop.Chunk{}, err
	}
	if len(s.chunks) == 0 {
		return loop.Chunk{}, io.EOF
	}
	c := s.chunks[0]
	s.chunks = s.chunks[1:]
	return c, nil
}

func (s *stream) Close() error { return nil }

// Chunks returns the chunks a live provider would stream for reply (a
// content array, JSON) answering request (its JSON): per block,
// block-start, its deltas (one per word for text and reasoning, one for a
// tool call's arguments) and block-end; then usage and finish, whose
// reason is tool-calls when the reply calls tools, else stop.
func Chunks(reply []byte, est compact.Estimator, request []byte) ([]loop.Chunk, error) {
	blocks, err := checkContent(reply, "scenario reply")
	if err != nil {
		return nil, err
	}
	var out []loop.Chunk
	calls := false
	for i, b := range blocks {
		idx := int64(i)
		f, err := blockFields(b)
		if err != nil {
			return nil, err
		}
		out = append(out, loop.Chunk{Type: loop.ChunkBlockStart, Index: idx, BlockType: f.typ})
		switch f.typ {
		case codec.BlockText, codec.BlockReasoning:
			kind := loop.ChunkTextDelta
			if f.typ == codec.BlockReasoning {
				kind = loop.ChunkReasoningDelta
			}
			for _, w := range strings.SplitAfter(f.text, " ") {
				if w != "" {
					out = append(out, loop.Chunk{Type: kind, Index: idx, Text: w})
				}
			}
		case codec.BlockToolCall:
			calls = true
			out = append(out, loop.Chunk{Type: loop.ChunkToolCallDelta, Index: idx, ID: f.id, Name: f.name, ArgumentsDelta: f.args})
		}
		out = append(out, loop.Chunk{Type: loop.ChunkBlockEnd, Index: idx, Block: b})
	}
	reason := `{"kind":"stop"}`
	if calls {
		reason = `{"kind":"tool-calls"}`
	}
	usage := loop.Usage{InputTokens: int64(inputEstimate(est, request)),
		OutputTokens: int64(est.Message(append(append([]byte(`{"role":"assistant","content":`), reply...), '}')))}
	out = append(out, loop.Chunk{Type: loop.ChunkUsage, Usage: usage},
		loop.Chunk{Type: loop.ChunkFinish, Reason: []byte(reason)})
	return out, nil
}

type fields struct{ typ, text, id, name, args string }

// blockFields reads the fields of a block the chunks need.
func blockFields(block []byte) (fields, error) {
	var f fields
	mp, err := codec.FromJSON(nil, block, codec.Limits{})
	if err != nil {
		return f, err
	}
	r := codec.NewReader(mp)
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindObject {
		return f, errclass.Mark(errors.New("scenario: a reply block is not an object"), ErrInvalid)
	}
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			return f, err
		}
		raw, err := r.Value(1 << 10)
		if err != nil {
			return f, err
		}
		v, _ := codec.NewReader(raw).Next()
		if v.Kind != codec.KindString {
			continue
		}
		switch string(k.Str) {
		case "type":
			f.typ = string(v.Str)
		case "text":
			f.text = string(v.Str)
		case "id":
			f.id = string(v.Str)
		case "name":
			f.name = string(v.Str)
		case "arguments":
			f.args = string(v.Str)
		}
	}
	return f, nil
}

// inputEstimate estimates a request's input tokens (docs/rules.md#compaction) from its JSON.
func inputEstimate(est compact.Estimator, request []byte) int {
	mp, err := codec.FromJSON(nil, request, codec.Limits{})
	if err != nil {
		return 0
	}
	r := codec.NewReader(mp)
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindObject {
		return 0
	}
	sum := 0
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			return sum
		}
		switch string(k.Str) {
		case "messages":
			a, err := r.Next()
			if err != nil {
				return sum
			}
			for j := 0; j < a.N; j++ {
				js, err := r.AppendJSON(nil)
				if err != nil {
					return sum
				}
				sum += est.Message(js) + 4
			}
		case "system":
			v, err := r.Next()
			if err != nil {
				return sum
			}
			sum += est.System(string(v.Str))
		default:
			if r.Skip(1<<10) != nil {
				return sum
			}
		}
	}
	return sum
}
