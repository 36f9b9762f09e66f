package transcript

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
)

// Claude Code (2.1.328 and later) records each API request it sends in
// its transcript, in a delta form:
//
//   - api-request {id, shapeHash, params, base?, keep, tail,
//     cacheControl, requestDigest}: the request's messages are the first
//     keep of request base's, then those whose hashes tail lists; params
//     are its model, betas and sampling fields; cacheControl the cache
//     markers, each {path, value} (path into system, messages or tools);
//   - api-request-shape {shapeHash, shape:{system, tools}}: the system
//     blocks and tools of the requests that name it;
//   - api-request-blob {hash, message}: a message the user and assistant
//     lines do not hold (the prompt as sent, with the reminders Claude
//     Code puts before it; the system-role message of the environment).
//
// A message's hash is the SHA-256 of its JSON with object keys sorted
// and cache markers dropped; requestDigest is the SHA-256 of the same
// form of {params…, system, tools, messages} with the markers set. When
// every request of the conversation can be rebuilt from the file (every
// hash is a blob's, a user line's or an assistant message's, every shape
// is there), the file is mapped from its requests (claudeDelta): each
// request through the gateway's mapping (a Lane), as if the gateway had
// recorded it, and each answer from the assistant lines that reference
// it; each rebuilt request's digest is checked against requestDigest.
// Otherwise the lines are mapped as before, and the requests give the
// header snapshots only.

// claudeRequest is an api-request line as the first pass reads it.
type claudeRequest struct {
	id, base, shape string
	keep            int
	tail            []digest
	line            int
	valid           bool // the line has its id, keep and a tail of hex hashes
}

// readClaudeRequest reads an api-request line.
func readClaudeRequest(v value, n int) claudeRequest {
	f := v.fields("id", "base", "shapeHash", "keep", "tail")
	r := claudeRequest{id: f[0].text(), base: f[1].text(), shape: f[2].text(), line: n}
	keep, ok := f[3].num()
	if r.id == "" || !ok || keep < 0 || keep != float64(int(keep)) || f[4].kind() != codec.KindArray {
		return r
	}
	r.keep = int(keep)
	for _, h := range f[4].elems() {
		d, ok := hexDigest(h.text())
		if !ok {
			return r
		}
		r.tail = append(r.tail, d)
	}
	r.valid = true
	return r
}

func hexDigest(s string) (digest, bool) {
	var d digest
	if len(s) != 64 {
		return d, false
	}
	if _, err := hex.Decode(d[:], []byte(s)); err != nil {
		return d, false
	}
	return d, true
}

// claudePre is what the first pass gathers for claudeDelta.
type claudePre struct {
	reqs   []claudeRequest
	known  map[digest]bool // the hashes of the messages the file holds
	shapes map[string]int  // shape hash → its line
	refs   map[int]string  // assistant line → its requestRef
	side   map[int]bool    // lines that are isSidechain
	group  claudeGroup     // the assistant message being read
}

// claudeGroup gathers an assistant message's blocks, written one line
// each under one message.id.
type claudeGroup struct {
	id      string
	line    int
	content [][]byte
	last    value   // the last line's message
	time    float64 // the last line's time
}

// add adds an assistant line's message to the group (a new group when
// its message.id differs) and returns the API message it makes so far:
// {"role":"assistant","content":[…]}.
func (g *claudeGroup) add(n int, msg value) value {
	f := msg.fields("id", "content")
	id := f[0].text()
	if id == "" || id != g.id {
		*g = claudeGroup{id: id, line: n}
	}
	for _, e := range f[1].elems() {
		g.content = append(g.content, append([]byte(nil), e...)) // the line's buffer may be reused
	}
	g.last = append(value(nil), msg...)
	var o codec.Object
	o.Str("role", "assistant").Array("content", g.content...)
	return o.Bytes()
}

