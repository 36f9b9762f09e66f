package wire_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/internal/ssegen"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/wire"
)

// benchRequest builds a request of about size bytes: a system prompt,
// tools, and a conversation of user prompts, assistant text and tool
// calls, and tool results.
func benchRequest(tb testing.TB, size int) (header.Snapshot, [][]byte) {
	mp, err := codec.FromJSON(nil, []byte(`{"config":{"provider":"p","model":"m","wire":"openai-chat","maxTokens":4096},"system":"You are a coding agent.\nBe brief.","tools":[{"name":"read","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}]}`), codec.Limits{})
	if err != nil {
		tb.Fatal(err)
	}
	h, err := header.Decode(mp)
	if err != nil {
		tb.Fatal(err)
	}
	var msgs [][]byte
	total := 0
	for i := 0; total < size; i++ {
		var m string
		switch i % 4 {
		case 0:
			m = fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":"Please fix the bug in file %d, \"quoted\" <b>."}]}`, i)
		case 1:
			m = fmt.Sprintf(`{"role":"assistant","content":[{"type":"reasoning","text":"Look at it."},{"type":"tool-call","id":"call_%d","name":"read","arguments":"{\"path\":\"src/f%d.go\"}"}],"provenance":{"provider":"p","model":"m"}}`, i, i)
		case 2:
			m = fmt.Sprintf(`{"role":"user","content":[{"type":"tool-result","toolCallId":"call_%d","content":[{"type":"text","text":"package main\n\nfunc main() {\n\tprintln(%d)\n}\n"}],"isError":false}]}`, i-1, i)
		default:
			m = `{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("Fixed it. ", 8) + `"}],"provenance":{"provider":"p","model":"m"}}`
		}
		msgs = append(msgs, []byte(m))
		total += len(m) + 1
	}
	return h, msgs
}

func BenchmarkRender(b *testing.B) {
	for _, size := range []int{1 << 10, 100 << 10} {
		h, msgs := benchRequest(b, size)
		req := rebuild.AppendRequest(nil, &h, msgs, "session")
		b.Run(fmt.Sprintf("build/%dKB", size>>10), func(b *testing.B) {
			var buf []byte
			b.SetBytes(int64(len(req)))
			for b.Loop() {
				buf = rebuild.AppendRequest(buf[:0], &h, msgs, "session")
			}
		})
		for _, name := range wire.Names() {
			r, _ := wire.Lookup(name)
			b.Run(fmt.Sprintf("%s/%dKB", name, size>>10), func(b *testing.B) {
				var buf []byte
				b.SetBytes(int64(len(req)))
				for b.Loop() {
					var err error
					if buf, err = r.AppendBody(buf[:0], req, &h); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkTranslate feeds a 4 MB stream of each API in 32 KB reads.
func BenchmarkTranslate(b *testing.B) {
	for _, name := range wire.Names() {
		r, _ := wire.Lookup(name)
		stream := ssegen.OpenAI(4 << 20)
		if name == wire.AnthropicMessages {
			stream = ssegen.Anthropic(4 << 20)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			var chunks []wire.Chunk
			for b.Loop() {
				t := r.NewTranslator()
				var err error
				for p := stream; len(p) > 0; {
					n := min(len(p), 32<<10)
					if chunks, err = t.Feed(chunks[:0], p[:n]); err != nil {
						b.Fatal(err)
					}
					p = p[n:]
				}
				if chunks, err = t.End(chunks[:0]); err != nil || !t.Done() {
					b.Fatalf("the stream did not end: %v", err)
				}
			}
		})
	}
}
