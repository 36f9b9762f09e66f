package transcript

import (
	"bytes"
	"io"
	"strings"

	"github.com/sessionlog/sessionlog/codec"
)

// scanCodex is the first pass over a Codex rollout: the session id, cwd
// and base instructions of the first session_meta, the first timestamp,
// and which turns hold their conversation only in event_msg lines (no
// response_item message, reasoning, call or output): those map their
// event_msg lines instead (codexMapper.eventOnly). A turn here is the
// span of lines up to a task_complete or turn_aborted: Codex may write a
// turn's user_message before its task_started.
func scanCodex(lr *lineReader, lim codec.Limits) (headerInfo, *codexMapper, error) {
	var info headerInfo
	m := &codexMapper{}
	var mp []byte
	haveTime, meta := false, false
	turn := 0
	items := []bool{false} // by turn: the turn has response_item conversation lines
	for {
		line, _, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return info, nil, err
		}
		// Only lines that may matter are parsed: a rollout is compact JSON,
		// and every line names its type.
		if meta && haveTime && !bytes.Contains(line, []byte("task_complete")) && !bytes.Contains(line, []byte("turn_aborted")) &&
			!bytes.Contains(line, []byte("response_item")) {
			continue
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
		f := v.fields("type", "payload")
		switch kind := codexKind(f[0], f[1]); {
		case kind == "session_meta" && !meta:
			meta = true
			p := f[1]
			info.id = p.get("id").text()
			info.cwd = p.get("cwd").text()
			if !haveTime {
				if t, ok := millis(p.get("timestamp")); ok {
					info.created, haveTime = t, true
				}
			}
		case codexTurnEnd[kind]:
			turn++
			items = append(items, false)
		case codexConversation[kind]:
			items[turn] = true
		}
	}
	m.eventOnly = make([]bool, len(items))
	for i, has := range items {
		m.eventOnly[i] = !has
	}
	return info, m, nil
}

// codexTurnEnd are the kinds that end a turn (for eventOnly).
var codexTurnEnd = map[string]bool{"event_msg/task_complete": true, "event_msg/turn_aborted": true}

// codexConversation are the response_item kinds that hold a turn's
// conversation: a turn with none of them maps its event_msg lines.
var codexConversation = map[string]bool{
	"response_item/message": true, "response_item/reasoning": true, "response_item/function_call": true,
	"response_item/custom_tool_call": true, "response_item/local_shell_call": true,
	"response_item/web_search_call": true, "response_item/function_call_output": true,
	"response_item/custom_tool_call_output": true, "response_item/local_shell_call_output": true,
}

// codexMapper maps Codex rollout lines (docs/transcripts.md).
type codexMapper struct {
	meta bool // the first session_meta was read
	// lastTotal is the cumulative usage of the last usage mapped (a
	// token_count's total_token_usage, a token_usage_record's
	// thread_token_usage): the other line reporting the same request
	// repeats it, and is kept only.
	lastTotal [6]float64
	counted   bool
	// tools are the tools of the additional_tools items so far, in the
	// header's form.
	tools [][]byte
	// eventOnly says, by turn (the lines up to a turn's end: scanCodex),
	// that the turn's conversation is only in event_msg lines; turn is the
	// turn being read.
	eventOnly []bool
	turn      int
	// calls are the ids of the calls mapped so far.
	calls map[string]bool
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
	"compacted": true, "token_usage_record": true, "response_item/additional_tools": true,
	"response_item/local_shell_call_output": true,
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
	if codexTurnEnd[kind] {
		m.turn++
	}
	if how == lineKept && !codexKept[kind] {
		how = lineUnknown
	}
	return kind, how, err
}