// userMessages are the API messages a user line's message may have been
// sent as: {"role":"user","content":C}, and for string content the
// one-text-block list Claude Code sends when a cache marker is on it.
func userMessages(msg value) []value {
	c := msg.get("content")
	if c == nil {
		return nil
	}
	var o codec.Object
	o.Str("role", "user").Value("content", c)
	out := []value{o.Bytes()}
	if c.kind() == codec.KindString {
		var l codec.Object
		l.Str("role", "user").Array("content", textBlockOf(c))
		out = append(out, l.Bytes())
	}
	return out
}

// textBlockOf is {"type":"text","text":s}, s in storage form, with the
// keys in the order Claude Code writes them.
func textBlockOf(s value) []byte {
	var o codec.Object
	o.Str("type", "text").Value("text", s)
	return o.Bytes()
}

// claudeHash is a message's hash: the SHA-256 of its JSON with object
// keys sorted and cache markers dropped.
func claudeHash(msg value) (digest, bool) {
	b, err := sortedJSON(nil, msg, marker, maxDepth)
	if err != nil {
		return digest{}, false
	}
	return sha256.Sum256(b), true
}

// line reads line n (type typ, sidechain side) for the delta form: the
// requests, shapes and blobs, and which request each assistant line
// answers. The user and assistant lines' hashes are computed after the
// first pass (hashes), and only for a file that records requests.
func (p *claudePre) line(n int, v value, typ string, side bool) {
	if p.known == nil {
		p.known, p.shapes, p.refs, p.side = map[digest]bool{}, map[string]int{}, map[int]string{}, map[int]bool{}
	}
	if side {
		p.side[n] = true
	}
	switch typ {
	case "api-request":
		p.reqs = append(p.reqs, readClaudeRequest(v, n))
	case "api-request-shape":
		if h := v.get("shapeHash").text(); h != "" && v.get("shape").kind() == codec.KindObject {
			if _, ok := p.shapes[h]; !ok {
				p.shapes[h] = n
			}
		}
	case "api-request-blob":
		if d, ok := claudeHash(v.get("message")); ok && hex.EncodeToString(d[:]) == v.get("hash").text() {
			p.known[d] = true
		}
	case "assistant":
		if ref, ok := v.get("requestRef").str(); ok && ref != "" {
			p.refs[n] = ref
		}
	}
}

// hashes computes the hashes of the messages the user and assistant
// lines hold, from the first pass's images (by line); false when there
// are none (a file too big to keep them: it is mapped from its lines).
func (p *claudePre) hashes(images [][]byte) bool {
	if images == nil {
		return false
	}
	for n, img := range images {
		if img == nil {
			continue
		}
		f := value(img).fields("type", "message")
		switch f[0].text() {
		case "user":
			for _, m := range userMessages(f[1]) {
				if d, ok := claudeHash(m); ok {
					p.known[d] = true
				}
			}
		case "assistant":
			if d, ok := claudeHash(p.group.add(n, f[1])); ok {
				p.known[d] = true
			}
		}
	}
	return true
}

// claudeDelta maps a Claude Code transcript from its requests.
type claudeDelta struct {
	// From the first pass: the requests whose answers are on the
	// conversation's branch (main), by id; the message hashes they hold
	// and the shapes they name.
	main   map[string]bool
	used   map[digest]bool
	shapes map[string]bool

	// The second pass: the messages those requests hold, by hash; every
	// request's message hashes, by id; the shapes, by hash; the assistant
	// message being read.
	msgs    map[digest]value
	lists   map[string][]digest
	shapeOf map[string]value
	group   claudeGroup
	// lane maps the requests and answers; open is the main request
	// waiting for its answer and openLine its line; ans its answer being
	// gathered (ans.id "" when none).
	lane     *Lane
	open     string
	openLine int
	ans      claudeGroup
}

