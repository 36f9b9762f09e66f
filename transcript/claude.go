package transcript

import (
	"io"

	"github.com/sessionlog/sessionlog/codec"
)

// claudeMapper maps Claude Code transcript lines (docs/transcripts.md). The first
// pass (scanClaude) chose the branch: onBranch[n] is set for the lines
// of the conversation that ends at the leaf.
type claudeMapper struct {
	onBranch []bool // by line number (1-based)
	// sidechainMain is set for a subagent's file, whose lines are all
	// isSidechain: they are its conversation.
	sidechainMain bool
	// boundary is the seq of the compact/start of a compact_boundary
	// waiting for its summary line; boundaryLine its line (0: none).
	boundary     int64
	boundaryLine int
	preTokens    int64
	// images are the storage forms the first pass parsed, by line (nil:
	// not JSON), kept when the whole file's fit in parseCache bytes, so
	// that the second pass need not parse again; nil otherwise.
	images [][]byte
	// delta maps the file from the requests it records (claude_request.go),
	// nil when it records none or they cannot all be rebuilt; then main
	// are the requests whose answers are on the branch, and shapes the
	// shapes read so far, for the header snapshots.
	delta  *claudeDelta
	main   map[string]bool
	shapes map[string]value
}

// parseCache bounds the parsed lines the first pass keeps for the second.
const parseCache = 128 << 20

// arenaChunk is the size of the buffers the first pass parses lines into:
// one allocation for many lines.
const arenaChunk = 1 << 20

// scanClaude is the first pass over a Claude Code transcript: the
// session header and the branch. Lines form a tree by uuid and
// parentUuid (logicalParentUuid across a compact boundary); a parent is
// the latest earlier line with that uuid, so the walk always ends; a line
// whose parent is null or not in the file continues the previous line
// with a uuid (files written without links read as one conversation). The
// leaf is the last line's: the last non-sidechain line with a uuid, or a
// later last-prompt's leafUuid.
func scanClaude(lr *lineReader, lim codec.Limits) (headerInfo, *claudeMapper, error) {
	var info headerInfo
	var mp []byte
	haveTime := false
	latest := map[string]int{}
	// parent is by line: the parent's line (always an earlier one).
	parent := []int{0}
	leaf, lastUUID := 0, 0
	mainLines := 0
	var pre claudePre
	images, cached := [][]byte{nil}, 0
	var arena []byte
	for {
		line, _, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return info, nil, err
		}
		n := lr.n
		parent = append(parent, 0)
		if images != nil {
			// Parsed into the free end of arena, kept for the second pass.
			// An image that outgrows it (numbers take up to 9 bytes, long
			// strings a byte more) gets a buffer of its own from FromJSON.
			if cap(arena)-len(arena) < len(line)+16 {
				arena = make([]byte, 0, max(arenaChunk, len(line)+16))
			}
			mp, err = codec.FromJSON(arena[len(arena):], line, lim)
			if err != nil {
				mp = nil
			}
			if len(mp) <= cap(arena)-len(arena) { // written in place
				arena = arena[:len(arena)+len(mp)]
			}
			mp = mp[:len(mp):len(mp)]
			images = append(images, mp)
			if cached += len(mp); cached > parseCache {
				images = nil
			}
		} else {
			mp, err = codec.FromJSON(mp[:0], line, lim)
		}
		if err != nil {
			continue
		}
		f := value(mp).fields("timestamp", "sessionId", "cwd", "type", "uuid", "parentUuid", "logicalParentUuid", "isSidechain", "leafUuid")
		if !haveTime {
			if t, ok := millis(f[0]); ok {
				info.created, haveTime = t, true
			}
		}
		if info.id == "" {
			info.id = f[1].text()
		}
		if info.cwd == "" {
			info.cwd = f[2].text()
		}
		side, _ := f[7].boolean()
		pre.line(n, value(mp), f[3].text(), side)
		if f[3].text() == "last-prompt" {
			if l, ok := latest[f[8].text()]; ok {
				leaf = l
			}
			continue
		}
		uuid, ok := f[4].str()
		if !ok || uuid == "" {
			continue
		}
		p, ok := f[5].str()
		if !ok {
			p, _ = f[6].str()
		}
		if l, ok := latest[p]; ok && p != "" {
			parent[n] = l
		} else {
			// A line that names no parent in the file continues the line
			// before it (files written without links, or flattened).
			parent[n] = lastUUID
		}
		latest[uuid] = n
		lastUUID = n
		if !side {
			leaf = n
			mainLines++
		}
	}
	m := &claudeMapper{onBranch: make([]bool, len(parent)), sidechainMain: mainLines == 0, images: images}
	if m.sidechainMain && leaf == 0 {
		// A subagent's file: its last line with a uuid is the leaf.
		leaf = lastUUID
	}
	for n := leaf; n > 0; n = parent[n] {
		m.onBranch[n] = true
	}
	m.delta = pre.delta(m.onBranch, m.sidechainMain, images)
	if m.delta == nil && len(pre.reqs) > 0 {
		m.main, m.shapes = map[string]bool{}, map[string]value{}
		for n, ref := range pre.refs {
			if n < len(m.onBranch) && m.onBranch[n] && (!pre.side[n] || m.sidechainMain) {
				m.main[ref] = true
			}
		}
	}
	return info, m, nil
}

