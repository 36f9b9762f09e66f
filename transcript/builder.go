package transcript

import (
	"bytes"
	"encoding/base64"
	"slices"

	"github.com/sessionlog/sessionlog/codec"
)

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// rawEvent writes the storage form of an event the importer creates, as
// codec.NewEvent does (docs/format.md#envelope's key order: type, seq, time, data,
// sourceEventSeqs?, surfaceOp? on surface types), into one buffer sized
// up front: an import copies every line's bytes more than once, and this
// is where the copies were.
// extra is room to leave for bytes the caller appends.
func rawEvent(typ string, seq int64, time float64, data *codec.Object, op codec.SurfaceOp, sources []int64, extra int) []byte {
	n := 4
	surface := codec.IsSurfaceType(typ)
	if surface {
		n++
		if sources != nil {
			n++
		}
	}
	buf := make([]byte, 0, data.Size()+len(typ)+9*len(sources)+96+extra)
	buf = codec.AppendMapHeader(buf, n)
	buf = codec.AppendString(codec.AppendString(buf, "type"), typ)
	buf = codec.AppendInt(codec.AppendString(buf, "seq"), seq)
	buf = codec.AppendNumber(codec.AppendString(buf, "time"), time)
	buf = data.AppendTo(codec.AppendString(buf, "data"))
	if !surface {
		return buf
	}
	if sources != nil {
		buf = codec.AppendArrayHeader(codec.AppendString(buf, "sourceEventSeqs"), len(sources))
		for _, s := range sources {
			buf = codec.AppendInt(buf, s)
		}
	}
	buf = codec.AppendString(buf, "surfaceOp")
	if op.Kind == codec.OpReplace {
		var r codec.Object
		r.Str("op", "replace").Int("start", op.Start).Int("end", op.End)
		return append(buf, r.Bytes()...)
	}
	return codec.AppendString(buf, "append")
}

// builder writes the mapped events of docs/transcripts.md for both formats: turns,
// steps (one per model response, buffered until the response is over so
// that its tool results join it), header snapshots, the surface and its
// compaction brackets. Every event carries origin {format, line}.
type builder struct {
	format Format
	queue  []codec.Event
	seq    int64
	time   float64
	stats  *Stats

	turn     int64
	inTurn   bool
	implicit bool  // the open turn was opened by the importer, not the source
	steps    int64 // steps of the open turn
	st       *pendingStep

	// model is the model the source says is in use now, system and
	// tools the system prompt and tools (storage form, header order) it
	// records, headerLine the line that said so last; header is the last
	// snapshot written (storage form), nil before the first.
	model      string
	system     string
	tools      [][]byte
	headerLine int
	header     []byte
	surface    []int64

	// scratch is the data object of the event being built and origin its
	// origin member: emit copies both into the event, so one buffer each
	// serves every event.
	scratch codec.Object
	origin  []byte
	// originKey names the origin's position member: "line" for an import
	// (the source line), "seq" for the gateway (its wire/request's seq).
	originKey string
}

// data returns the builder's scratch object, emptied, for the data of the
// next event emitted.
func (b *builder) data() *codec.Object {
	b.scratch.Reset()
	return &b.scratch
}

// pendingStep is a model response being read.
type pendingStep struct {
	line    int    // the first line of the response
	key     string // Claude Code message.id, "" when none
	blocks  [][]byte
	replay  [][]byte
	usage   []byte
	done    bool // usage seen (Codex) : the next output is a new response
	calls   []toolCall
	results []toolResult
	// fallback are results the source records with the calls themselves
	// (Gemini CLI): a call no result line answered is answered by its
	// fallback when the step is written.
	fallback []toolResult
	msgLine  int
	// start and end are the times of the response's first and latest
	// lines: its events get them, not the time of the line that closed it.
	start, end float64
}

type toolCall struct {
	id, name, args string
	line           int
	time           float64
}

type toolResult struct {
	id      string
	content []byte
	isError bool
	line    int
	time    float64
}

// emit queues a mapped event; data gets origin {format, line} (or
// {format, seq}, see originKey) as its last key. The error result is kept
// for the callers' flow; building cannot fail.
func (b *builder) emit(typ string, data *codec.Object, line int, op codec.SurfaceOp, sources []int64) (int64, error) {
	key := b.originKey
	if key == "" {
		key = "line"
	}
	o := codec.AppendMapHeader(b.origin[:0], 2)
	o = codec.AppendString(codec.AppendString(o, "format"), string(b.format))
	b.origin = codec.AppendInt(codec.AppendString(o, key), int64(line))
	data.Value("origin", b.origin)
	// Not decoded: Import decodes what it stores (see Session.Next).
	ev := codec.Event{Raw: rawEvent(typ, b.seq, b.time, data, op, sources, 0), Type: typ, Seq: b.seq, Time: b.time,
		Op: op, Sources: sources, HasSources: sources != nil}
	if codec.IsSurfaceType(typ) && ev.Op.Kind == codec.OpNone {
		ev.Op.Kind = codec.OpAppend
	}
	switch ev.Op.Kind {
	case codec.OpAppend:
		b.surface = append(b.surface, ev.Seq)
	case codec.OpReplace:
		b.surface = replaceSpan(b.surface, op.Start, op.End, ev.Seq)
	}
	b.queue = append(b.queue, ev)
	b.seq++
	return ev.Seq, nil
}