// delta decides, after the first pass, whether the file is mapped from
// its requests: it has requests on the branch, and every one of them can
// be rebuilt (its base and shape came before it, every hash is known).
// onBranch, sidechainMain and images are the first pass's.
func (p *claudePre) delta(onBranch []bool, sidechainMain bool, images [][]byte) *claudeDelta {
	if len(p.reqs) == 0 || !p.hashes(images) {
		return nil
	}
	d := &claudeDelta{main: map[string]bool{}, used: map[digest]bool{}, shapes: map[string]bool{}}
	for n, ref := range p.refs {
		if n < len(onBranch) && onBranch[n] && (!p.side[n] || sidechainMain) {
			d.main[ref] = true
		}
	}
	if len(d.main) == 0 {
		return nil
	}
	lists := map[string][]digest{}
	for _, r := range p.reqs {
		list, ok := r.resolve(lists)
		if ok {
			lists[r.id] = list
		}
		if !d.main[r.id] {
			continue
		}
		if at, seen := p.shapes[r.shape]; !ok || !seen || at > r.line {
			return nil
		}
		for _, h := range list {
			if !p.known[h] {
				return nil
			}
			d.used[h] = true
		}
		d.shapes[r.shape] = true
	}
	for id := range d.main {
		if _, ok := lists[id]; !ok {
			return nil // a reference to no request of the file
		}
	}
	d.msgs, d.lists, d.shapeOf = map[digest]value{}, map[string][]digest{}, map[string]value{}
	d.lane = newLane(APIAnthropic, ClaudeCode, "line")
	return d
}

// resolve returns a request's message hashes: its base's first keep,
// then its tail; false when the base is unknown or shorter.
func (r claudeRequest) resolve(lists map[string][]digest) ([]digest, bool) {
	if !r.valid {
		return nil, false
	}
	var head []digest
	if r.base != "" {
		b, ok := lists[r.base]
		if !ok || r.keep > len(b) {
			return nil, false
		}
		head = b[:r.keep]
	} else if r.keep != 0 {
		return nil, false
	}
	return append(slices.Clip(head), r.tail...), true
}

// line maps line n of the delta form: typ its type, mapped whether it is
// on the conversation's branch (not another branch, not a sidechain).
func (d *claudeDelta) line(b *builder, n int, v value, typ string, mapped bool) (int, error) {
	switch typ {
	case "api-request-shape":
		h := v.get("shapeHash").text()
		if !d.shapes[h] {
			return lineKept, nil
		}
		if _, ok := d.shapeOf[h]; !ok {
			d.shapeOf[h] = append(value(nil), v.get("shape")...)
		}
		return lineMapped, nil
	case "api-request-blob":
		msg := v.get("message")
		if h, ok := claudeHash(msg); ok && d.used[h] {
			d.msgs[h] = append(value(nil), msg...)
			return lineMapped, nil
		}
		return lineKept, nil
	case "user":
		how := lineKept
		for _, m := range userMessages(v.get("message")) {
			if h, ok := claudeHash(m); ok && d.used[h] {
				d.msgs[h] = m
				if mapped {
					how = lineMapped
				}
			}
		}
		if mapped {
			if err := d.answer(b); err != nil {
				return 0, err
			}
		}
		return how, nil
	case "assistant":
		msg := v.get("message")
		if h, ok := claudeHash(d.group.add(n, msg)); ok && d.used[h] {
			var o codec.Object
			o.Str("role", "assistant").Array("content", d.group.content...)
			d.msgs[h] = o.Bytes()
		}
		ref := v.get("requestRef").text()
		if !mapped || ref == "" || ref != d.open {
			return lineKept, nil
		}
		if id := msg.get("id").text(); d.ans.id != "" && id != d.ans.id {
			if err := d.answer(b); err != nil {
				return 0, err
			}
		}
		d.ans.add(n, msg)
		d.ans.time = b.time
		return lineMapped, nil
	case "api-request":
		r := readClaudeRequest(v, n)
		list, ok := r.resolve(d.lists)
		if ok {
			d.lists[r.id] = list
		}
		if !d.main[r.id] || !ok {
			return lineKept, nil
		}
		if err := d.answer(b); err != nil {
			return 0, err
		}
		return d.request(b, n, v, r, list)
	}
	return lineKept, nil
}

