package transcript_test

import (
	"strings"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/transcript"
)

// body is a request body made of parts, so that a test knows where each
// lies: the top-level members before the conversation, then the
// conversation's items.
type body struct {
	head  []string // `"key":value` members before the conversation
	convo string   // "messages" or "input"
	items []string
	tail  []string // members after it
}

func (b body) String() string {
	return "{" + strings.Join(append(append(append([]string(nil), b.head...), `"`+b.convo+`":[`+strings.Join(b.items, ",")+`]`), b.tail...), ",") + "}"
}

// lens sums the lengths of values: the bytes a test expects shared.
func lens(vs ...string) int64 {
	n := 0
	for _, v := range vs {
		n += len(v)
	}
	return int64(n)
}

// TestPrefix checks the prefix a request body shares with its lane's
// previous one, in the API's order (tools, system, messages), cache
// markers ignored, and the break: a moved marker (and a one-block list
// becoming its string) shares everything, a changed system prompt stops
// the prefix after the tools with the first differing offset, an edited
// message stops it before the message and names its index, a new tool
// and a config change share nothing, a re-ordered map outside the
// conversation changes nothing.
func TestPrefix(t *testing.T) {
	const (
		tools   = `[{"name":"read","description":"read a file","input_schema":{"type":"object"}}]`
		tools2  = `[{"name":"read","description":"read a file","input_schema":{"type":"object"}},{"name":"write","input_schema":{"type":"object"}}]`
		system  = `"You are terse."`
		system2 = `"You are verbose."`
		u0list  = `{"role":"user","content":[{"type":"text","text":"hello","cache_control":{"type":"ephemeral"}}]}`
		u0      = `{"role":"user","content":"hello"}`
		a1      = `{"role":"assistant","content":[{"type":"text","text":"hi"}]}`
		u2      = `{"role":"user","content":"again"}`
		u2mark  = `{"role":"user","content":[{"type":"text","text":"again","cache_control":{"type":"ephemeral"}}]}`
		a3      = `{"role":"assistant","content":"sure"}`
		u4      = `{"role":"user","content":"more"}`
		a1edit  = `{"role":"assistant","content":[{"type":"text","text":"HI"}]}`
	)
	anth := func(tl, sys, model string, items ...string) string {
		return body{head: []string{`"model":"` + model + `"`, `"max_tokens":100`, `"tools":` + tl, `"system":` + sys}, convo: "messages", items: items}.String()
	}
	// Codex's responses-lite: the tools in an additional_tools item,
	// client_metadata re-ordered per request.
	const (
		addTools = `{"type":"additional_tools","tools":[{"type":"function","name":"shell","parameters":{"type":"object"}}]}`
		dev      = `{"type":"message","role":"developer","content":[{"type":"input_text","text":"base prompt"}]}`
		cu0      = `{"type":"message","role":"user","content":[{"type":"input_text","text":"list files"}]}`
		ca1      = `{"type":"function_call","call_id":"c1","name":"shell","arguments":"{\"cmd\":\"ls\"}"}`
		cr2      = `{"type":"function_call_output","call_id":"c1","output":"a b"}`
	)
	codex := func(meta string, items ...string) string {
		return body{head: []string{`"model":"gpt-5"`}, convo: "input", items: items, tail: []string{`"client_metadata":` + meta, `"prompt_cache_key":"k"`}}.String()
	}
	cases := []struct {
		name      string
		api       string
		prev, cur string
		kind      string
		shared    int64
		unchanged int64
		index     int
		offset    int
	}{
		{name: "first", api: transcript.APIAnthropic, cur: anth(tools, system, "m", u0), kind: transcript.BreakFirst},
		{name: "extends", api: transcript.APIAnthropic, prev: anth(tools, system, "m", u0, a1, u2), cur: anth(tools, system, "m", u0, a1, u2, a3, u4),
			kind: transcript.BreakNone, shared: lens(tools, system, u0, a1, u2)},
		{name: "marker moved", api: transcript.APIAnthropic, prev: anth(tools, system, "m", u0list, a1, u2mark), cur: anth(tools, system, "m", u0, a1, u2, a3, u4),
			kind: transcript.BreakMarkers, shared: lens(tools, system, u0, a1, u2)},
		{name: "system changed", api: transcript.APIAnthropic, prev: anth(tools, system, "m", u0, a1, u2), cur: anth(tools, system2, "m", u0, a1, u2, a3, u4),
			kind: transcript.BreakSystem, offset: len("You are "), shared: lens(tools), unchanged: lens(u0, a1, u2)},
		{name: "edited", api: transcript.APIAnthropic, prev: anth(tools, system, "m", u0, a1, u2), cur: anth(tools, system, "m", u0, a1edit, u2, a3, u4),
			kind: transcript.BreakEdited, index: 1, shared: lens(tools, system, u0), unchanged: lens(u2)},
		{name: "new tool", api: transcript.APIAnthropic, prev: anth(tools, system, "m", u0, a1, u2), cur: anth(tools2, system, "m", u0, a1, u2, a3, u4),
			kind: transcript.BreakTools, unchanged: lens(system, u0, a1, u2)},
		{name: "config", api: transcript.APIAnthropic, prev: anth(tools, system, "m", u0, a1, u2), cur: anth(tools, system, "other", u0, a1, u2, a3, u4),
			kind: transcript.BreakConfig, unchanged: lens(tools, system, u0, a1, u2)},
		{name: "codex reordered metadata", api: transcript.APIResponses,
			prev: codex(`{"a":"1","b":"2"}`, addTools, dev, cu0, ca1),
			cur:  codex(`{"b":"2","a":"1"}`, addTools, dev, cu0, ca1, cr2),
			kind: transcript.BreakNone, shared: lens(addTools, dev, cu0, ca1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var prev []byte
			if c.prev != "" {
				prev = []byte(c.prev)
			}
			r, err := transcript.Prefix(c.api, prev, []byte(c.cur))
			if err != nil {
				t.Fatal(err)
			}
			if r.Break.Kind != c.kind {
				t.Errorf("break %+v, want %s", r.Break, c.kind)
			}
			if c.kind == transcript.BreakEdited && r.Break.Index != c.index {
				t.Errorf("break index %d, want %d", r.Break.Index, c.index)
			}
			if c.kind == transcript.BreakSystem && r.Break.Offset != c.offset {
				t.Errorf("break offset %d, want %d", r.Break.Offset, c.offset)
			}
			if r.Shared != c.shared {
				t.Errorf("shared %d bytes, want %d", r.Shared, c.shared)
			}
			var un int64
			for _, s := range r.Unchanged {
				un += s.End - s.Start
			}
			if un != c.unchanged {
				t.Errorf("unchanged %d bytes, want %d", un, c.unchanged)
			}
		})
	}
}

