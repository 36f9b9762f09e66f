package ssegen

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// Text returns about n bytes of text from seed: words of a small
// vocabulary with multi-byte characters among them, as prompts and tool
// descriptions are.
func Text(seed uint64, n int) string {
	vocab := []string{"the", "file", "function", "returns", "é", "naïve", "→", "日本語", "tool", "call",
		"error", "😀", "path", "value", "strings", "{\"k\":1}", "\\n", "result", "context", "cache"}
	r := rand.New(rand.NewPCG(seed, 2))
	var sb strings.Builder
	for sb.Len() < n {
		sb.WriteString(vocab[r.IntN(len(vocab))])
		sb.WriteByte(' ')
	}
	return sb.String()
}

// ClaudeRequests returns n request bodies shaped like Claude Code's: model
// and a growing message list first, then about 43 KB of system prompt and
// tools; the last message carries a cache marker that moves on each
// request, and a one-block message turns back into a plain string when the
// marker leaves it.
func ClaudeRequests(n int) [][]byte {
	fixed := `"system":[{"type":"text","text":` + strconv.Quote(Text(10, 12<<10)) + `,"cache_control":{"type":"ephemeral"}}],` +
		`"tools":[{"name":"Bash","description":` + strconv.Quote(Text(11, 31<<10)) + `,"input_schema":{"type":"object"}}],` +
		`"metadata":{"user_id":"u1"},"thinking":{"type":"enabled","budget_tokens":1024},"stream":true}`
	var msgs []string
	var bodies [][]byte
	for i := range n {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, `{"role":"`+role+`","content":`+strconv.Quote(Text(uint64(100+i), 1500))+`}`)
		last := msgs[len(msgs)-1]
		text := last[strings.Index(last, `"content":`)+len(`"content":`) : len(last)-1]
		marked := `{"role":"` + role + `","content":[{"type":"text","text":` + text + `,"cache_control":{"type":"ephemeral"}}]}`
		all := append(append([]string(nil), msgs[:len(msgs)-1]...), marked)
		bodies = append(bodies, []byte(`{"model":"claude-x","messages":[`+strings.Join(all, ",")+`],`+fixed))
	}
	return bodies
}

// CodexRequests returns n request bodies shaped like Codex's: an input list
// that only grows, then a client_metadata map whose keys come in another
// order each time.
func CodexRequests(n int) [][]byte {
	input := []string{`{"type":"additional_tools","tools":[{"type":"function","name":"exec_command","description":` +
		strconv.Quote(Text(20, 18<<10)) + `,"parameters":{"type":"object"}}]}`,
		`{"type":"message","role":"developer","content":` + strconv.Quote(Text(21, 20<<10)) + `}`}
	keys := []string{`"a":"1"`, `"b":"2"`, `"c":"3"`, `"d":"4"`, `"e":"5"`}
	var bodies [][]byte
	for i := range n {
		input = append(input, `{"type":"message","role":"user","content":`+strconv.Quote(Text(uint64(200+i), 1200))+`}`)
		k := append([]string(nil), keys...)
		r := rand.New(rand.NewPCG(uint64(i), 3))
		r.Shuffle(len(k), func(a, b int) { k[a], k[b] = k[b], k[a] })
		bodies = append(bodies, []byte(`{"model":"gpt-x","input":[`+strings.Join(input, ",")+
			`],"stream":true,"prompt_cache_key":"s1","client_metadata":{`+strings.Join(k, ",")+`}}`))
	}
	return bodies
}
