package main

import (
	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/codec"
)

// maxDepth bounds the nesting logtool follows inside a stored value.
const maxDepth = audit.MaxDepth

// The readers of stored values are package audit's, shared with the web UI.
var (
	eachField    = audit.EachField
	lookup       = audit.Lookup
	scalar       = audit.Scalar
	lookupString = audit.LookupString
	jsonOf       = audit.JSONOf
)

// errFound stops a walk over stored fields once it has what it wants.
var errFound = errors.New("logtool: found")

// usage sums the token usage of assistant messages (docs/format.md#event-types: the
// disjoint buckets of assistant/message.data.usage).
type usage struct {
	// Messages counts the assistant messages that carry a usage object.
	Messages                                        int64
	Input, Output, CacheRead, CacheWrite, Reasoning int64
}

// add adds the usage of ev when it is an assistant/message that has one.
func (u *usage) add(ev *codec.Event) error {
	if ev.Type != codec.TypeAssistantMessage {
		return nil
	}
	v, ok, err := lookup(ev.Raw, "data", "usage")
	if err != nil {
		return errors.Wrapf(err, "seq %d: usage", errors.Safe(ev.Seq))
	}
	if !ok {
		return nil
	}
	u.Messages++
	return eachField(v, func(k string, val []byte) error {
		t := scalar(val)
		if t.Kind != codec.KindInt && t.Kind != codec.KindFloat {
			return nil
		}
		n := int64(t.Number())
		switch k {
		case "inputTokens":
			u.Input += n
		case "outputTokens":
			u.Output += n
		case "cacheReadTokens":
			u.CacheRead += n
		case "cacheWriteTokens":
			u.CacheWrite += n
		case "reasoningTokens":
			u.Reasoning += n
		}
		return nil
	})
}