// TestPrefixRefuses: a body that is not of the API's shape is refused,
// invalid, without its content in the message; hostile bytes never panic.
func TestPrefixRefuses(t *testing.T) {
	for _, b := range []string{``, `[]`, `{"messages":"x"}`, `{"messages":[{"role":"user","content":"sekrit"}],"tools":7}`, `{"messages":[]}`, `{"messages":[` + strings.Repeat(`[`, 100)} {
		_, err := transcript.Prefix(transcript.APIAnthropic, []byte(`{"messages":[{"role":"user","content":"hi"}]}`), []byte(b))
		if !errors.Is(err, codec.ErrInvalid) {
			t.Errorf("%q: err %v", b, err)
		}
		if err != nil && strings.Contains(err.Error(), "sekrit") {
			t.Errorf("the error holds content: %v", err)
		}
	}
}

// FuzzPrefix: any two bodies give a result or an error, never a panic,
// and the shared and unchanged bytes lie within the current body.
func FuzzPrefix(f *testing.F) {
	f.Add(transcript.APIAnthropic, `{"system":"s","tools":[{"name":"t"}],"messages":[{"role":"user","content":"hi"}]}`,
		`{"system":"s","tools":[{"name":"t"}],"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{}}]},{"role":"assistant","content":"x"}]}`)
	f.Add(transcript.APIResponses, `{"instructions":null,"input":[{"type":"additional_tools","tools":[]},{"role":"user","content":"a"}]}`,
		`{"input" : [ {"type":"additional_tools","tools":[]} , {"role":"user","content":"a\"]"} ] }`)
	f.Add(transcript.APIChat, `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}]}`,
		`{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"},{"role":"assistant","content":null}]}`)
	f.Fuzz(func(t *testing.T, api, prev, cur string) {
		r, err := transcript.Prefix(api, []byte(prev), []byte(cur))
		if err != nil {
			return
		}
		n := r.Shared
		for _, s := range r.Unchanged {
			if s.Start < 0 || s.End < s.Start || s.End > int64(len(cur)) {
				t.Fatalf("span %+v outside %d bytes", s, len(cur))
			}
			n += s.End - s.Start
		}
		if r.Shared < 0 || n > int64(len(cur)) {
			t.Fatalf("shared %d + unchanged > %d bytes", r.Shared, len(cur))
		}
	})
}

// BenchmarkPrefix compares two Claude Code-sized bodies (about 55 KB: a
// 43 KB system prompt and tools, a growing conversation).
func BenchmarkPrefix(b *testing.B) {
	sys := `"` + strings.Repeat("Follow the rules. ", 1200) + `"`
	var tools []string
	for i := 0; i < 20; i++ {
		tools = append(tools, `{"name":"tool`+string(rune('a'+i))+`","description":"`+strings.Repeat("does things ", 80)+`","input_schema":{"type":"object"}}`)
	}
	var msgs []string
	for i := 0; i < 60; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, `{"role":"`+role+`","content":"`+strings.Repeat("word ", 40)+string(rune('a'+i%26))+`"}`)
	}
	mk := func(n int) []byte {
		return []byte(`{"model":"m","max_tokens":1000,"system":` + sys + `,"tools":[` + strings.Join(tools, ",") + `],"messages":[` + strings.Join(msgs[:n], ",") + `]}`)
	}
	prev, cur := mk(57), mk(59)
	b.SetBytes(int64(len(prev) + len(cur)))
	for b.Loop() {
		if _, err := transcript.Prefix(transcript.APIAnthropic, prev, cur); err != nil {
			b.Fatal(err)
		}
	}
}
