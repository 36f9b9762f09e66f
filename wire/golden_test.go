package wire_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/wire"
)

// TestSSE runs the golden SSE streams under testdata/sse:
//
//	translate wire=NAME [crlf]
//	    input: the body of an answer, as a server sends it (crlf: with
//	    \r\n line ends). Prints the chunks, one per line, then "end" or
//	    the error. The stream is fed whole, byte by byte and in random
//	    splits; all three must print the same.
//
// Regenerate with -rewrite, and review the result like code.
func TestSSE(t *testing.T) {
	datadriven.Walk(t, "testdata/sse", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "translate" {
				t.Fatalf("unknown command %s", d.Cmd)
			}
			var name string
			d.ScanArgs(t, "wire", &name)
			r, ok := translators()[name]
			if !ok {
				t.Fatalf("no translator named %s", name)
			}
			in := d.Input + "\n"
			if d.HasArg("crlf") {
				in = strings.ReplaceAll(in, "\n", "\r\n")
			}
			whole := translate(r, [][]byte{[]byte(in)})
			var bytewise [][]byte
			for i := range len(in) {
				bytewise = append(bytewise, []byte(in[i:i+1]))
			}
			if got := translate(r, bytewise); got != whole {
				t.Fatalf("byte by byte:\n%s\nwhole:\n%s", got, whole)
			}
			rng := rand.New(rand.NewSource(int64(len(in))))
			for k := 0; k < 20; k++ {
				var parts [][]byte
				for rest := in; len(rest) > 0; {
					n := min(1+rng.Intn(24), len(rest))
					parts = append(parts, []byte(rest[:n]))
					rest = rest[n:]
				}
				if got := translate(r, parts); got != whole {
					t.Fatalf("random split:\n%s\nwhole:\n%s", got, whole)
				}
			}
			return whole
		})
	})
}

// translators lists every stream translator by its API's name: the
// renderers' and openai-responses (docs/gateway.md#what-is-recorded), which has none.
func translators() map[string]func() *wire.Translator {
	out := map[string]func() *wire.Translator{"openai-responses": wire.NewResponsesTranslator}
	for _, name := range wire.Names() {
		r, _ := wire.Lookup(name)
		out[name] = r.NewTranslator
	}
	return out
}

// translate feeds parts to a new translator and prints what it made.
func translate(r func() *wire.Translator, parts [][]byte) string {
	tr := r()
	var chunks []wire.Chunk
	var err error
	for _, p := range parts {
		if chunks, err = tr.Feed(chunks, p); err != nil {
			break
		}
	}
	if err == nil {
		chunks, err = tr.End(chunks)
	}
	return printChunks(chunks, err)
}

// printChunks prints chunks one per line, then "end" or the error.
func printChunks(chunks []wire.Chunk, err error) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString(chunkLine(c))
		b.WriteByte('\n')
	}
	if err != nil {
		fmt.Fprintf(&b, "error %v\n", err)
	} else {
		b.WriteString("end\n")
	}
	return b.String()
}

func quote(s string) string { return string(codec.AppendJSONString(nil, []byte(s))) }

func chunkLine(c wire.Chunk) string {
	switch c.Type {
	case wire.ChunkBlockStart:
		return fmt.Sprintf("%s %d %s", c.Type, c.Index, c.BlockType)
	case wire.ChunkTextDelta, wire.ChunkReasoningDelta:
		return fmt.Sprintf("%s %d %s", c.Type, c.Index, quote(c.Text))
	case wire.ChunkToolCallDelta:
		return fmt.Sprintf("%s %d id=%s name=%s args=%s", c.Type, c.Index, c.ID, c.Name, quote(c.ArgumentsDelta))
	case wire.ChunkBlockEnd:
		return fmt.Sprintf("%s %d %s", c.Type, c.Index, c.Block)
	case wire.ChunkUsage:
		u := c.Usage
		return fmt.Sprintf("%s in=%d out=%d cacheRead=%d cacheWrite=%d reasoning=%d", c.Type,
			u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens)
	case wire.ChunkFinish:
		return fmt.Sprintf("%s %s", c.Type, c.Reason)
	}
	return "unknown " + c.Type
}

// TestRender runs the golden bodies under testdata/render:
//
//	render wire=NAME
//	    input: line 1 the header in force (JSON), line 2 the canonical
//	    request. Prints the method, path and fields, then the body or the
//	    error.
func TestRender(t *testing.T) {
	datadriven.Walk(t, "testdata/render", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var name string
			d.ScanArgs(t, "wire", &name)
			r, err := wire.Lookup(name)
			if err != nil {
				return "error " + err.Error() + "\n"
			}
			hdrJSON, reqJSON, _ := strings.Cut(d.Input, "\n")
			mp, err := codec.FromJSON(nil, []byte(hdrJSON), codec.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			h, err := header.Decode(mp)
			if err != nil {
				t.Fatal(err)
			}
			req, err := r.Render([]byte(reqJSON), &h)
			if err != nil {
				return "error " + err.Error() + "\n"
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%s %s\n", req.Method, req.Path)
			for _, f := range req.Header {
				fmt.Fprintf(&b, "%s: %s\n", f.Name, f.Value)
			}
			fmt.Fprintf(&b, "%s: %sKEY\n%s\n", req.KeyHeader, req.KeyPrefix, req.Body)
			return b.String()
		})
	})
}