// request rebuilds a main request from its shape, params, messages and
// markers, checks its digest, and maps it through the lane.
func (d *claudeDelta) request(b *builder, n int, v value, r claudeRequest, list []digest) (int, error) {
	f := v.fields("params", "cacheControl", "requestDigest")
	params := f[0]
	shape := d.shapeOf[r.shape]
	sf := shape.fields("system", "tools")
	parts := map[string][][]byte{"system": sf[0].elemBytes(), "tools": sf[1].elemBytes()}
	msgs := make([][]byte, len(list))
	for i, h := range list {
		m, ok := d.msgs[h]
		if !ok {
			return lineKept, nil
		}
		msgs[i] = m
	}
	parts["messages"] = msgs
	for _, c := range f[1].elems() {
		cf := c.fields("path", "value")
		path := cf[0].elems()
		if len(path) < 2 {
			continue
		}
		list := parts[path[0].text()]
		i, ok := path[1].num()
		if !ok || i < 0 || int(i) >= len(list) || i != float64(int(i)) {
			continue
		}
		if set, ok := setMarker(list[int(i)], path[2:], cf[1]); ok {
			list[int(i)] = set
		}
	}
	// The digest: params and the three parts, keys sorted.
	var dg codec.Object
	params.each(func(k string, m value) {
		if k != "system" && k != "tools" && k != "messages" {
			dg.Value(k, m)
		}
	})
	dg.Array("messages", parts["messages"]...).Array("system", parts["system"]...).Array("tools", parts["tools"]...)
	b.stats.Rebuilt++
	if sj, err := sortedJSON(nil, dg.Bytes(), "", maxDepth); err == nil {
		sum := sha256.Sum256(sj)
		if hex.EncodeToString(sum[:]) == f[2].text() {
			b.stats.Verified++
		}
	}
	// The body as the API takes it: betas go in a header, not the body.
	var body codec.Object
	body.Value("model", params.get("model"))
	body.Array("messages", parts["messages"]...).Array("system", parts["system"]...).Array("tools", parts["tools"]...)
	params.each(func(k string, m value) {
		switch k {
		case "model", "betas", "system", "tools", "messages", "stream":
		default:
			body.Value(k, m)
		}
	})
	js, _, err := codec.ToJSON(nil, body.Bytes())
	if err != nil {
		return lineKept, nil
	}
	evs, _, err := d.lane.MapRequest(js, int64(n), b.seq, b.time)
	if err != nil {
		if errors.Is(err, codec.ErrInvalid) {
			return lineKept, nil // not a request the mapping reads: the lane is unchanged
		}
		return 0, err
	}
	b.take(evs)
	d.open, d.openLine = r.id, n
	return lineMapped, nil
}

// answer maps the answer gathered for the open request, if any: its
// lines' blocks as one Messages API answer.
func (d *claudeDelta) answer(b *builder) error {
	g := d.ans
	if g.id == "" && g.content == nil {
		return nil
	}
	d.ans = claudeGroup{}
	lf := g.last.fields("id", "model", "stop_reason", "usage")
	var o codec.Object
	o.Value("id", lf[0]).Str("type", "message").Str("role", "assistant")
	if lf[1] != nil {
		o.Value("model", lf[1])
	}
	o.Array("content", g.content...)
	if lf[2] != nil {
		o.Value("stop_reason", lf[2])
	}
	if lf[3] != nil {
		o.Value("usage", lf[3])
	}
	js, _, err := codec.ToJSON(nil, o.Bytes())
	if err != nil {
		return nil
	}
	a := NewAnswer(APIAnthropic, 200, false)
	a.Feed(js)
	a.End()
	evs, err := d.lane.MapAnswer(a, int64(d.openLine), b.seq, g.time)
	if errors.Is(err, ErrStale) {
		return nil
	}
	if err != nil {
		return err
	}
	b.take(evs)
	return nil
}

