package loop

import (
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/wire"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// Chunk types (docs/format.md#event-types assistant/chunk); one definition, in wire.
const (
	ChunkBlockStart     = wire.ChunkBlockStart
	ChunkTextDelta      = wire.ChunkTextDelta
	ChunkReasoningDelta = wire.ChunkReasoningDelta
	ChunkToolCallDelta  = wire.ChunkToolCallDelta
	ChunkBlockEnd       = wire.ChunkBlockEnd
	ChunkUsage          = wire.ChunkUsage
	ChunkFinish         = wire.ChunkFinish
)

// Chunk is one piece of a streamed answer: the chunk wire's translators
// produce, logged as it is (see [wire.Chunk] for which fields count).
type Chunk = wire.Chunk

// Usage is a step's token usage in disjoint buckets (docs/format.md#event-types).
type Usage = wire.Usage

// usageStorage returns u in storage form; the optional buckets are
// written only when non-zero.
func usageStorage(u Usage) []byte { return u.AppendStorage(nil) }

func jsonValue(js []byte, what string) ([]byte, error) {
	mp, err := codec.FromJSON(nil, js, codec.Limits{})
	return mp, errors.Wrapf(err, "loop: chunk %s", errors.Safe(what))
}

// chunkStorage returns the chunk object in storage form, type first.
func chunkStorage(c *Chunk) ([]byte, error) {
	var o codec.Object
	o.Str("type", c.Type)
	switch c.Type {
	case ChunkBlockStart:
		o.Int("index", c.Index).Str("blockType", c.BlockType)
	case ChunkTextDelta, ChunkReasoningDelta:
		o.Int("index", c.Index).Str("text", c.Text)
	case ChunkToolCallDelta:
		o.Int("index", c.Index).Str("id", c.ID)
		if c.Name != "" {
			o.Str("name", c.Name)
		}
		o.Str("argumentsDelta", c.ArgumentsDelta)
	case ChunkBlockEnd:
		b, err := jsonValue(c.Block, "block")
		if err != nil {
			return nil, err
		}
		o.Int("index", c.Index).Value("block", b)
	case ChunkUsage:
		o.Value("usage", usageStorage(c.Usage))
	case ChunkFinish:
		r, err := jsonValue(c.Reason, "reason")
		if err != nil {
			return nil, err
		}
		o.Value("reason", r)
		if c.ReplayState != nil {
			rs, err := jsonValue(c.ReplayState, "replayState")
			if err != nil {
				return nil, err
			}
			o.Value("replayState", rs)
		}
	default:
		return nil, errclass.Mark(errors.Newf("loop: unknown chunk type"), codec.ErrInvalid)
	}
	return o.Bytes(), nil
}

// assembler builds the assistant message from the chunks of a step.
type assembler struct {
	order  []int64
	blocks map[int64]*partial
	usage  *Usage
	replay []byte
	// failure is the code and message of a finish of kind error: the
	// server reported an error inside the stream (docs/wire.md#openai-chat, docs/wire.md#anthropic-messages), which
	// ends the turn as a provider error does (docs/loop.md#how-turns-end).
	failure *finishError
}

type finishError struct{ code, message string }

// partial is a block being built from its deltas. Its text and
// arguments grow in builders: a string grown by += is copied whole at
// every delta, quadratic in the block's length (a 20 MB answer took
// minutes).
type partial struct {
	typ, id, name string
	text, args    strings.Builder
	final         []byte // storage form, from block-end
}

func (a *assembler) block(i int64) *partial {
	if a.blocks == nil {
		a.blocks = make(map[int64]*partial)
	}
	p, ok := a.blocks[i]
	if !ok {
		p = &partial{}
		a.blocks[i] = p
		a.order = append(a.order, i)
	}
	return p
}

func (a *assembler) add(c *Chunk, stored []byte) {
	switch c.Type {
	case ChunkBlockStart:
		a.block(c.Index).typ = c.BlockType
	case ChunkTextDelta:
		p := a.block(c.Index)
		p.text.WriteString(c.Text)
		if p.typ == "" {
			p.typ = codec.BlockText
		}
	case ChunkReasoningDelta:
		p := a.block(c.Index)
		p.text.WriteString(c.Text)
		if p.typ == "" {
			p.typ = codec.BlockReasoning
		}
	case ChunkToolCallDelta:
		p := a.block(c.Index)
		if p.typ == "" {
			p.typ = codec.BlockToolCall
		}
		if c.ID != "" {
			p.id = c.ID
		}
		if c.Name != "" {
			p.name = c.Name
		}
		p.args.WriteString(c.ArgumentsDelta)
	case ChunkBlockEnd:
		p := a.block(c.Index)
		p.final = blockOf(stored)
		if p.final != nil { // the deltas are no longer needed
			p.text.Reset()
			p.args.Reset()
		}
	case ChunkUsage:
		u := c.Usage
		a.usage = &u
	case ChunkFinish:
		a.replay = nil
		if c.ReplayState != nil {
			a.replay, _ = jsonValue(c.ReplayState, "replayState")
		}
		a.failure = errorReason(stored)
	}
}

// errorReason reads the reason of a stored finish chunk: its code and
// message when its kind is error, else nil. A reason without a code is
// PROVIDER's, as an error without one is (docs/loop.md#how-turns-end).
func errorReason(chunk []byte) *finishError {
	var kind, code, message string
	f := codec.NewFields(chunk, codec.PrefixCodec)
	err := f.Object("chunk", func(k []byte) error {
		if string(k) != "reason" {
			return f.Skip()
		}
		return f.Object("reason", func(k []byte) error {
			var err error
			switch string(k) {
			case "kind":
				kind, err = f.Str("kind")
			case "code":
				code, err = f.Str("code")
			case "message":
				message, err = f.Str("message")
			default:
				err = f.Skip()
			}
			return err
		})
	})
	if err != nil || kind != "error" {
		return nil
	}
	if code == "" {
		code = "PROVIDER"
	}
	return &finishError{code: code, message: message}
}

// blockOf extracts the block value from a stored block-end chunk object.
func blockOf(chunk []byte) []byte {
	r := codec.NewReader(chunk)
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindObject {
		return nil
	}
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			return nil
		}
		v, err := r.Value(1 << 10)
		if err != nil {
			return nil
		}
		if string(k.Str) == "block" {
			return v
		}
	}
	return nil
}

