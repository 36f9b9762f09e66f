package chunk_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sessionlog/sessionlog/wire/chunk"
)

// randomBytes returns n pseudo-random bytes from seed.
func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// words returns about n bytes of text from seed: words of a small
// vocabulary with multi-byte characters among them, as prompts and tool
// descriptions are.
func words(seed uint64, n int) string {
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

// checkChunks fails t unless chunks concatenate to b, every chunk but the
// last is within [Min, Max], the last within [1, Max], and, when b is
// valid UTF-8, every chunk is too.
func checkChunks(t *testing.T, b []byte, chunks [][]byte) {
	t.Helper()
	if got := bytes.Join(chunks, nil); !bytes.Equal(got, b) {
		t.Fatalf("chunks of %d bytes concatenate to %d different bytes", len(b), len(got))
	}
	valid := utf8.Valid(b)
	for i, c := range chunks {
		last := i == len(chunks)-1
		if len(c) > chunk.Max || len(c) == 0 || (!last && len(c) < chunk.Min) {
			t.Fatalf("chunk %d of %d is %d bytes", i, len(chunks), len(c))
		}
		if valid && !utf8.Valid(c) {
			t.Fatalf("chunk %d of a valid UTF-8 body is not valid UTF-8 (cut inside a character)", i)
		}
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"one byte", []byte("x")},
		{"at min", bytes.Repeat([]byte("a"), chunk.Min)},
		{"zeros, cut at max", make([]byte, 5*chunk.Max+17)},
		{"random", randomBytes(1, 1<<20)},
		{"text", []byte(words(2, 1<<20))},
		{"four-byte characters only", []byte(strings.Repeat("😀", 40000))},
		{"continuation bytes, not UTF-8", bytes.Repeat([]byte{0x80}, 3*chunk.Max)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks := chunk.Split(tt.in)
			checkChunks(t, tt.in, chunks)
			if again := chunk.Split(bytes.Clone(tt.in)); len(again) != len(chunks) {
				t.Fatalf("split twice: %d then %d chunks", len(chunks), len(again))
			}
		})
	}
}

// TestMean checks that chunks of random bytes are about Avg long.
func TestMean(t *testing.T) {
	b := randomBytes(3, 4<<20)
	chunks := chunk.Split(b)
	if len(chunks) < 2000 {
		t.Fatalf("4 MiB cut into %d chunks; want thousands", len(chunks))
	}
	mean := len(b) / len(chunks)
	if mean < chunk.Avg*3/4 || mean > chunk.Avg*3/2 {
		t.Fatalf("mean chunk %d bytes; want about %d", mean, chunk.Avg)
	}
	t.Logf("%d chunks, mean %d bytes", len(chunks), mean)
}

// TestFrozenBoundaries pins the cut of a fixed input: the boundaries keep
// a session's chunks shared across versions, so a change of the gear table
// or the masks must be deliberate.
func TestFrozenBoundaries(t *testing.T) {
	var lens []string
	for _, c := range chunk.Split(randomBytes(4, 16<<10)) {
		lens = append(lens, strconv.Itoa(len(c)))
	}
	const want = "1382 1113 521 351 1037 1500 1038 1096 1105 1429 1091 1051 998 1142 1433 97"
	if got := strings.Join(lens, " "); got != want {
		t.Fatalf("chunk lengths of the fixed input = %q; want %q", got, want)
	}
}

// stored returns the bytes a session keeps for bodies: each distinct
// chunk once.
func stored(bodies [][]byte) (raw, kept int) {
	seen := map[string]bool{}
	for _, b := range bodies {
		raw += len(b)
		for _, c := range chunk.Split(b) {
			if d := chunk.Digest(c); !seen[d] {
				seen[d] = true
				kept += len(c)
			}
		}
	}
	return raw, kept
}

// TestEdits checks that an insertion, a deletion or an edit in the middle
// of a body changes the chunks around it and no others.
func TestEdits(t *testing.T) {
	base := []byte(words(5, 200<<10))
	mid := len(base) / 2
	for !utf8.RuneStart(base[mid]) {
		mid++
	}
	tests := []struct {
		name string
		b    []byte
	}{
		{"insert", append(append(bytes.Clone(base[:mid]), "inserted text"...), base[mid:]...)},
		{"delete", append(bytes.Clone(base[:mid]), base[mid+100:]...)},
		{"edit", append(append(bytes.Clone(base[:mid]), "XYZ"...), base[mid+3:]...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, kept := stored([][]byte{base, tt.b})
			_, alone := stored([][]byte{base})
			if added := kept - alone; added > 3*chunk.Max || added <= 0 {
				t.Fatalf("the edited body added %d bytes of chunks; want a few chunks' worth", added)
			}
		})
	}
}

