package transcript

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/wire"
)

// Reuse is what a request body shares with the previous request of its
// lane (docs/gateway.md#cache-audit), measured on the current body's bytes.
type Reuse struct {
	// Break is why the shared prefix ended, as MapRequest names it.
	Break Break
	// Shared is the bytes of the current body that lie in the prefix a
	// provider's prompt cache could reuse: in the API's own order, the
	// tools, the system prompt, then the conversation items, each
	// counted whole while it equals the previous request's in normal
	// form (cache markers ignored), up to the first that does not. A
	// config change shares nothing; a changed system prompt ends the
	// prefix at the system prompt (Break.Offset says where it differs).
	Shared int64
	// Unchanged are the spans of the current body after the shared
	// prefix that the previous request held too (the tools or system
	// prompt, or a conversation item, equal in normal form): bytes re-sent
	// although unchanged, which no prefix cache can reuse.
	Unchanged []Span
}

// Span is a byte range [Start, End) of a body.
type Span struct{ Start, End int64 }

// Prefix compares the request body cur of api with prev, the previous
// request of its lane (nil for the lane's first: Break first, nothing
// shared). A body that is not of the API's shape, or whose conversation
// is empty, is refused as MapRequest refuses it (ErrInvalid, naming the
// API, never content).
func Prefix(api string, prev, cur []byte) (Reuse, error) {
	c, err := parseRequest(api, cur)
	if err != nil {
		return Reuse{}, err
	}
	if len(c.units) == 0 {
		return Reuse{}, requestf(api, "the conversation is empty")
	}
	if prev == nil {
		return Reuse{Break: Break{Kind: BreakFirst}}, nil
	}
	p, err := parseRequest(api, prev)
	if err != nil {
		return Reuse{}, err
	}
	// The previous request as a lane that mapped it: its break rules are
	// MapRequest's.
	l := &Lane{api: api, sys: p.system, tools: p.tools, config: p.config, sysRaw: p.sysRaw, toolsRaw: p.toolsRaw,
		rawKnown: true, requests: 1}
	for _, u := range p.units {
		l.items = append(l.items, laneItem{key: u.key, raw: u.raw})
	}
	k := 0
	for k < len(l.items) && k < len(c.units) && l.items[k].key == c.units[k].key {
		k++
	}
	r := Reuse{Break: l.breakOf(c, k)}
	lay, err := layOut(c, cur)
	if err != nil {
		return Reuse{}, err
	}
	shared := r.Break.Kind != BreakConfig
	// part counts a span: shared while the prefix holds, else unchanged
	// when same.
	part := func(sp []Span, same bool) {
		if !same {
			shared = false
		}
		for _, s := range sp {
			switch {
			case shared:
				r.Shared += s.End - s.Start
			case same && s.End > s.Start:
				r.Unchanged = append(r.Unchanged, s)
			}
		}
	}
	part(lay.tools, slices.EqualFunc(c.tools, p.tools, bytes.Equal))
	part(lay.system, c.system == p.system)
	had := make(map[digest]bool, len(p.units))
	for _, u := range p.units {
		had[u.key] = true
	}
	// Each item's units: in the prefix (index < k), or held by prev.
	inPrefix, held := map[int]bool{}, map[int]bool{}
	for j, u := range c.units {
		if _, ok := inPrefix[u.item]; !ok {
			inPrefix[u.item], held[u.item] = true, true
		}
		inPrefix[u.item] = inPrefix[u.item] && j < k
		held[u.item] = held[u.item] && had[u.key]
	}
	pre, same := true, true // an item without units goes with the one before it
	for i, s := range lay.items {
		if lay.header[i] {
			continue
		}
		if _, ok := inPrefix[i]; ok {
			pre, same = inPrefix[i], held[i]
		}
		if !pre {
			shared = false
		}
		part([]Span{s}, same)
	}
	return r, nil
}

// bodyLayout is where a body's parts lie: the tools (a top-level list, and
// Codex's additional_tools items), the system prompt, and each
// conversation item; header marks the items that are tools or the system
// prompt.
type bodyLayout struct {
	tools, system []Span
	items         []Span
	header        []bool
}