// claudeKnown are the Claude Code line kinds the importer knows.
var claudeKnown = map[string]bool{
	"user": true, "assistant": true, "system": true, "summary": true, "attachment": true,
	"progress": true, "file-history-snapshot": true, "queue-operation": true, "last-prompt": true,
	"custom-title": true, "ai-title": true, "agent-name": true, "permission-mode": true, "mode": true,
	"worktree-state": true, "pr-link": true, "frame-link": true, "bridge-session": true, "atis-latch": true,
	"relocated": true, "started": true, "result": true,
	"api-request": true, "api-request-blob": true, "api-request-shape": true, "cost-state": true, "tools-used": true,
}

// Top-level keys the mapper reads, by index into claudeMapper.line's
// fields.
const (
	cType = iota
	cSubtype
	cSidechain
	cMessage
	cCompactSummary
	cCompactMetadata
)

func (m *claudeMapper) line(b *builder, n int, v value) (string, int, error) {
	f := v.fields("type", "subtype", "isSidechain", "message", "isCompactSummary", "compactMetadata")
	typ := f[cType].text()
	kind := typ
	if typ == "system" {
		kind = "system/" + f[cSubtype].text()
	}
	if typ == "" {
		kind = "(no type)"
	}
	how := lineKept
	if !claudeKnown[typ] {
		how = lineUnknown
	}
	side, _ := f[cSidechain].boolean()
	onBranch := n < len(m.onBranch) && m.onBranch[n] && (!side || m.sidechainMain)
	if m.delta != nil {
		if typ == "api-request" || typ == "api-request-blob" || typ == "api-request-shape" || typ == "user" || typ == "assistant" {
			h, err := m.delta.line(b, n, v, typ, onBranch)
			if typ == "api-request" && h == lineMapped {
				b.stats.Requests++
			}
			return kind, h, err
		}
		return kind, how, nil
	}
	switch typ {
	case "api-request-shape":
		if h := v.get("shapeHash").text(); h != "" && m.shapes != nil && v.get("shape").kind() == codec.KindObject {
			m.shapes[h] = append(value(nil), v.get("shape")...)
		}
		return kind, how, nil
	case "api-request":
		return kind, m.headerOf(b, n, v, how), nil
	}
	if !onBranch {
		return kind, how, nil
	}
	var err error
	switch {
	case typ == "user":
		how, err = m.user(b, n, f[:])
	case typ == "assistant":
		how, err = m.assistant(b, n, f[cMessage])
	case kind == "system/compact_boundary":
		if err = m.settle(b, n); err != nil {
			return kind, 0, err
		}
		m.boundary, err = b.compactStart(n)
		m.boundaryLine = n
		m.preTokens = -1
		if t, ok := f[cCompactMetadata].get("preTokens").num(); ok && t >= 0 {
			m.preTokens = int64(t)
		}
		how = lineMapped
	}
	return kind, how, err
}