// claudeShaped returns n request bodies shaped like Claude Code's: model
// and a growing message list first, then about 43 KB of system prompt and
// tools; the last message carries a cache marker that moves on each
// request, and a one-block message turns back into a plain string when the
// marker leaves it.
func claudeShaped(n int) [][]byte {
	fixed := `"system":[{"type":"text","text":"` + words(10, 12<<10) + `","cache_control":{"type":"ephemeral"}}],` +
		`"tools":[{"name":"Bash","description":"` + words(11, 31<<10) + `","input_schema":{"type":"object"}}],` +
		`"metadata":{"user_id":"u1"},"thinking":{"type":"enabled","budget_tokens":1024},"stream":true}`
	var msgs []string
	var bodies [][]byte
	for i := range n {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, `{"role":"`+role+`","content":`+strconv.Quote(words(uint64(100+i), 1500))+`}`)
		last := msgs[len(msgs)-1]
		text := last[strings.Index(last, `"content":`)+len(`"content":`) : len(last)-1]
		marked := `{"role":"` + role + `","content":[{"type":"text","text":` + text + `,"cache_control":{"type":"ephemeral"}}]}`
		all := append(append([]string(nil), msgs[:len(msgs)-1]...), marked)
		bodies = append(bodies, []byte(`{"model":"claude-x","messages":[`+strings.Join(all, ",")+`],`+fixed))
	}
	return bodies
}

// codexShaped returns n request bodies shaped like Codex's: an input list
// that only grows, then a client_metadata map whose keys come in another
// order each time.
func codexShaped(n int) [][]byte {
	input := []string{`{"type":"additional_tools","tools":"` + words(20, 18<<10) + `"}`,
		`{"type":"message","role":"developer","content":"` + words(21, 20<<10) + `"}`}
	keys := []string{`"a":"1"`, `"b":"2"`, `"c":"3"`, `"d":"4"`, `"e":"5"`}
	var bodies [][]byte
	for i := range n {
		input = append(input, `{"type":"message","role":"user","content":`+strconv.Quote(words(uint64(200+i), 1200))+`}`)
		k := append([]string(nil), keys...)
		r := rand.New(rand.NewPCG(uint64(i), 3))
		r.Shuffle(len(k), func(a, b int) { k[a], k[b] = k[b], k[a] })
		bodies = append(bodies, []byte(`{"model":"gpt-x","input":[`+strings.Join(input, ",")+
			`],"stream":true,"prompt_cache_key":"s1","client_metadata":{`+strings.Join(k, ",")+`}}`))
	}
	return bodies
}

// TestSessions checks the gateway's storage target on the requests of
// 50-step sessions shaped like the two agents': each shared byte stored
// once, so that the chunks kept are at most 8% of the bytes sent.
func TestSessions(t *testing.T) {
	for _, tt := range []struct {
		name   string
		bodies [][]byte
	}{
		{"claude-code", claudeShaped(50)},
		{"codex", codexShaped(50)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw, kept := stored(tt.bodies)
			if raw < 50*40<<10 {
				t.Fatalf("the session sent %d bytes; want 50 bodies of over 40 KiB", raw)
			}
			ratio := float64(kept) / float64(raw)
			t.Logf("%d bytes sent, %d kept: %.4f", raw, kept, ratio)
			if ratio > 0.08 {
				t.Fatalf("kept %.4f of the bytes sent; want at most 0.08", ratio)
			}
		})
	}
}

func BenchmarkNext(b *testing.B) {
	data := randomBytes(6, 4<<20)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		for rest := data; len(rest) > 0; {
			rest = rest[chunk.Next(rest):]
		}
	}
}

// ExampleSplit stores two versions of a body, the second with a line
// edited in the middle: only the chunk around the edit is new.
func ExampleSplit() {
	var sb strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&sb, "message %d says %x\n", i, i*i)
	}
	first := sb.String()
	second := strings.Replace(first, "message 1000 says", "message 1000 now says", 1)

	seen := map[string]bool{}
	for _, c := range chunk.Split([]byte(first)) {
		seen[chunk.Digest(c)] = true
	}
	total, added := 0, 0
	for _, c := range chunk.Split([]byte(second)) {
		total++
		if !seen[chunk.Digest(c)] {
			added++
		}
	}
	fmt.Printf("%d chunks in the first body; the second's %d chunks add %d\n", len(seen), total, added)
	// Output: 42 chunks in the first body; the second's 42 chunks add 1
}