// finish maps the last answer and adds what the lane mapped to the
// stats.
func (d *claudeDelta) finish(b *builder) error {
	if err := d.answer(b); err != nil {
		return err
	}
	l, s := &d.lane.stats, b.stats
	s.Turns += l.Turns
	s.Steps += l.Steps
	s.Prompts += l.Prompts
	s.ToolCalls += l.ToolCalls
	s.ToolResults += l.ToolResults
	s.Compactions += l.Compactions
	s.Usage.Input += l.Usage.Input
	s.Usage.Output += l.Usage.Output
	s.Usage.CacheRead += l.Usage.CacheRead
	s.Usage.CacheWrite += l.Usage.CacheWrite
	s.Usage.Reasoning += l.Usage.Reasoning
	return nil
}

// take queues events a lane built at b's next seqs.
func (b *builder) take(evs []codec.Event) {
	b.queue = append(b.queue, evs...)
	b.seq += int64(len(evs))
}

// setMarker sets a cache marker in a system block, tool or message at
// the path below it (a message's ["content", i]: a string content is
// first made the one-text-block list Claude Code sends with a marker).
func setMarker(item value, path []value, val value) ([]byte, bool) {
	if len(path) == 0 {
		return setMember(item, marker, val)
	}
	if len(path) != 2 || path[0].text() != "content" {
		return nil, false
	}
	j, ok := path[1].num()
	if !ok || j < 0 || j != float64(int(j)) {
		return nil, false
	}
	c := item.get("content")
	var blocks [][]byte
	switch c.kind() {
	case codec.KindString:
		blocks = [][]byte{textBlockOf(c)}
	case codec.KindArray:
		blocks = c.elemBytes()
	default:
		return nil, false
	}
	if int(j) >= len(blocks) {
		return nil, false
	}
	bl, ok := setMember(blocks[int(j)], marker, val)
	if !ok {
		return nil, false
	}
	blocks = slices.Clone(blocks)
	blocks[int(j)] = bl
	return setMember(item, "content", codec.Array(blocks...))
}

// setMember returns object v with member key set to val (replaced in
// place, or appended).
func setMember(v value, key string, val value) ([]byte, bool) {
	var o codec.Object
	found := false
	if !v.each(func(k string, m value) {
		if k == key {
			o.Value(k, val)
			found = true
			return
		}
		o.Value(k, m)
	}) {
		return nil, false
	}
	if !found {
		o.Value(key, val)
	}
	return o.Bytes(), true
}

// sortedJSON appends v as JSON (as codec writes it, JSON.stringify's
// form) with every object's keys in sorted order, leaving out members
// named drop ("" drops none).
func sortedJSON(dst []byte, v value, drop string, depth int) ([]byte, error) {
	r := codec.NewReader(v)
	t, err := r.Next()
	if err != nil {
		return dst, err
	}
	switch t.Kind {
	case codec.KindArray:
		if depth <= 0 {
			return dst, errors.New("transcript: nesting too deep")
		}
		dst = append(dst, '[')
		for i := 0; i < t.N; i++ {
			e, err := r.Value(maxDepth)
			if err != nil {
				return dst, err
			}
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = sortedJSON(dst, e, drop, depth-1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case codec.KindObject:
		if depth <= 0 {
			return dst, errors.New("transcript: nesting too deep")
		}
		type member struct {
			k string
			v value
		}
		ms := make([]member, 0, t.N)
		for i := 0; i < t.N; i++ {
			k, ok, err := r.Key()
			if err != nil || !ok {
				return dst, errors.New("transcript: an object key is not a string")
			}
			m, err := r.Value(maxDepth)
			if err != nil {
				return dst, err
			}
			if drop != "" && string(k) == drop {
				continue
			}
			ms = append(ms, member{string(k), m})
		}
		slices.SortFunc(ms, func(a, b member) int {
			switch {
			case a.k < b.k:
				return -1
			case a.k > b.k:
				return 1
			}
			return 0
		})
		dst = append(dst, '{')
		for i, m := range ms {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(codec.AppendJSONString(dst, []byte(m.k)), ':')
			if dst, err = sortedJSON(dst, m.v, drop, depth-1); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	}
	out, _, err := codec.ToJSON(dst, v)
	return out, err
}
