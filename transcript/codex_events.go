package transcript

import (
	"github.com/sessionlog/sessionlog/codec"
)

// codexUsageKeys are the counts of a Codex usage object, in the order
// lastTotal holds them.
var codexUsageKeys = [6]string{"input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens"}

// usage attaches one request's usage (last: a token_count's
// last_token_usage, a token_usage_record's usage) to the step it counts:
// the pending response when it has no usage yet, else a step of its own.
// total is the thread's cumulative usage after it: a line whose total is
// the last one mapped reports the same request again (a token_count
// repeating its token_usage_record, or repeating itself) and is kept
// only.
func (m *codexMapper) usage(b *builder, n int, last, total value) (int, error) {
	in, ok1 := last.get("input_tokens").num()
	out, ok2 := last.get("output_tokens").num()
	if !ok1 || !ok2 {
		return lineKept, nil
	}
	if total != nil {
		var t [6]float64
		for i, k := range codexUsageKeys {
			t[i], _ = total.get(k).num()
		}
		if m.counted && t == m.lastTotal {
			return lineKept, nil
		}
		m.lastTotal, m.counted = t, true
	}
	cached, hasCached := last.get("cached_input_tokens").num()
	write, hasWrite := last.get("cache_write_input_tokens").num()
	var u codec.Object
	u.Int("inputTokens", max(int64(in)-int64(cached)-int64(write), 0)).Int("outputTokens", int64(out))
	if hasCached {
		u.Int("cacheReadTokens", int64(cached))
	}
	if hasWrite {
		u.Int("cacheWriteTokens", int64(write))
	}
	if r, ok := last.get("reasoning_output_tokens").num(); ok {
		u.Int("reasoningTokens", int64(r))
	}
	st := b.st
	if st == nil || st.usage != nil {
		// A response the rollout records only by its count.
		if err := b.closeStep(); err != nil {
			return 0, err
		}
		var err error
		if st, err = b.response(n, ""); err != nil {
			return 0, err
		}
	}
	st.usage = u.Bytes()
	st.done = true
	st.end = max(st.end, b.time)
	return lineMapped, nil
}

// event maps the event_msg lines of a turn that records its conversation
// only in them (scanCodex): user_message a user/message, agent_reasoning
// a reasoning block and agent_message a text block of the response being
// read.
func (m *codexMapper) event(b *builder, n int, kind string, p value) (int, error) {
	switch kind {
	case "event_msg/user_message":
		msg := p.get("message")
		if msg.kind() != codec.KindString {
			return lineKept, nil
		}
		if err := m.input(b, n); err != nil {
			return 0, err
		}
		return lineMapped, b.userMessage(n, textArray(msg))
	case "event_msg/agent_reasoning":
		t := p.get("text")
		if t.kind() != codec.KindString {
			return lineKept, nil
		}
		return m.output(b, n, blockOf(codec.BlockReasoning, t), nil, nil)
	case "event_msg/agent_message":
		t := p.get("message")
		if t.kind() != codec.KindString {
			return lineKept, nil
		}
		st, err := b.response(n, "")
		if err != nil {
			return 0, err
		}
		if len(st.blocks) == 0 {
			st.msgLine = n
		}
		st.blocks = append(st.blocks, blockOf(codec.BlockText, t))
		return lineMapped, nil
	}
	return lineKept, nil
}

// mcpCall maps an mcp_tool_call_end whose call no response_item recorded
// (never both): a call named server__tool (as Codex names MCP tools to
// the model) with the invocation's arguments, in the response being
// read, and its result: Ok's content parts (text as text, others
// opaque, isError as given) or Err's message as an error.
func (m *codexMapper) mcpCall(b *builder, n int, p value) (int, error) {
	f := p.fields("call_id", "invocation", "result")
	id, ok := f[0].str()
	inv := f[1].fields("server", "tool", "arguments")
	server, ok1 := inv[0].str()
	tool, ok2 := inv[1].str()
	if !ok || id == "" || !ok1 || !ok2 {
		return lineKept, nil
	}
	if m.calls[id] {
		return lineKept, nil // its function_call is mapped
	}
	args := "{}"
	if inv[2].kind() == codec.KindObject {
		args = inv[2].json()
	}
	r := toolResult{id: id, line: n}
	res := f[2]
	if e := res.get("Err"); e != nil {
		r.isError = true
		if s, ok := e.str(); ok {
			r.content = codec.Array(textBlock(s))
		} else {
			r.content = codec.Array(textBlock(e.json()))
		}
	} else {
		okv := res.get("Ok")
		c, ok := contentOf(okv.get("content"), "text")
		if okv.kind() != codec.KindObject || !ok {
			return lineKept, nil
		}
		r.isError, _ = okv.get("isError").boolean()
		r.content = codec.Array(c...)
	}
	c := toolCall{id: id, name: server + "__" + tool, args: args, line: n, time: b.time}
	var o codec.Object
	o.Str("type", codec.BlockToolCall).Str("id", id).Str("name", c.name).Str("arguments", args)
	how, err := m.output(b, n, o.Bytes(), nil, &c)
	if err != nil || how != lineMapped {
		return how, err
	}
	b.answer(r)
	return lineMapped, nil
}