// replaceSpan returns surface with the nodes from start to end (docs/rules.md#surface,
// by position) replaced by seq, in a new array; a span not on surface
// (the caller's error, which validation refuses) leaves only seq.
func replaceSpan(surface []int64, start, end, seq int64) []int64 {
	ps, pe := -1, -1
	for i, s := range surface {
		if s == start {
			ps = i
		}
		if s == end {
			pe = i
		}
	}
	if ps < 0 || pe < ps {
		return []int64{seq}
	}
	out := make([]int64, 0, len(surface)-(pe-ps))
	out = append(out, surface[:ps]...)
	out = append(out, seq)
	return append(out, surface[pe+1:]...)
}

// openTurn closes the open turn (completed) and starts turn+1. prompt
// says a user prompt starts it (its trigger).
func (b *builder) openTurn(line int, prompt, implicit bool) error {
	if err := b.closeTurn(line, nil); err != nil {
		return err
	}
	b.turn++
	o := b.data()
	o.Int("turn", b.turn)
	if prompt {
		var src, trig codec.Object
		src.Str("kind", "user")
		trig.Str("kind", "message").Value("source", src.Bytes())
		o.Value("trigger", trig.Bytes())
	}
	if _, err := b.emit(codec.TypeTurnStart, o, line, codec.SurfaceOp{}, nil); err != nil {
		return err
	}
	b.inTurn, b.implicit, b.steps = true, implicit, 0
	b.stats.Turns++
	return nil
}

// ensureTurn opens an implicit turn when none is open.
func (b *builder) ensureTurn(line int) error {
	if b.inTurn {
		return nil
	}
	return b.openTurn(line, false, true)
}

// closeTurn ends the open turn, if any: reason nil means completed.
func (b *builder) closeTurn(line int, reason []byte) error {
	if err := b.closeStep(); err != nil {
		return err
	}
	if !b.inTurn {
		return nil
	}
	if reason == nil {
		var r codec.Object
		r.Str("kind", "completed")
		reason = r.Bytes()
	}
	o := b.data()
	o.Int("turn", b.turn).Value("reason", reason)
	if _, err := b.emit(codec.TypeTurnEnd, o, line, codec.SurfaceOp{}, nil); err != nil {
		return err
	}
	b.inTurn = false
	return nil
}

// response returns the open step for output of the response keyed key
// starting at line: the pending one if it continues, else a new one.
func (b *builder) response(line int, key string) (*pendingStep, error) {
	if st := b.st; st != nil && !st.done && len(st.results) == 0 && (key == "" || st.key == key) {
		st.end = max(st.end, b.time)
		return st, nil
	}
	if err := b.closeStep(); err != nil {
		return nil, err
	}
	if err := b.ensureTurn(line); err != nil {
		return nil, err
	}
	b.st = &pendingStep{line: line, key: key, msgLine: line, start: b.time, end: b.time}
	return b.st, nil
}

// answer adds a tool result to the open step if it answers one of its
// calls not answered yet; false when it answers none.
func (b *builder) answer(r toolResult) bool {
	st := b.st
	if st == nil {
		return false
	}
	found := false
	for _, c := range st.calls {
		if c.id == r.id {
			found = true
		}
	}
	for _, x := range st.results {
		if x.id == r.id {
			return false
		}
	}
	if !found {
		return false
	}
	r.time = b.time
	st.results = append(st.results, r)
	st.end = max(st.end, b.time)
	return true
}

// setModel records the model the source names at line n.
func (b *builder) setModel(model string, n int) {
	if model != "" && model != b.model {
		b.model, b.headerLine = model, n
	}
}

// setTools records the tools the source says are offered at line n.
func (b *builder) setTools(tools [][]byte, n int) {
	b.tools, b.headerLine = tools, n
}

