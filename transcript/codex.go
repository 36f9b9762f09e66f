package transcript

import (
	"bytes"
	"io"
	"strings"

	"github.com/sessionlog/sessionlog/codec"
)

// scanCodex is the first pass over a Codex rollout: the session id, cwd
// and base instructions of the first session_meta, and the first
// timestamp.
func scanCodex(lr *lineReader, lim codec.Limits) (headerInfo, error) {
	var info headerInfo
	var mp []byte
	haveTime := false
	for {
		line, _, err := lr.next()
		if err == io.EOF {
			return info, nil
		}
		if err != nil {
			return info, err
		}
		mp, err = codec.FromJSON(mp[:0], line, lim)
		if err != nil {
			continue
		}
		v := value(mp)
		if !haveTime {
			if t, ok := millis(v.get("timestamp")); ok {
				info.created, haveTime = t, true
			}
		}
		if v.get("type").text() == "session_meta" {
			p := v.get("payload")
			info.id = p.get("id").text()
			info.cwd = p.get("cwd").text()
			if !haveTime {
				if t, ok := millis(p.get("timestamp")); ok {
					info.created, haveTime = t, true
				}
			}
			return info, nil
		}
	}
}

// codexMapper maps Codex rollout lines (docs/transcripts.md).
type codexMapper struct {
	meta      bool   // the first session_meta was read
	lastTotal []byte // total_token_usage of the last counted token_count
}

// codexKept are the Codex line kinds the importer knows and keeps without
// mapping: UI events that repeat response items, and bookkeeping.
var codexKept = map[string]bool{
	"session_meta": true, "turn_context": true, "world_state": true,
	"inter_agent_communication_metadata": true,
	"event_msg/user_message":             true, "event_msg/agent_message": true, "event_msg/agent_reasoning": true,
	"event_msg/agent_reasoning_raw_content": true, "event_msg/agent_reasoning_section_break": true,
	"event_msg/token_count": true, "event_msg/exec_command_begin": true, "event_msg/exec_command_end": true,
	"event_msg/patch_apply_begin": true, "event_msg/patch_apply_end": true, "event_msg/mcp_tool_call_begin": true,
	"event_msg/mcp_tool_call_end": true, "event_msg/web_search_begin": true, "event_msg/web_search_end": true,
	"event_msg/context_compacted": true, "event_msg/error": true, "event_msg/stream_error": true,
	"event_msg/task_started": true, "event_msg/task_complete": true, "event_msg/turn_aborted": true,
	"event_msg/turn_diff": true, "event_msg/view_image_tool_call": true, "event_msg/entered_review_mode": true,
	"event_msg/exited_review_mode": true, "event_msg/item_completed": true, "event_msg/thread_name_updated": true,
	"event_msg/thread_settings_applied": true, "event_msg/undo_completed": true, "event_msg/image_generation_end": true,
	"event_msg/sub_agent_activity": true, "event_msg/thread_goal_updated": true, "event_msg/guardian_assessment": true,
	"event_msg/collab_agent_spawn_end": true, "event_msg/collab_agent_interaction_end": true,
	"event_msg/collab_waiting_end": true, "event_msg/collab_close_end": true,
	"event_msg/dynamic_tool_call_request": true, "event_msg/dynamic_tool_call_response": true,
	"event_msg/plan_update": true, "event_msg/background_event": true,
	"response_item/message": true, "response_item/reasoning": true, "response_item/function_call": true,
	"response_item/function_call_output": true, "response_item/custom_tool_call": true,
	"response_item/custom_tool_call_output": true, "response_item/local_shell_call": true,
	"response_item/web_search_call": true, "response_item/ghost_snapshot": true,
	"response_item/tool_search_call": true, "response_item/tool_search_output": true,
	"response_item/image_generation_call": true, "response_item/agent_message": true,
	"compacted": true,
}

