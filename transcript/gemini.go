package transcript

import (
	"io"
	"slices"
	"strings"

	"github.com/sessionlog/sessionlog/codec"
)

// Gemini CLI (0.61 and later) writes a session as JSONL under
// ~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl:
//
//   - a header line {sessionId, projectHash, startTime, lastUpdated,
//     kind}, written again by every run that resumes the session;
//   - a record per message {id, timestamp, type, content, …}: type user
//     (content a list of parts: text, functionResponse), gemini (the
//     model's: content its text or parts, thoughts, tokens, model,
//     toolCalls with each call's result), info, error, warning; a record
//     written again with the same id is the same message, updated (the
//     model's answer, then the answer with its tool calls);
//   - {"$set":{…}} lines that update the session: lastUpdated, the
//     sessionId, and messages, the whole history as a resumed run loads
//     it (with a copy of every tool result, id "<call record>_response").

// scanGemini is the first pass over a Gemini CLI session: the session id
// and start time of the first header line (else the first record's
// timestamp). Gemini CLI records no working directory.
func scanGemini(lr *lineReader, lim codec.Limits) (headerInfo, error) {
	var info headerInfo
	var mp []byte
	for {
		line, _, err := lr.next()
		if err == io.EOF {
			return info, nil
		}
		if err != nil {
			return info, err
		}
		if mp, err = codec.FromJSON(mp[:0], line, lim); err != nil {
			continue
		}
		v := value(mp)
		if id, ok := v.get("sessionId").str(); ok && v.get("projectHash") != nil {
			info.id = id
			if t, ok := millis(v.get("startTime")); ok {
				info.created = t
			}
			return info, nil
		}
		if t, ok := millis(v.get("timestamp")); ok && info.created == 0 {
			info.created = t
		}
	}
}

// geminiMapper maps Gemini CLI session lines.
type geminiMapper struct {
	header bool // the first header line was read
	// seen are the ids of the records mapped or kept so far.
	seen map[string]bool
	// answered are the ids of the calls a functionResponse answered.
	answered map[string]bool
}

// geminiKnown are the record types the importer knows.
var geminiKnown = map[string]bool{"user": true, "gemini": true, "info": true, "error": true, "warning": true}

func (m *geminiMapper) line(b *builder, n int, v value) (string, int, error) {
	f := v.fields("$set", "sessionId", "projectHash", "type", "id")
	switch {
	case f[0] != nil:
		how, err := m.set(b, n, f[0])
		return "$set", how, err
	case f[2] != nil && f[1] != nil:
		if m.header {
			return "session", lineKept, nil
		}
		m.header = true
		return "session", lineMapped, nil
	}
	typ, ok := f[3].str()
	if !ok || !geminiKnown[typ] {
		if !ok {
			typ = "(no type)"
		}
		return typ, lineUnknown, nil
	}
	how, err := m.record(b, n, v, typ, f[4].text(), false)
	return typ, how, err
}

// set maps the records of a $set's messages that are new and come after
// every record seen (messages a run appended); a history rewritten (a
// resumed run reloading it, with its copies of the tool results) is kept
// only.
func (m *geminiMapper) set(b *builder, n int, set value) (int, error) {
	msgs := set.get("messages").elems()
	last := -1
	for i, r := range msgs {
		id := r.get("id").text()
		if m.seen[id] || m.seen[strings.TrimSuffix(id, "_response")] {
			last = i
		}
	}
	how := lineKept
	for _, r := range msgs[last+1:] {
		typ := r.get("type").text()
		if !geminiKnown[typ] {
			continue
		}
		h, err := m.record(b, n, r, typ, r.get("id").text(), true)
		if err != nil {
			return 0, err
		}
		if h == lineMapped {
			how = lineMapped
		}
	}
	return how, nil
}