// ensureHeader writes a header snapshot when the model, system or tools
// in use differ from the last snapshot's (initial the first time,
// change after); nothing before the source names a model.
func (b *builder) ensureHeader() error {
	if b.model == "" {
		return nil
	}
	var cfg, h codec.Object
	cfg.Str("provider", b.provider()).Str("model", b.model).Str("source", string(b.format))
	h.Value("config", cfg.Bytes())
	if b.system != "" {
		h.Str("system", b.system)
	}
	if len(b.tools) > 0 {
		h.Array("tools", b.tools...)
	}
	hb := h.Bytes()
	if bytes.Equal(hb, b.header) {
		return nil
	}
	reason := "change"
	if b.header == nil {
		reason = "initial"
	}
	var o codec.Object
	o.Value("header", hb).Str("reason", reason)
	if _, err := b.emit(codec.TypeRequestHeader, &o, b.headerLine, codec.SurfaceOp{}, nil); err != nil {
		return err
	}
	b.header = hb
	return nil
}

// closeStep writes the pending step, if any: header owed, step/start,
// assistant/message, tool calls, tool results, step/end.
func (b *builder) closeStep() error {
	st := b.st
	if st == nil {
		return nil
	}
	b.st = nil
	for _, r := range st.fallback {
		if !slices.ContainsFunc(st.results, func(x toolResult) bool { return x.id == r.id }) {
			st.results = append(st.results, r)
		}
	}
	now := b.time
	defer func() { b.time = now }()
	b.time = st.start
	if err := b.ensureHeader(); err != nil {
		return err
	}
	b.steps++
	b.stats.Steps++
	o := b.data()
	o.Int("turn", b.turn).Int("step", b.steps)
	if _, err := b.emit(codec.TypeStepStart, o, st.line, codec.SurfaceOp{}, nil); err != nil {
		return err
	}
	var provider string
	if b.model != "" {
		provider = b.provider()
	}
	if err := b.assistant(st.msgLine, st.blocks, st.replay, st.usage, provider, b.model, codec.SurfaceOp{Kind: codec.OpAppend}); err != nil {
		return err
	}
	if st.usage != nil {
		b.stats.addUsage(st.usage)
	}
	for _, c := range st.calls {
		b.time = c.time
		if err := b.toolCall(c); err != nil {
			return err
		}
	}
	for _, r := range st.results {
		b.time = r.time
		if err := b.toolResult(r, codec.SurfaceOp{Kind: codec.OpAppend}); err != nil {
			return err
		}
	}
	b.time = max(st.end, b.time)
	o = b.data()
	o.Int("turn", b.turn).Int("step", b.steps)
	_, err := b.emit(codec.TypeStepEnd, o, st.line, codec.SurfaceOp{}, nil)
	return err
}

// assistant writes the open step's assistant/message: content blocks,
// provenance {provider, model, replayState?} when model is known, usage
// (storage form) when reported.
func (b *builder) assistant(line int, blocks, replay [][]byte, usage []byte, provider, model string, op codec.SurfaceOp, sources ...int64) error {
	size := len(usage) + 160
	for _, bl := range blocks {
		size += len(bl)
	}
	o := b.data()
	o.Grow(size)
	o.Int("turn", b.turn).Int("step", b.steps).Array("content", blocks...)
	if model != "" {
		var p codec.Object
		p.Str("provider", provider).Str("model", model)
		if len(replay) > 0 {
			p.Value("replayState", codec.Array(replay...))
		}
		o.Value("provenance", p.Bytes())
	}
	if usage != nil {
		o.Value("usage", usage)
	}
	_, err := b.emit(codec.TypeAssistantMessage, o, line, op, sourcesOf(op, sources))
	return err
}

// toolCall writes a tool/call of the open step.
func (b *builder) toolCall(c toolCall) error {
	o := b.data()
	o.Int("turn", b.turn).Int("step", b.steps).Str("callId", c.id).Str("name", c.name).Str("arguments", c.args)
	if _, err := b.emit(codec.TypeToolCall, o, c.line, codec.SurfaceOp{}, nil); err != nil {
		return err
	}
	b.stats.ToolCalls++
	return nil
}

// toolResult writes a tool/result of the open step, with op on the
// surface (sources cite a replaced span's seqs).
func (b *builder) toolResult(r toolResult, op codec.SurfaceOp, sources ...int64) error {
	o := b.data()
	o.Grow(len(r.content) + 96)
	o.Int("turn", b.turn).Int("step", b.steps).Str("callId", r.id).Value("content", r.content).Bool("isError", r.isError)
	if _, err := b.emit(codec.TypeToolResult, o, r.line, op, sourcesOf(op, sources)); err != nil {
		return err
	}
	b.stats.ToolResults++
	return nil
}

// sourcesOf is the sourceEventSeqs of a surface event: those of a
// replace, nil (absent) for an append.
func sourcesOf(op codec.SurfaceOp, sources []int64) []int64 {
	if op.Kind != codec.OpReplace {
		return nil
	}
	return sources
}

// userMessage writes a user/message (source user), appended.
func (b *builder) userMessage(line int, content []byte) error {
	return b.userMessageOp(line, content, codec.SurfaceOp{Kind: codec.OpAppend})
}

