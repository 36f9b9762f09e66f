package header

import (
	"github.com/sessionlog/sessionlog/codec"
)

// Encode returns the msgpack image of the canonical header, keys in DSH's
// order: config, system?, tools?, messagePrefix? (absent when empty). The
// config is written as Config.AppendMsgpack writes it, tools as their
// stored bytes, prefix messages as the storage form of their JSON text.
// Encode is deterministic, and Decode(s.Encode()) is Equal to s.
//
// A prefix message that is not valid JSON (which Decode and ParseMessage
// never produce) is written as null, so the result fails Decode instead of
// silently changing the request.
func (s Snapshot) Encode() []byte {
	n := 1
	if s.System != "" {
		n++
	}
	if len(s.Tools) > 0 {
		n++
	}
	if len(s.Prefix) > 0 {
		n++
	}
	b := codec.AppendMapHeader(nil, n)
	b = codec.AppendString(b, "config")
	b = s.Config.AppendMsgpack(b)
	if s.System != "" {
		b = codec.AppendString(b, "system")
		b = codec.AppendString(b, s.System)
	}
	if len(s.Tools) > 0 {
		b = codec.AppendString(b, "tools")
		b = appendTools(b, s.Tools)
	}
	if len(s.Prefix) > 0 {
		b = codec.AppendString(b, "messagePrefix")
		b = appendMessages(b, s.Prefix)
	}
	return b
}

// appendTools appends a tools array from the tools' stored bytes.
func appendTools(b []byte, tools []Tool) []byte {
	b = codec.AppendArrayHeader(b, len(tools))
	for _, t := range tools {
		b = t.appendMsgpack(b)
	}
	return b
}

// appendMsgpack appends the tool's stored form: Raw, or the storage form of
// JSON for a Tool that carries only its text.
func (t Tool) appendMsgpack(b []byte) []byte {
	if t.Raw != nil {
		return append(b, t.Raw...)
	}
	return appendJSONValue(b, t.JSON)
}

// appendMessages appends a message array from the messages' JSON texts.
func appendMessages(b []byte, msgs [][]byte) []byte {
	b = codec.AppendArrayHeader(b, len(msgs))
	for _, m := range msgs {
		b = appendJSONValue(b, m)
	}
	return b
}

// appendJSONValue appends the storage form of one JSON text, or null when
// the text is not JSON.
func appendJSONValue(b, text []byte) []byte {
	out, err := codec.FromJSON(b, text, codec.Limits{})
	if err != nil {
		return codec.AppendNil(b)
	}
	return out
}

// AppendMsgpack appends the config object's storage form. While the typed
// fields agree with Raw (Equal to what Raw decodes to), Raw is written
// verbatim, unknown keys and key order included. Otherwise the typed fields
// are written in DSH's order (provider?, model, temperature?, maxTokens?,
// stop?), then the wire keys (wire?, thinking?, reasoningEffort?), followed
// by Raw's unknown keys in their stored order.
func (c Config) AppendMsgpack(b []byte) []byte {
	var extra [][2][]byte
	if c.Raw != nil {
		if rc, err := parseConfig(c.Raw, "config"); err == nil && rc.Equal(c) {
			return append(b, c.Raw...)
		}
		extra = unknownKeys(c.Raw)
	}
	n := 1 + len(extra)
	for _, has := range []bool{c.HasProvider, c.HasTemperature, c.HasMaxTokens, c.HasStop, c.HasWire, c.HasThinking, c.HasReasoningEffort} {
		if has {
			n++
		}
	}
	b = codec.AppendMapHeader(b, n)
	if c.HasProvider {
		b = codec.AppendString(b, "provider")
		b = codec.AppendString(b, c.Provider)
	}
	b = codec.AppendString(b, "model")
	b = codec.AppendString(b, c.Model)
	if c.HasTemperature {
		b = codec.AppendString(b, "temperature")
		b = codec.AppendNumber(b, c.Temperature)
	}
	if c.HasMaxTokens {
		b = codec.AppendString(b, "maxTokens")
		b = codec.AppendInt(b, c.MaxTokens)
	}
	if c.HasStop {
		b = codec.AppendString(b, "stop")
		b = appendStrings(b, c.Stop)
	}
	for _, kv := range []struct {
		has      bool
		key, val string
	}{{c.HasWire, "wire", c.Wire}, {c.HasThinking, "thinking", c.Thinking}, {c.HasReasoningEffort, "reasoningEffort", c.ReasoningEffort}} {
		if kv.has {
			b = codec.AppendString(b, kv.key)
			b = codec.AppendString(b, kv.val)
		}
	}
	for _, kv := range extra {
		b = append(b, kv[0]...)
		b = append(b, kv[1]...)
	}
	return b
}

// unknownKeys returns the stored key and value bytes of every pair of the
// config object raw whose key the engine does not read, in stored order.
// raw that is not an object gives nothing.
func unknownKeys(raw []byte) [][2][]byte {
	r := codec.NewReader(raw)
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindObject {
		return nil
	}
	var out [][2][]byte
	for i := 0; i < t.N; i++ {
		k, err := r.Value(codec.MaxStoredDepth)
		if err != nil {
			return out
		}
		v, err := r.Value(codec.MaxStoredDepth)
		if err != nil {
			return out
		}
		kt, err := codec.NewReader(k).Next()
		if err != nil || kt.Kind != codec.KindString {
			continue
		}
		switch string(kt.Str) {
		case "provider", "model", "temperature", "maxTokens", "stop", "wire", "thinking", "reasoningEffort":
		default:
			out = append(out, [2][]byte{k, v})
		}
	}
	return out
}

func appendStrings(b []byte, ss []string) []byte {
	b = codec.AppendArrayHeader(b, len(ss))
	for _, s := range ss {
		b = codec.AppendString(b, s)
	}
	return b
}

// Encode returns the msgpack image of the delta's data object, keys in
// DSH's order: system?, tools?, config?, messagePrefix? (only those
// present). Inside system: keepStart, keepEnd, insert; inside tools: added,
// removed, changed, each always written, empty or not, as DSH's diffHeader
// did. HasPrefix with an empty Prefix is written as [] (the transition to
// absent).
func (d Delta) Encode() []byte {
	n := 0
	for _, has := range []bool{d.System != nil, d.Tools != nil, d.Config != nil, d.HasPrefix} {
		if has {
			n++
		}
	}
	b := codec.AppendMapHeader(nil, n)
	if d.System != nil {
		b = codec.AppendString(b, "system")
		b = codec.AppendMapHeader(b, 3)
		b = codec.AppendString(b, "keepStart")
		b = codec.AppendInt(b, d.System.KeepStart)
		b = codec.AppendString(b, "keepEnd")
		b = codec.AppendInt(b, d.System.KeepEnd)
		b = codec.AppendString(b, "insert")
		b = appendStrings(b, d.System.Insert)
	}
	if d.Tools != nil {
		b = codec.AppendString(b, "tools")
		b = codec.AppendMapHeader(b, 3)
		b = codec.AppendString(b, "added")
		b = appendTools(b, d.Tools.Added)
		b = codec.AppendString(b, "removed")
		b = appendStrings(b, d.Tools.Removed)
		b = codec.AppendString(b, "changed")
		b = appendTools(b, d.Tools.Changed)
	}
	if d.Config != nil {
		b = codec.AppendString(b, "config")
		b = d.Config.AppendMsgpack(b)
	}
	if d.HasPrefix {
		b = codec.AppendString(b, "messagePrefix")
		b = appendMessages(b, d.Prefix)
	}
	return b
}