func codexKind(typ, payload value) string {
	t := typ.text()
	switch t {
	case "event_msg", "response_item":
		return t + "/" + payload.get("type").text()
	case "":
		return "(no type)"
	}
	return t
}

func (m *codexMapper) line(b *builder, n int, v value) (string, int, error) {
	f := v.fields("type", "payload")
	kind := codexKind(f[0], f[1])
	how, err := m.mapLine(b, n, kind, f[1])
	if how == lineKept && !codexKept[kind] {
		how = lineUnknown
	}
	return kind, how, err
}

func (m *codexMapper) mapLine(b *builder, n int, kind string, p value) (int, error) {
	switch kind {
	case "session_meta":
		if m.meta {
			return lineKept, nil
		}
		m.meta = true
		bi := p.get("base_instructions")
		if s, ok := bi.str(); ok {
			b.system = s
		} else {
			b.system = bi.get("text").text()
		}
		return lineMapped, nil
	case "turn_context":
		if model, ok := p.get("model").str(); ok && model != "" {
			if model != b.model {
				b.model, b.modelLine = model, n
			}
			return lineMapped, nil
		}
	case "event_msg/task_started":
		return lineMapped, b.openTurn(n, false, false)
	case "event_msg/task_complete":
		if b.inTurn {
			return lineMapped, b.closeTurn(n, nil)
		}
	case "event_msg/turn_aborted":
		if b.inTurn {
			var r codec.Object
			r.Str("kind", "aborted")
			if s, ok := p.get("reason").str(); ok {
				r.Str("reason", s)
			}
			return lineMapped, b.closeTurn(n, r.Bytes())
		}
	case "event_msg/token_count":
		return m.tokenCount(b, n, p)
	case "response_item/message":
		return m.message(b, n, p)
	case "response_item/reasoning":
		bl, replay, ok := codexReasoning(p)
		if !ok {
			return lineKept, nil
		}
		st, err := b.response(n, "")
		if err != nil {
			return 0, err
		}
		st.blocks = append(st.blocks, bl)
		if replay != nil {
			st.replay = append(st.replay, replay)
		}
		return lineMapped, nil
	case "response_item/function_call", "response_item/custom_tool_call":
		c, bl, ok := codexCall(p, kind == "response_item/custom_tool_call", n, b.time)
		if !ok {
			return lineKept, nil
		}
		st, err := b.response(n, "")
		if err != nil {
			return 0, err
		}
		for _, x := range st.calls {
			if x.id == c.id {
				return lineKept, nil
			}
		}
		st.blocks = append(st.blocks, bl)
		st.calls = append(st.calls, c)
		return lineMapped, nil
	case "response_item/function_call_output", "response_item/custom_tool_call_output":
		r, ok := codexOutput(p, n)
		if !ok || !b.answer(r) {
			return lineKept, nil
		}
		return lineMapped, nil
	case "compacted":
		msg, ok := p.get("message").str()
		if !ok {
			return lineKept, nil
		}
		start, err := b.compactStart(n)
		if err != nil {
			return 0, err
		}
		return lineMapped, b.compactEnd(start, n, codec.Array(textBlock(msg)), -1)
	}
	return lineKept, nil
}

// codexReasoning converts a reasoning item (a rollout's response_item,
// or a Responses API input item): its summary texts joined by a blank
// line as one reasoning block, its encrypted_content (nil: none) as
// replay state.
func codexReasoning(p value) (bl, replay []byte, ok bool) {
	var texts []string
	for _, s := range p.get("summary").elems() {
		t, ok := s.get("text").str()
		if !ok {
			return nil, nil, false
		}
		texts = append(texts, t)
	}
	var o codec.Object
	o.Str("type", codec.BlockReasoning).Str("text", strings.Join(texts, "\n\n"))
	if enc := p.get("encrypted_content"); enc.kind() == codec.KindString {
		replay = append([]byte(nil), enc...)
	}
	return o.Bytes(), replay, true
}

