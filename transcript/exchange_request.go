package transcript

import (
	"crypto/sha256"
	"encoding/binary"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// The APIs the recording gateway maps (docs/gateway.md#running-it), by the names its
// wire/request events record.
const (
	APIAnthropic = "anthropic-messages"
	APIChat      = "openai-chat"
	APIResponses = "openai-responses"
)

// marker is the key of a cache marker: dropped from every block, tool and
// system part in the normal form (docs/gateway.md#sessions).
const marker = "cache_control"

// Kinds of conversation units: what surface event each becomes.
const (
	unitUser      = 'u' // user/message
	unitContext   = 'c' // context/message, envelope raw
	unitResult    = 'r' // tool/result (or a user/message holding the tool-result block)
	unitAssistant = 'a' // assistant/message
)

// unit is one item of a conversation in normal form: one surface event.
type unit struct {
	kind byte
	item int // the index of the API item it comes from
	// prompt marks a user message without tool results: a new prompt.
	prompt bool
	// blocks is the content (user, context, assistant) in storage form.
	blocks [][]byte
	source string     // context: the role it had
	result toolResult // result
	replay [][]byte   // assistant: replay state
	calls  []toolCall // assistant
	key    digest     // normal form
	raw    digest     // the API item's bytes, cache markers included
}

type digest [32]byte

// request is a request body in normal form: its header parts and its
// conversation.
type request struct {
	api      string
	model    string
	system   string
	sysRaw   digest
	tools    [][]byte // header tools, storage form
	toolsRaw digest
	config   []byte // header config, storage form
	units    []unit
	root     digest
	rootItem int
	hasRoot  bool
	// cacheKey is the body's top-level prompt_cache_key ("" when none).
	cacheKey string
	// source is the format the header config names as its source.
	source string
}

// keyer hashes the normal form of a unit: length-prefixed fields, so
// that no two field lists collide.
type keyer struct{ buf []byte }

func (k *keyer) add(b []byte) *keyer {
	k.buf = binary.AppendUvarint(k.buf, uint64(len(b)))
	k.buf = append(k.buf, b...)
	return k
}

func (k *keyer) str(s string) *keyer { return k.add([]byte(s)) }

func (k *keyer) sum() digest { return sha256.Sum256(k.buf) }

// contentKey is the key of a user or context message: its kind, source
// and blocks.
func contentKey(kind byte, source string, blocks [][]byte) digest {
	var k keyer
	k.str(string(kind)).str(source)
	for _, b := range blocks {
		k.add(b)
	}
	return k.sum()
}

// resultKey is the key of a tool result: call id, error flag and the
// result's blocks.
func resultKey(id string, isError bool, blocks [][]byte) digest {
	var k keyer
	flag := "0"
	if isError {
		flag = "1"
	}
	k.str("r").str(id).str(flag)
	for _, b := range blocks {
		k.add(b)
	}
	return k.sum()
}

// assistantKey is the key of an assistant message: its texts joined (as
// openai-chat's content joins them) and each tool call's id, name and
// arguments in canonical JSON. Reasoning and opaque blocks do not count:
// clients drop or keep them as their API asks, never changing what the
// model said.
func assistantKey(blocks [][]byte) digest {
	var text []byte
	var k keyer
	var calls keyer
	for _, b := range blocks {
		f := value(b).fields("type", "text", "id", "name", "arguments")
		switch f[0].text() {
		case codec.BlockText:
			text = append(text, f[1].text()...)
		case codec.BlockToolCall:
			calls.str(f[2].text()).str(f[3].text()).str(canonicalJSON(f[4].text()))
		}
	}
	k.str("a").add(text).add(calls.buf)
	return k.sum()
}

// canonicalJSON returns a JSON text in docs/format.md#json-text's form (keys in their
// order), or s itself when it is not JSON: arguments streamed as
// fragments and arguments a client re-serialized compare equal.
func canonicalJSON(s string) string {
	mp, err := codec.FromJSON(nil, []byte(s), codec.Limits{})
	if err != nil {
		return s
	}
	out, _, err := codec.ToJSON(nil, mp)
	if err != nil {
		return s
	}
	return string(out)
}

// rawKey digests an item's stored bytes.
func rawKey(items ...value) digest {
	var k keyer
	for _, v := range items {
		k.add(v)
	}
	return k.sum()
}

// requestf returns an error marked codec.ErrInvalid naming the API and
// what, never content.
func requestf(api, format string, args ...interface{}) error {
	err := errors.Newf(format, args...)
	return errclass.Mark(errors.Wrapf(err, "transcript: %s request", errors.Safe(api)), codec.ErrInvalid)
}

// parseRequest reads a request body of api into its normal form, its
// header config's source "gateway".
func parseRequest(api string, body []byte) (*request, error) {
	return parseRequestFrom(api, body, string(Gateway))
}

// parseRequestFrom reads a request body of api into its normal form, its
// header config's source the one given.
func parseRequestFrom(api string, body []byte, source string) (*request, error) {
	mp, err := codec.FromJSON(nil, body, codec.Limits{})
	if err != nil || value(mp).kind() != codec.KindObject {
		return nil, requestf(api, "the body is not a JSON object (%d bytes)", errors.Safe(len(body)))
	}
	v := value(mp)
	req := &request{api: api, model: v.get("model").text(), cacheKey: v.get("prompt_cache_key").text(), source: source}
	switch api {
	case APIAnthropic:
		err = req.anthropic(v)
	case APIChat:
		err = req.chat(v)
	case APIResponses:
		err = req.responses(v)
	default:
		return nil, errclass.Mark(errors.Newf("transcript: unknown api %q", errors.Safe(api)), codec.ErrInvalid)
	}
	if err != nil {
		return nil, err
	}
	req.config = gatewayConfig(api, v, source)
	req.coalesce()
	for i := range req.units {
		u := &req.units[i]
		switch u.kind {
		case unitUser, unitContext:
			u.key = contentKey(u.kind, u.source, u.blocks)
		case unitResult:
			u.key = resultKey(u.result.id, u.result.isError, value(u.result.content).elemBytes())
		case unitAssistant:
			u.key = assistantKey(u.blocks)
		}
	}
	// Assistant content with no text and no call (reasoning alone) is no
	// node of the conversation: clients keep or drop it as their API
	// asks, and it would make every such request an edit.
	kept := req.units[:0]
	for _, u := range req.units {
		if u.kind != unitAssistant || u.key != emptyAssistant {
			kept = append(kept, u)
		}
	}
	req.units = kept
	req.digestRoot()
	return req, nil
}

// emptyAssistant is the key of assistant content with no text and no
// tool call.
var emptyAssistant = assistantKey(nil)

// coalesce merges consecutive assistant units into one, as one answer
// gives them: a client may send an answer's blocks as several messages
// (the Responses API always does: one item each).
func (req *request) coalesce() {
	out := req.units[:0]
	for _, u := range req.units {
		if n := len(out); n > 0 && u.kind == unitAssistant && out[n-1].kind == unitAssistant {
			g := &out[n-1]
			g.blocks = append(g.blocks, u.blocks...)
			g.replay = append(g.replay, u.replay...)
			g.calls = append(g.calls, u.calls...)
			g.raw = rawKey(g.raw[:], u.raw[:])
			continue
		}
		out = append(out, u)
	}
	req.units = out
}

// setRoot makes the units of item the conversation's root (docs/gateway.md#sessions:
// its first user message), once; parseRequest digests it.
func (req *request) setRoot(item int) {
	if !req.hasRoot {
		req.rootItem, req.hasRoot = item, true
	}
}

// digestRoot digests the root's units' keys.
func (req *request) digestRoot() {
	if !req.hasRoot {
		return
	}
	k := keyer{buf: []byte("root")}
	for _, u := range req.units {
		if u.item == req.rootItem {
			k.add(u.key[:])
		}
	}
	req.root = k.sum()
}

// elemBytes returns an array's elements in storage form.
func (v value) elemBytes() [][]byte {
	es := v.elems()
	out := make([][]byte, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// unmark drops cache markers from opaque blocks (text blocks are rebuilt
// from their text alone and never hold one).
func unmark(blocks [][]byte) [][]byte {
	for i, b := range blocks {
		blocks[i] = value(b).without(marker)
	}
	return blocks
}

// userUnits appends the units of a user message whose content was
// converted into rest (the blocks that are not tool results) and results:
// the results first, as the importers map them, then one user message
// with the rest, a prompt when there are no results.
func (req *request) userUnits(i int, raw value, rest [][]byte, results []toolResult) {
	rk := rawKey(raw)
	for _, r := range results {
		r.content = codec.Array(unmark(value(r.content).elemBytes())...)
		req.units = append(req.units, unit{kind: unitResult, item: i, result: r, raw: rk})
	}
	if len(rest) > 0 || len(results) == 0 {
		req.units = append(req.units, unit{kind: unitUser, item: i, prompt: len(results) == 0, blocks: unmark(rest), raw: rk})
	}
}

// anthropic reads an Anthropic Messages body: system, tools and messages
// (user, assistant, and the system-role messages Claude Code puts among
// them, as context).
func (req *request) anthropic(v value) error {
	f := v.fields("system", "tools", "messages")
	switch s := f[0]; s.kind() {
	case codec.KindInvalid:
	case codec.KindString:
		req.system, req.sysRaw = s.text(), rawKey(s)
	case codec.KindArray:
		var texts []string
		for j, b := range s.elems() {
			t, ok := b.get("text").str()
			if b.get("type").text() != "text" || !ok {
				return requestf(req.api, "system block %d is not a text block", errors.Safe(j))
			}
			texts = append(texts, t)
		}
		// A blank line between blocks, as the Codex importer joins
		// reasoning summaries.
		req.system, req.sysRaw = strings.Join(texts, "\n\n"), rawKey(s)
	default:
		return requestf(req.api, "system is neither a string nor a list")
	}
	if err := req.headerTools(f[1], false); err != nil {
		return err
	}
	msgs := f[2]
	if msgs.kind() != codec.KindArray {
		return requestf(req.api, "messages is not a list")
	}
	for i, m := range msgs.elems() {
		mf := m.fields("role", "content")
		switch role := mf[0].text(); role {
		case "user":
			rest, results, ok := claudeUserContent(mf[1], i)
			if !ok {
				return requestf(req.api, "message %d: content blocks that do not convert", errors.Safe(i))
			}
			req.userUnits(i, m, rest, results)
			req.setRoot(i)
		case "assistant":
			bs, replay, calls, ok := claudeAssistantContent(mf[1], i, 0)
			if !ok {
				return requestf(req.api, "message %d: content blocks that do not convert", errors.Safe(i))
			}
			req.units = append(req.units, unit{kind: unitAssistant, item: i, blocks: unmark(bs), replay: replay, calls: calls, raw: rawKey(m)})
		default:
			if err := req.contextUnit(i, m, role, mf[1], "text"); err != nil {
				return err
			}
		}
	}
	return nil
}

// contextUnit appends a message of another role (system, developer) as a
// context message, its text parts (of the types named) as text.
func (req *request) contextUnit(i int, m value, role string, content value, text ...string) error {
	if role == "" {
		return requestf(req.api, "message %d has no role", errors.Safe(i))
	}
	bs, ok := contentOf(content, text...)
	if !ok {
		return requestf(req.api, "message %d: content blocks that do not convert", errors.Safe(i))
	}
	req.units = append(req.units, unit{kind: unitContext, item: i, source: role, blocks: unmark(bs), raw: rawKey(m)})
	return nil
}

// headerTools appends a body's tool list to the header's tools: each as
// {name, description?, parameters?, …its other keys but cache markers};
// nested is Chat Completions' {type:"function", function:{…}} form.
func (req *request) headerTools(tools value, nested bool) error {
	switch tools.kind() {
	case codec.KindInvalid:
		return nil
	case codec.KindArray:
	default:
		return requestf(req.api, "tools is not a list")
	}
	raw := rawKey(req.toolsRaw[:], tools)
	for j, t := range tools.elems() {
		obj := t
		if nested && t.get("type").text() == "function" && t.get("function").kind() == codec.KindObject {
			obj = t.get("function")
		}
		if obj.kind() != codec.KindObject {
			return requestf(req.api, "tool %d is not an object", errors.Safe(j))
		}
		name, ok := obj.get("name").str()
		if !ok {
			if name, ok = obj.get("type").str(); !ok {
				return requestf(req.api, "tool %d has neither a name nor a type", errors.Safe(j))
			}
		}
		var o codec.Object
		o.Str("name", name)
		if d := obj.get("description"); d != nil {
			o.Value("description", d)
		}
		params := "parameters"
		if req.api == APIAnthropic {
			params = "input_schema"
		}
		if p := obj.get(params); p != nil {
			o.Value("parameters", p)
		}
		obj.each(func(k string, m value) {
			switch k {
			case "name", "description", params, marker:
			default:
				o.Value(k, m)
			}
		})
		req.tools = append(req.tools, o.Bytes())
	}
	req.toolsRaw = raw
	return nil
}

// chat reads a Chat Completions body: a leading system (or developer)
// message of text is the header's system, as openai-chat renders one;
// later ones are context messages in place.
func (req *request) chat(v value) error {
	f := v.fields("tools", "messages")
	if err := req.headerTools(f[0], true); err != nil {
		return err
	}
	msgs := f[1]
	if msgs.kind() != codec.KindArray {
		return requestf(req.api, "messages is not a list")
	}
	for i, m := range msgs.elems() {
		mf := m.fields("role", "content", "reasoning_content", "tool_calls", "tool_call_id")
		role := mf[0].text()
		switch role {
		case "system", "developer":
			if i == 0 {
				if s, ok := chatText(mf[1]); ok {
					req.system, req.sysRaw = s, rawKey(m)
					continue
				}
			}
			if err := req.contextUnit(i, m, role, mf[1], "text"); err != nil {
				return err
			}
		case "user":
			bs, ok := contentOf(mf[1], "text")
			if !ok {
				return requestf(req.api, "message %d: content parts that do not convert", errors.Safe(i))
			}
			req.userUnits(i, m, bs, nil)
			req.setRoot(i)
		case "tool":
			id, ok := mf[4].str()
			if !ok {
				return requestf(req.api, "message %d: a tool message without tool_call_id", errors.Safe(i))
			}
			r := toolResult{id: id, line: i}
			if r.content, ok = resultContent(mf[1]); !ok {
				return requestf(req.api, "message %d: content parts that do not convert", errors.Safe(i))
			}
			req.userUnits(i, m, nil, []toolResult{r})
		case "assistant":
			u, err := req.chatAssistant(i, m, mf[1], mf[2], mf[3])
			if err != nil {
				return err
			}
			req.units = append(req.units, u)
		default:
			if err := req.contextUnit(i, m, role, mf[1], "text"); err != nil {
				return err
			}
		}
	}
	return nil
}

// chatText is the text of a system message: a string, or a list of text
// parts concatenated (openai-chat's TEXT).
func chatText(c value) (string, bool) {
	if s, ok := c.str(); ok {
		return s, true
	}
	if c.kind() != codec.KindArray {
		return "", false
	}
	var b strings.Builder
	for _, p := range c.elems() {
		t, ok := p.get("text").str()
		if p.get("type").text() != "text" || !ok {
			return "", false
		}
		b.WriteString(t)
	}
	return b.String(), true
}

// chatAssistant converts an assistant message: reasoning_content as a
// reasoning block, content as text, tool_calls as tool-call blocks.
func (req *request) chatAssistant(i int, m, content, reasoning, calls value) (unit, error) {
	u := unit{kind: unitAssistant, item: i, raw: rawKey(m)}
	if s, ok := reasoning.str(); ok && s != "" {
		u.blocks = append(u.blocks, blockOf(codec.BlockReasoning, reasoning))
	}
	switch content.kind() {
	case codec.KindInvalid, codec.KindNull:
	case codec.KindString:
		if content.text() != "" {
			u.blocks = append(u.blocks, blockOf(codec.BlockText, content))
		}
	default:
		bs, ok := contentOf(content, "text", "output_text", "refusal")
		if !ok {
			return u, requestf(req.api, "message %d: content parts that do not convert", errors.Safe(i))
		}
		u.blocks = append(u.blocks, unmark(bs)...)
	}
	for j, c := range calls.elems() {
		f := c.fields("id", "function")
		ff := f[1].fields("name", "arguments")
		id, ok1 := f[0].str()
		name, ok2 := ff[0].str()
		args, ok3 := ff[1].str()
		if !ok1 || !ok2 || !ok3 {
			return u, requestf(req.api, "message %d: tool call %d lacks its id, name or arguments", errors.Safe(i), errors.Safe(j))
		}
		var o codec.Object
		o.Str("type", codec.BlockToolCall).Str("id", id).Str("name", name).Str("arguments", args)
		u.blocks = append(u.blocks, o.Bytes())
		u.calls = append(u.calls, toolCall{id: id, name: name, args: args, line: i})
	}
	return u, nil
}

// responsesOutput are the Responses API item types a model outputs that
// the mapping carries as opaque blocks of the assistant message (the
// Codex importer keeps them unmapped).
var responsesOutput = map[string]bool{
	"web_search_call": true, "file_search_call": true, "computer_call": true, "local_shell_call": true,
	"image_generation_call": true, "code_interpreter_call": true, "mcp_call": true, "mcp_list_tools": true,
	"mcp_approval_request": true, "tool_search_call": true,
}

// responses reads a Responses API body: instructions is the system;
// tools come from the top-level list and from additional_tools items
// (Codex's responses-lite bodies); consecutive output items (assistant
// messages, reasoning, calls) form one assistant message, as one answer
// gives them.
func (req *request) responses(v value) error {
	f := v.fields("instructions", "tools", "input")
	switch s := f[0]; s.kind() {
	case codec.KindInvalid, codec.KindNull:
	case codec.KindString:
		req.system, req.sysRaw = s.text(), rawKey(s)
	default:
		return requestf(req.api, "instructions is not a string")
	}
	if err := req.headerTools(f[1], false); err != nil {
		return err
	}
	in := f[2]
	if in.kind() == codec.KindString {
		req.userUnits(0, in, [][]byte{blockOf(codec.BlockText, in)}, nil)
		req.setRoot(0)
		return nil
	}
	if in.kind() != codec.KindArray {
		return requestf(req.api, "input is neither a string nor a list")
	}
	var group *unit // the assistant message being gathered
	var groupRaw []value
	flush := func() {
		if group != nil {
			group.raw = rawKey(groupRaw...)
			req.units = append(req.units, *group)
			group, groupRaw = nil, nil
		}
	}
	out := func(i int, m value) *unit {
		if group == nil {
			group = &unit{kind: unitAssistant, item: i}
		}
		groupRaw = append(groupRaw, m)
		return group
	}
	for i, m := range in.elems() {
		mf := m.fields("type", "role", "content")
		typ := mf[0].text()
		if typ == "" && mf[1] != nil {
			typ = "message"
		}
		switch typ {
		case "additional_tools":
			if err := req.headerTools(m.get("tools"), false); err != nil {
				return err
			}
		case "message":
			role := mf[1].text()
			if role == "assistant" {
				bs, ok := contentOf(mf[2], "output_text", "input_text", "text")
				if !ok {
					return requestf(req.api, "input item %d: content parts that do not convert", errors.Safe(i))
				}
				g := out(i, m)
				g.blocks = append(g.blocks, unmark(bs)...)
				continue
			}
			flush()
			if role == "user" {
				bs, ok := contentOf(mf[2], "input_text", "output_text", "text")
				if !ok {
					return requestf(req.api, "input item %d: content parts that do not convert", errors.Safe(i))
				}
				req.userUnits(i, m, bs, nil)
				req.setRoot(i)
				continue
			}
			if err := req.contextUnit(i, m, role, mf[2], "input_text", "output_text", "text"); err != nil {
				return err
			}
		case "reasoning":
			bl, replay, ok := codexReasoning(m)
			if !ok {
				return requestf(req.api, "input item %d: a reasoning item whose summary is not text", errors.Safe(i))
			}
			g := out(i, m)
			g.blocks = append(g.blocks, bl)
			if replay != nil {
				g.replay = append(g.replay, replay)
			}
		case "function_call", "custom_tool_call":
			c, bl, ok := codexCall(m, typ, i, 0)
			if !ok {
				return requestf(req.api, "input item %d: a call without call_id, name or arguments", errors.Safe(i))
			}
			g := out(i, m)
			g.blocks = append(g.blocks, bl)
			g.calls = append(g.calls, c)
		case "function_call_output", "custom_tool_call_output":
			flush()
			r, ok := codexOutput(m, i)
			if !ok {
				return requestf(req.api, "input item %d: an output that does not convert", errors.Safe(i))
			}
			req.userUnits(i, m, nil, []toolResult{r})
		default:
			if !opaque(m) {
				return requestf(req.api, "input item %d is not a typed object", errors.Safe(i))
			}
			if responsesOutput[typ] {
				g := out(i, m)
				g.blocks = append(g.blocks, []byte(m.without(marker)))
				continue
			}
			flush()
			req.units = append(req.units, unit{kind: unitContext, item: i, source: "input", blocks: [][]byte{m.without(marker)}, raw: rawKey(m)})
		}
	}
	flush()
	return nil
}