// settle closes a compaction bracket still waiting for its summary: the
// transcript recorded none.
func (m *claudeMapper) settle(b *builder, n int) error {
	if m.boundaryLine == 0 {
		return nil
	}
	m.boundaryLine = 0
	return b.compactFail(n, "the transcript records no compact summary")
}

func (m *claudeMapper) user(b *builder, n int, f []value) (int, error) {
	c := f[cMessage].get("content")
	if sum, _ := f[cCompactSummary].boolean(); sum {
		content, ok := contentOf(c, "text")
		if !ok {
			return lineKept, nil
		}
		start := m.boundary
		if m.boundaryLine == 0 {
			var err error
			if start, err = b.compactStart(n); err != nil {
				return 0, err
			}
		}
		m.boundaryLine = 0
		return lineMapped, b.compactEnd(start, n, codec.Array(content...), max(m.preTokens, -1))
	}
	rest, results, ok := claudeUserContent(c, n)
	if !ok {
		return lineKept, nil
	}
	if err := m.settle(b, n); err != nil {
		return 0, err
	}
	if len(results) == 0 {
		if err := b.openTurn(n, true, false); err != nil {
			return 0, err
		}
		return lineMapped, b.userMessage(n, codec.Array(rest...))
	}
	mapped := false
	for _, r := range results {
		if b.answer(r) {
			mapped = true
		}
	}
	if len(rest) > 0 {
		if err := b.closeStep(); err != nil {
			return 0, err
		}
		if err := b.ensureTurn(n); err != nil {
			return 0, err
		}
		return lineMapped, b.userMessage(n, codec.Array(rest...))
	}
	if !mapped {
		return lineKept, nil
	}
	return lineMapped, nil
}

// claudeUserContent converts the content of an Anthropic Messages user
// message (a Claude Code user line's message.content, or a request's
// user message): a string is one text block; in a list, tool_result
// blocks are tool results and the other blocks the rest, text blocks as
// text and any other typed block opaque. ok is false when a block is
// neither.
func claudeUserContent(c value, n int) (rest [][]byte, results []toolResult, ok bool) {
	switch c.kind() {
	case codec.KindString:
		return [][]byte{blockOf(codec.BlockText, c)}, nil, true
	case codec.KindArray:
		for _, e := range c.elems() {
			if e.get("type").text() != "tool_result" {
				bl, ok := block(e, "text")
				if !ok {
					return nil, nil, false
				}
				rest = append(rest, bl)
				continue
			}
			r, ok := claudeResult(e, n)
			if !ok {
				return nil, nil, false
			}
			results = append(results, r)
		}
		return rest, results, true
	}
	return nil, nil, false
}

// claudeResult converts a tool_result block.
func claudeResult(e value, n int) (toolResult, bool) {
	id, ok := e.get("tool_use_id").str()
	if !ok || id == "" {
		return toolResult{}, false
	}
	r := toolResult{id: id, line: n}
	r.isError, _ = e.get("is_error").boolean()
	content, ok := resultContent(e.get("content"))
	if !ok {
		return toolResult{}, false
	}
	r.content = content
	return r, true
}

func (m *claudeMapper) assistant(b *builder, n int, msg value) (int, error) {
	mf := msg.fields("content", "id", "model", "usage")
	// Convert every block first, so that a line is mapped whole or not.
	bs, replay, calls, ok := claudeAssistantContent(mf[0], n, b.time)
	if !ok {
		return lineKept, nil
	}
	if err := m.settle(b, n); err != nil {
		return 0, err
	}
	key := mf[1].text()
	st, err := b.response(n, key)
	if err != nil {
		return 0, err
	}
	for _, c := range calls {
		for _, x := range st.calls {
			if x.id == c.id {
				// A repeated call id cannot be answered unambiguously.
				return lineKept, nil
			}
		}
	}
	if key == "" {
		// Without message.id every line is its own response.
		st.done = true
	}
	if model, ok := mf[2].str(); ok {
		b.setModel(model, n)
	}
	if u := claudeUsage(mf[3]); u != nil {
		st.usage = u
	}
	st.blocks = append(st.blocks, bs...)
	st.replay = append(st.replay, replay...)
	st.calls = append(st.calls, calls...)
	return lineMapped, nil
}