// codexCall converts a function_call item, or with custom a
// custom_tool_call (whose arguments are its input text), into a call at
// line n and time t and its tool-call block.
func codexCall(p value, custom bool, n int, t float64) (toolCall, []byte, bool) {
	f := p.fields("call_id", "name", "arguments", "input")
	id, ok1 := f[0].str()
	name, ok2 := f[1].str()
	args, ok3 := f[2].str()
	if custom {
		args, ok3 = f[3].str()
	}
	if !ok1 || !ok2 || !ok3 || id == "" {
		return toolCall{}, nil, false
	}
	var o codec.Object
	o.Str("type", codec.BlockToolCall).Str("id", id).Str("name", name).Str("arguments", args)
	return toolCall{id: id, name: name, args: args, line: n, time: t}, o.Bytes(), true
}

// codexOutput converts a function_call_output or custom_tool_call_output
// item into a tool result: an output string is one text block, a list of
// input_text/output_text parts text blocks (other typed parts opaque).
func codexOutput(p value, n int) (toolResult, bool) {
	f := p.fields("call_id", "output")
	id, ok := f[0].str()
	if !ok {
		return toolResult{}, false
	}
	out := f[1]
	var content []byte
	switch out.kind() {
	case codec.KindString:
		content = textArray(out)
	case codec.KindArray:
		var bs [][]byte
		bs, ok = contentOf(out, "input_text", "output_text")
		content = codec.Array(bs...)
	case codec.KindObject:
		var bl []byte
		bl, ok = block(out, "input_text", "output_text")
		content = codec.Array(bl)
	default:
		ok = false
	}
	return toolResult{id: id, content: content, line: n}, ok
}

// message maps a response_item message by its role.
func (m *codexMapper) message(b *builder, n int, p value) (int, error) {
	f := p.fields("role", "content")
	role := f[0].text()
	content, ok := contentOf(f[1], "input_text", "output_text")
	if !ok {
		return lineKept, nil
	}
	switch role {
	case "user":
		if err := m.input(b, n); err != nil {
			return 0, err
		}
		return lineMapped, b.userMessage(n, codec.Array(content...))
	case "developer", "system":
		if err := m.input(b, n); err != nil {
			return 0, err
		}
		return lineMapped, b.contextMessage(n, codec.Array(content...), role)
	case "assistant":
		st, err := b.response(n, "")
		if err != nil {
			return 0, err
		}
		if len(st.blocks) == 0 {
			st.msgLine = n
		}
		st.blocks = append(st.blocks, content...)
		return lineMapped, nil
	}
	return lineKept, nil
}

// input is an input item: it ends the pending response; outside an
// explicit turn a user input after a response starts a new implicit turn.
func (m *codexMapper) input(b *builder, n int) error {
	if err := b.closeStep(); err != nil {
		return err
	}
	if b.inTurn && b.implicit && b.steps > 0 {
		return b.openTurn(n, false, true)
	}
	return b.ensureTurn(n)
}

// tokenCount attaches a token_count's last_token_usage to the step it
// counts: the pending response when it has no usage yet, else a step of
// its own. A repeat (same total_token_usage as the last) is kept only.
func (m *codexMapper) tokenCount(b *builder, n int, p value) (int, error) {
	info := p.get("info")
	last := info.get("last_token_usage")
	in, ok1 := last.get("input_tokens").num()
	out, ok2 := last.get("output_tokens").num()
	if !ok1 || !ok2 {
		return lineKept, nil
	}
	total := info.get("total_token_usage")
	if total != nil && m.lastTotal != nil && bytes.Equal(total, m.lastTotal) {
		return lineKept, nil
	}
	m.lastTotal = append(m.lastTotal[:0], total...)
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

func (m *codexMapper) finish(b *builder) error { return b.closeStep() }

// parsed: the Codex first pass stops at session_meta and keeps nothing.
func (m *codexMapper) parsed(int) ([]byte, bool) { return nil, false }