// record maps one message record of type typ: a user record with text
// a prompt (a second one before any answer joins the first's turn),
// with functionResponse parts the results of the calls they answer; a
// gemini record one model response, a record of the same id written
// again updating it.
func (m *geminiMapper) record(b *builder, n int, r value, typ, id string, inSet bool) (int, error) {
	again := id != "" && m.seen[id]
	if id != "" {
		if m.seen == nil {
			m.seen = map[string]bool{}
		}
		m.seen[id] = true
	}
	switch typ {
	case "user":
		if again {
			return lineKept, nil
		}
		return m.user(b, n, r.get("content"))
	case "gemini":
		if again && (b.st == nil || b.st.key != id) {
			return lineKept, nil
		}
		return m.model(b, n, r, id)
	}
	return lineKept, nil
}

// user maps a user record's content.
func (m *geminiMapper) user(b *builder, n int, c value) (int, error) {
	var text [][]byte
	var results []toolResult
	switch c.kind() {
	case codec.KindString:
		text = append(text, blockOf(codec.BlockText, c))
	case codec.KindArray:
		for _, p := range c.elems() {
			pf := p.fields("text", "functionResponse", "thought")
			switch {
			case pf[1] != nil:
				r, ok := geminiResult(pf[1], n)
				if !ok {
					return lineKept, nil
				}
				results = append(results, r)
			case pf[0].kind() == codec.KindString && pf[2] == nil:
				text = append(text, blockOf(codec.BlockText, pf[0]))
			default:
				return lineKept, nil // a part the mapping does not read (inline data, a file)
			}
		}
	default:
		return lineKept, nil
	}
	mapped := false
	for _, r := range results {
		if !m.answered[r.id] && b.answer(r) {
			if m.answered == nil {
				m.answered = map[string]bool{}
			}
			m.answered[r.id] = true
			mapped = true
		}
	}
	if len(text) == 0 {
		if !mapped {
			return lineKept, nil
		}
		return lineMapped, nil
	}
	if err := b.closeStep(); err != nil {
		return 0, err
	}
	if !b.inTurn || b.steps > 0 {
		if err := b.openTurn(n, true, false); err != nil {
			return 0, err
		}
	}
	return lineMapped, b.userMessage(n, codec.Array(text...))
}

// geminiResult converts a functionResponse part: its response's output
// as text, its error as an error's text, any other response as its JSON.
func geminiResult(fr value, n int) (toolResult, bool) {
	f := fr.fields("id", "name", "response")
	id, ok := f[0].str()
	if !ok || id == "" {
		return toolResult{}, false
	}
	r := toolResult{id: id, line: n}
	resp := f[2]
	rf := resp.fields("output", "error")
	switch {
	case rf[0].kind() == codec.KindString && resp.members() == 1:
		r.content = textArray(rf[0])
	case rf[1] != nil && resp.members() == 1:
		r.isError = true
		if rf[1].kind() == codec.KindString {
			r.content = textArray(rf[1])
		} else {
			r.content = codec.Array(textBlock(rf[1].json()))
		}
	case resp.kind() == codec.KindObject:
		r.content = codec.Array(textBlock(resp.json()))
	default:
		return toolResult{}, false
	}
	return r, true
}