func (m *codexMapper) mapLine(b *builder, n int, kind string, p value) (int, error) {
	events := m.turn < len(m.eventOnly) && m.eventOnly[m.turn]
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
			b.setModel(model, n)
			return lineMapped, nil
		}
	case "event_msg/task_started":
		if b.inTurn && b.implicit && b.steps == 0 && b.st == nil {
			// The turn's input came before its task_started: it starts
			// the turn the importer opened for it.
			b.implicit = false
			return lineMapped, nil
		}
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
		info := p.get("info")
		return m.usage(b, n, info.get("last_token_usage"), info.get("total_token_usage"))
	case "token_usage_record":
		return m.usage(b, n, p.get("usage"), p.get("thread_token_usage"))
	case "response_item/additional_tools":
		req := request{api: APIResponses}
		if err := req.headerTools(p.get("tools"), false); err != nil {
			return lineKept, nil
		}
		m.tools = append(m.tools, req.tools...)
		b.setTools(m.tools, n)
		return lineMapped, nil
	case "response_item/message":
		return m.message(b, n, p)
	case "response_item/reasoning":
		bl, replay, ok := codexReasoning(p)
		if !ok {
			return lineKept, nil
		}
		return m.output(b, n, bl, replay, nil)
	case "response_item/function_call", "response_item/custom_tool_call", "response_item/local_shell_call":
		c, bl, ok := codexCall(p, kind[len("response_item/"):], n, b.time)
		if !ok {
			return lineKept, nil
		}
		return m.output(b, n, bl, nil, &c)
	case "response_item/web_search_call":
		// A call the provider ran: no result comes back, so it is no
		// tool call of the engine's but an opaque block of the answer, as
		// the gateway maps it.
		// A copy: p is the line's, whose buffer the next line reuses.
		return m.output(b, n, append([]byte(nil), p.without("internal_chat_message_metadata_passthrough", marker)...), nil, nil)
	case "response_item/function_call_output", "response_item/custom_tool_call_output", "response_item/local_shell_call_output":
		r, ok := codexOutput(p, n)
		if !ok || !b.answer(r) {
			return lineKept, nil
		}
		return lineMapped, nil
	case "event_msg/mcp_tool_call_end":
		return m.mcpCall(b, n, p)
	case "event_msg/user_message", "event_msg/agent_message", "event_msg/agent_reasoning":
		if events {
			return m.event(b, n, kind, p)
		}
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

// output adds an output item of the model (a block, its replay state, a
// call) to the response being read: a call whose id the response holds
// already is kept only.
func (m *codexMapper) output(b *builder, n int, bl, replay []byte, c *toolCall) (int, error) {
	st, err := b.response(n, "")
	if err != nil {
		return 0, err
	}
	if c != nil {
		if m.calls[c.id] {
			return lineKept, nil
		}
		if m.calls == nil {
			m.calls = map[string]bool{}
		}
		m.calls[c.id] = true
		st.calls = append(st.calls, *c)
	}
	st.blocks = append(st.blocks, bl)
	if replay != nil {
		st.replay = append(st.replay, replay)
	}
	return lineMapped, nil
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

// codexCall converts a call item of type typ into a call at line n and
// time t and its tool-call block: a function_call (arguments its JSON
// text), a custom_tool_call (arguments its input text) or a
// local_shell_call (named local_shell, arguments its action's JSON).
func codexCall(p value, typ string, n int, t float64) (toolCall, []byte, bool) {
	f := p.fields("call_id", "name", "arguments", "input", "action", "id")
	id, ok1 := f[0].str()
	name, ok2 := f[1].str()
	args, ok3 := f[2].str()
	switch typ {
	case "custom_tool_call":
		args, ok3 = f[3].str()
	case "local_shell_call":
		if !ok1 {
			id, ok1 = f[5].str()
		}
		name, ok2 = "local_shell", true
		args, ok3 = f[4].json(), f[4].kind() == codec.KindObject
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
		if b.header == nil && b.system != "" && len(content) == 1 && value(content[0]).get("text").text() == b.system {
			// The base instructions sent as this message (Codex's lite
			// requests carry no instructions): not the system prompt too.
			b.system = ""
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

func (m *codexMapper) finish(b *builder) error { return b.closeStep() }

// parsed: the Codex first pass stops at session_meta and keeps nothing.
func (m *codexMapper) parsed(int) ([]byte, bool) { return nil, false }