// claudeAssistantContent converts the content of an Anthropic Messages
// assistant message (a Claude Code assistant line's message.content, or
// a request's assistant message): text as text, thinking as reasoning
// (its signature as replay state), tool_use as a tool-call block and a
// call at line n and time t (arguments the input's JSON text), any other
// typed block opaque. ok is false when a block is none of these.
func claudeAssistantContent(c value, n int, t float64) (bs, replay [][]byte, calls []toolCall, ok bool) {
	var elems []value
	switch c.kind() {
	case codec.KindString:
		bs = append(bs, blockOf(codec.BlockText, c))
	case codec.KindArray:
		elems = c.elems()
	default:
		return nil, nil, nil, false
	}
	for _, e := range elems {
		ef := e.fields("type", "text", "thinking", "signature", "id", "name", "input")
		switch ef[0].text() {
		case "text":
			if ef[1].kind() != codec.KindString {
				return nil, nil, nil, false
			}
			bs = append(bs, blockOf(codec.BlockText, ef[1]))
		case "thinking":
			if ef[2].kind() != codec.KindString {
				return nil, nil, nil, false
			}
			bs = append(bs, blockOf(codec.BlockReasoning, ef[2]))
			if ef[3].kind() == codec.KindString {
				replay = append(replay, append([]byte(nil), ef[3]...))
			}
		case "tool_use":
			id, ok1 := ef[4].str()
			name, ok2 := ef[5].str()
			in := ef[6]
			if !ok1 || !ok2 || id == "" || in.kind() == codec.KindInvalid {
				return nil, nil, nil, false
			}
			args := in.json()
			var o codec.Object
			o.Str("type", codec.BlockToolCall).Str("id", id).Str("name", name).Str("arguments", args)
			bs = append(bs, o.Bytes())
			calls = append(calls, toolCall{id: id, name: name, args: args, line: n, time: t})
		default:
			bl, ok := block(e)
			if !ok {
				return nil, nil, nil, false
			}
			bs = append(bs, bl)
		}
	}
	return bs, replay, calls, true
}

// claudeUsage converts an Anthropic usage object (docs/transcripts.md).
func claudeUsage(u value) []byte {
	f := u.fields("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
	in, ok1 := f[0].num()
	out, ok2 := f[1].num()
	if !ok1 || !ok2 {
		return nil
	}
	var o codec.Object
	o.Int("inputTokens", int64(in)).Int("outputTokens", int64(out))
	if r, ok := f[2].num(); ok {
		o.Int("cacheReadTokens", int64(r))
	}
	if w, ok := f[3].num(); ok {
		o.Int("cacheWriteTokens", int64(w))
	}
	return o.Bytes()
}

// parsed returns the first pass's image of line n, if it kept one.
func (m *claudeMapper) parsed(n int) ([]byte, bool) {
	if m.images == nil || n >= len(m.images) {
		return nil, false
	}
	img := m.images[n]
	m.images[n] = nil // each line is read once
	return img, true
}

func (m *claudeMapper) finish(b *builder) error {
	if m.delta != nil {
		return m.delta.finish(b)
	}
	if err := m.settle(b, m.boundaryLine); err != nil {
		return err
	}
	return b.closeStep()
}

// headerOf reads, where the file's requests cannot all be rebuilt, what
// a request of the conversation (api-request line n) says of the header:
// the system prompt and tools of its shape, in force from the next step.
func (m *claudeMapper) headerOf(b *builder, n int, v value, how int) int {
	r := readClaudeRequest(v, n)
	shape, ok := m.shapes[r.shape]
	if !m.main[r.id] || !ok {
		return how
	}
	b.stats.Requests++
	var body codec.Object
	sf := shape.fields("system", "tools")
	body.Value("model", v.get("params").get("model")).Array("messages")
	if sf[0] != nil {
		body.Value("system", sf[0])
	}
	if sf[1] != nil {
		body.Value("tools", sf[1])
	}
	js, _, err := codec.ToJSON(nil, body.Bytes())
	if err != nil {
		return how
	}
	req, err := parseRequestFrom(APIAnthropic, js, string(ClaudeCode))
	if err != nil {
		return how
	}
	b.system = req.system
	b.setTools(req.tools, n)
	return lineMapped
}