// model maps a gemini record: thoughts as reasoning blocks, its content
// as text, its toolCalls as calls (each call's recorded result answering
// it when no functionResponse does), tokens as usage, model as the
// header's. A record written again replaces what its first writing gave.
func (m *geminiMapper) model(b *builder, n int, r value, id string) (int, error) {
	f := r.fields("content", "thoughts", "tokens", "model", "toolCalls")
	var blocks [][]byte
	for _, t := range f[1].elems() {
		tf := t.fields("subject", "description")
		var parts []string
		for _, s := range tf[:2] {
			if x := s.text(); x != "" {
				parts = append(parts, x)
			}
		}
		if len(parts) > 0 {
			blocks = append(blocks, blockOf(codec.BlockReasoning, mpStr(strings.Join(parts, "\n\n"))))
		}
	}
	var calls []toolCall
	var fallback []toolResult
	switch c := f[0]; c.kind() {
	case codec.KindString:
		if c.text() != "" {
			blocks = append(blocks, blockOf(codec.BlockText, c))
		}
	case codec.KindArray:
		for _, p := range c.elems() {
			pf := p.fields("text", "functionCall", "thought")
			switch {
			case pf[1] != nil:
				c, bl, ok := geminiCall(pf[1], n, b.time)
				if !ok {
					return lineKept, nil
				}
				blocks = append(blocks, bl)
				calls = append(calls, c)
			case pf[0].kind() == codec.KindString:
				typ := codec.BlockText
				if th, _ := pf[2].boolean(); th {
					typ = codec.BlockReasoning
				}
				if pf[0].text() != "" {
					blocks = append(blocks, blockOf(typ, pf[0]))
				}
			default:
				return lineKept, nil
			}
		}
	case codec.KindInvalid, codec.KindNull:
	default:
		return lineKept, nil
	}
	for _, tc := range f[4].elems() {
		tf := tc.fields("id", "name", "args", "result")
		var fc codec.Object
		fc.Value("id", tf[0]).Value("name", tf[1]).Value("args", tf[2])
		c, bl, ok := geminiCall(fc.Bytes(), n, b.time)
		if !ok {
			return lineKept, nil
		}
		if !slices.ContainsFunc(calls, func(x toolCall) bool { return x.id == c.id }) {
			blocks = append(blocks, bl)
			calls = append(calls, c)
		}
		for _, p := range tf[3].elems() {
			if fr := p.get("functionResponse"); fr != nil {
				if res, ok := geminiResult(fr, n); ok && res.id == c.id {
					res.time = b.time
					fallback = append(fallback, res)
				}
			}
		}
	}
	if model, ok := f[3].str(); ok {
		b.setModel(model, n)
	}
	st, err := b.response(n, id)
	if err != nil {
		return 0, err
	}
	if len(st.blocks) == 0 {
		st.msgLine = n
	}
	st.blocks, st.calls, st.fallback = blocks, calls, fallback
	if u := geminiUsage(f[2]); u != nil {
		st.usage = u
	}
	if id == "" {
		st.done = true // without an id, every record is its own response
	}
	return lineMapped, nil
}

// geminiCall converts a functionCall {id, name, args} into a call at line
// n and time t (arguments the args' JSON) and its tool-call block.
func geminiCall(fc value, n int, t float64) (toolCall, []byte, bool) {
	f := fc.fields("id", "name", "args")
	id, ok1 := f[0].str()
	name, ok2 := f[1].str()
	if !ok1 || !ok2 || id == "" {
		return toolCall{}, nil, false
	}
	args := "{}"
	if f[2].kind() != codec.KindInvalid {
		args = f[2].json()
	}
	var o codec.Object
	o.Str("type", codec.BlockToolCall).Str("id", id).Str("name", name).Str("arguments", args)
	return toolCall{id: id, name: name, args: args, line: n, time: t}, o.Bytes(), true
}

// geminiUsage converts a record's tokens: inputTokens = input (and tool
// use prompt tokens) less cached, cacheReadTokens = cached, outputTokens
// = output and thoughts (reasoning is part of output, docs/format.md#event-types),
// reasoningTokens = thoughts.
func geminiUsage(t value) []byte {
	f := t.fields("input", "output", "cached", "thoughts", "tool")
	in, ok1 := f[0].num()
	out, ok2 := f[1].num()
	if !ok1 || !ok2 {
		return nil
	}
	cached, hasCached := f[2].num()
	thoughts, hasThoughts := f[3].num()
	tool, _ := f[4].num()
	var o codec.Object
	o.Int("inputTokens", max(int64(in)+int64(tool)-int64(cached), 0)).Int("outputTokens", int64(out)+int64(thoughts))
	if hasCached {
		o.Int("cacheReadTokens", int64(cached))
	}
	if hasThoughts {
		o.Int("reasoningTokens", int64(thoughts))
	}
	return o.Bytes()
}

func (m *geminiMapper) finish(b *builder) error { return b.closeStep() }

// parsed: the Gemini CLI first pass keeps nothing.
func (m *geminiMapper) parsed(int) ([]byte, bool) { return nil, false }