// layOut finds the parts of body, a request parsed as req.
func layOut(req *request, body []byte) (bodyLayout, error) {
	var lay bodyLayout
	top, err := jsonMembers(body)
	if err != nil {
		return lay, requestf(req.api, "the body does not scan: %v", err)
	}
	convo := "messages"
	switch req.api {
	case APIAnthropic:
		lay.system = top.spans("system")
	case APIResponses:
		lay.system = top.spans("instructions")
		convo = "input"
	}
	lay.tools = top.spans("tools")
	// A null member is no part of the prompt.
	for _, p := range []*[]Span{&lay.system, &lay.tools} {
		if len(*p) == 1 && body[(*p)[0].Start] == 'n' {
			*p = nil
		}
	}
	if s, ok := top[convo]; ok && s.End > s.Start && body[s.Start] == '[' {
		if lay.items, err = jsonElements(body, s); err != nil {
			return lay, requestf(req.api, "the body does not scan: %v", err)
		}
	}
	lay.header = make([]bool, len(lay.items))
	for i, s := range lay.items {
		switch req.api {
		case APIResponses:
			mp, err := codec.FromJSON(nil, body[s.Start:s.End], codec.Limits{})
			if err == nil && value(mp).get("type").text() == "additional_tools" {
				lay.header[i] = true
				lay.tools = append(lay.tools, s)
			}
		case APIChat:
			if i == 0 && req.system != "" && !hasUnitOf(req, 0) {
				lay.header[i] = true
				lay.system = append(lay.system, s)
			}
		}
	}
	return lay, nil
}

func hasUnitOf(req *request, item int) bool {
	for _, u := range req.units {
		if u.item == item {
			return true
		}
	}
	return false
}

// spanMap is a JSON object's members: the span of each value.
type spanMap map[string]Span

func (m spanMap) spans(k string) []Span {
	if s, ok := m[k]; ok {
		return []Span{s}
	}
	return nil
}

var errNotObject = errors.New("not a JSON object")

// jsonMembers returns the spans of the values of the JSON object b (checked
// by codec.FromJSON already: this only finds where things are).
func jsonMembers(b []byte) (spanMap, error) {
	i := jsonSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, errNotObject
	}
	out := spanMap{}
	i = jsonSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return out, nil
	}
	for i < len(b) {
		ks := i
		ke := jsonStr(b, i)
		if ke < 0 {
			return nil, errNotObject
		}
		key := string(b[ks+1 : ke-1])
		if q, err := strconv.Unquote(string(b[ks:ke])); err == nil {
			key = q
		}
		i = jsonSpace(b, ke)
		if i >= len(b) || b[i] != ':' {
			return nil, errNotObject
		}
		vs := jsonSpace(b, i+1)
		ve := jsonSkip(b, vs)
		if ve < 0 {
			return nil, errNotObject
		}
		out[key] = Span{int64(vs), int64(ve)}
		i = jsonSpace(b, ve)
		if i < len(b) && b[i] == '}' {
			return out, nil
		}
		if i >= len(b) || b[i] != ',' {
			return nil, errNotObject
		}
		i = jsonSpace(b, i+1)
	}
	return nil, errNotObject
}

// jsonElements returns the spans of the elements of the JSON array at s.
func jsonElements(b []byte, s Span) ([]Span, error) {
	var out []Span
	i := jsonSpace(b, int(s.Start)+1)
	if i < len(b) && b[i] == ']' {
		return out, nil
	}
	for i < int(s.End) {
		e := jsonSkip(b, i)
		if e < 0 {
			return nil, errNotObject
		}
		out = append(out, Span{int64(i), int64(e)})
		i = jsonSpace(b, e)
		if i < len(b) && b[i] == ']' {
			return out, nil
		}
		if i >= len(b) || b[i] != ',' {
			return nil, errNotObject
		}
		i = jsonSpace(b, i+1)
	}
	return nil, errNotObject
}

func jsonSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonStr returns the end of the JSON string at b[i], -1 if there is none.
func jsonStr(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// jsonSkip returns the end of the JSON value at b[i], -1 if there is none.
func jsonSkip(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return jsonStr(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = jsonStr(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	s := i
	for i < len(b) && b[i] != ',' && b[i] != ']' && b[i] != '}' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	if i == s {
		return -1
	}
	return i
}

// Usage returns the usage the answer reported, false when it reported
// none (docs/gateway.md#cache-audit: the cache reads of a recorded exchange).
func (a *Answer) Usage() (wire.Usage, bool) {
	if a.usage == nil {
		return wire.Usage{}, false
	}
	return *a.usage, true
}