// content returns the assembled content blocks in storage form: each
// block's block-end value, else the block built from its deltas.
func (a *assembler) content() [][]byte {
	var blocks [][]byte
	for _, i := range a.order {
		p := a.blocks[i]
		if p.final != nil {
			blocks = append(blocks, p.final)
			continue
		}
		var o codec.Object
		o.Grow(64 + len(p.id) + len(p.name) + p.text.Len() + p.args.Len())
		switch p.typ {
		case codec.BlockText, codec.BlockReasoning:
			o.Str("type", p.typ).Str("text", p.text.String())
		case codec.BlockToolCall:
			o.Str("type", p.typ).Str("id", p.id).Str("name", p.name).Str("arguments", p.args.String())
		default:
			continue // an unknown block that never ended: nothing to keep
		}
		blocks = append(blocks, o.Bytes())
	}
	return blocks
}

// message builds assistant/message data: content, provenance when the
// config names a provider, usage when the stream reported it.
func (a *assembler) message(turn, step int64, cfg header.Config) []byte {
	blocks := a.content()
	size := 128 + len(cfg.Provider) + len(cfg.Model) + len(a.replay)
	for _, b := range blocks {
		size += len(b)
	}
	var o codec.Object
	o.Grow(size) // a long answer's blocks are copied once, into place
	o.Int("turn", turn).Int("step", step).Array("content", blocks...)
	if cfg.HasProvider {
		var p codec.Object
		p.Str("provider", cfg.Provider).Str("model", cfg.Model)
		if a.replay != nil {
			p.Value("replayState", a.replay)
		}
		o.Value("provenance", p.Bytes())
	}
	if a.usage != nil {
		o.Value("usage", usageStorage(*a.usage))
	}
	return o.Bytes()
}