// userMessageOp writes a user/message (source user) with op on the
// surface (sources cite a replaced span's seqs).
func (b *builder) userMessageOp(line int, content []byte, op codec.SurfaceOp, sources ...int64) error {
	var src codec.Object
	src.Str("kind", "user")
	o := b.data()
	o.Grow(len(content) + 80)
	o.Value("content", content).Value("source", src.Bytes())
	if _, err := b.emit(codec.TypeUserMessage, o, line, op, sourcesOf(op, sources)); err != nil {
		return err
	}
	b.stats.Prompts++
	return nil
}

// contextMessage writes a context/message with envelope raw and the
// source kind given (the role it had: developer, system), appended.
func (b *builder) contextMessage(line int, content []byte, kind string) error {
	return b.contextMessageOp(line, content, kind, codec.SurfaceOp{Kind: codec.OpAppend})
}

func (b *builder) contextMessageOp(line int, content []byte, kind string, op codec.SurfaceOp, sources ...int64) error {
	var src codec.Object
	src.Str("kind", kind)
	o := b.data()
	o.Grow(len(content) + 80)
	o.Value("content", content).Value("source", src.Bytes()).Str("envelope", "raw")
	_, err := b.emit(codec.TypeContextMessage, o, line, op, sourcesOf(op, sources))
	return err
}

// compactStart opens a compaction bracket (docs/rules.md#compaction's shape) at line and
// returns its seq.
func (b *builder) compactStart(line int) (int64, error) {
	if err := b.closeStep(); err != nil {
		return 0, err
	}
	if err := b.ensureTurn(line); err != nil {
		return 0, err
	}
	var o codec.Object
	o.Int("turn", b.turn)
	return b.emit(codec.TypeCompactStart, &o, line, codec.SurfaceOp{}, nil)
}

// compactEnd closes the bracket opened at startSeq: compact/summary, the
// user/message replacing the whole surface (appended when the surface is
// empty) and compact/end, at line. tokens < 0 means the source records no
// token count.
func (b *builder) compactEnd(startSeq int64, line int, summary []byte, tokens int64) error {
	if err := b.closeStep(); err != nil {
		return err
	}
	shadow := append([]int64(nil), b.surface...)
	var o codec.Object
	o.Value("summary", summary)
	if len(shadow) > 0 {
		var r codec.Object
		r.Int("start", shadow[0]).Int("end", shadow[len(shadow)-1])
		o.Value("shadowedRange", r.Bytes())
	}
	o.Ints("shadowedSeqs", shadow)
	if tokens >= 0 {
		o.Int("shadowedTokenCount", tokens)
	}
	if b.model != "" {
		o.Str("provider", b.provider()).Str("model", b.model)
	}
	sumSeq, err := b.emit(codec.TypeCompactSummary, &o, line, codec.SurfaceOp{}, nil)
	if err != nil {
		return err
	}
	var src codec.Object
	src.Str("kind", "plugin").Str("plugin", "compact")
	o = codec.Object{}
	o.Value("content", summary).Value("source", src.Bytes())
	sources := append([]int64{startSeq, sumSeq}, shadow...)
	op := codec.SurfaceOp{Kind: codec.OpAppend}
	if len(shadow) > 0 {
		op = codec.SurfaceOp{Kind: codec.OpReplace, Start: shadow[0], End: shadow[len(shadow)-1]}
	}
	if _, err := b.emit(codec.TypeUserMessage, &o, line, op, sources); err != nil {
		return err
	}
	o = codec.Object{}
	o.Int("turn", b.turn)
	if _, err := b.emit(codec.TypeCompactEnd, &o, line, codec.SurfaceOp{}, nil); err != nil {
		return err
	}
	b.stats.Compactions++
	return nil
}

// compactFail closes the bracket opened at startSeq with an error: the
// source recorded no summary for it.
func (b *builder) compactFail(line int, msg string) error {
	if err := b.closeStep(); err != nil {
		return err
	}
	var o codec.Object
	o.Int("turn", b.turn).Str("error", msg)
	_, err := b.emit(codec.TypeCompactEnd, &o, line, codec.SurfaceOp{}, nil)
	return err
}

// provider is the provider of the source's models.
func (b *builder) provider() string {
	switch b.format {
	case ClaudeCode:
		return "anthropic"
	case GeminiCLI:
		return "google"
	}
	return "openai"
}

func (s *Stats) addUsage(mp []byte) {
	v := value(mp)
	add := func(dst *int64, key string) {
		if n, ok := v.get(key).num(); ok {
			*dst += int64(n)
		}
	}
	add(&s.Usage.Input, "inputTokens")
	add(&s.Usage.Output, "outputTokens")
	add(&s.Usage.CacheRead, "cacheReadTokens")
	add(&s.Usage.CacheWrite, "cacheWriteTokens")
	add(&s.Usage.Reasoning, "reasoningTokens")
}
