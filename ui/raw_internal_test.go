package ui

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
)

// TestStreamJSON checks that streaming a stored value writes exactly the
// bytes codec.ToJSON appends, for strings longer than a chunk whose
// multi-byte characters, escapes and lone surrogates straddle the chunk
// boundaries, and that it refuses what ToJSON refuses.
func TestStreamJSON(t *testing.T) {
	lone := "\xed\xa0\x80" // a lone high surrogate, as WTF-8
	var texts []string
	for pad := 0; pad < 4; pad++ {
		for _, c := range []string{"é", "€", "😀", lone, "\n", `"`, "\\", "\x01", "<"} {
			texts = append(texts, strings.Repeat("a", streamChunk-pad)+strings.Repeat(c, 3)+strings.Repeat("b", streamChunk+pad))
		}
	}
	texts = append(texts, "", "plain", strings.Repeat("😀", 3*streamChunk))
	for i, text := range texts {
		var mp []byte
		mp = codec.AppendMapHeader(mp, 4)
		mp = codec.AppendString(mp, "type")
		mp = codec.AppendString(mp, "tool/result")
		mp = codec.AppendString(mp, text) // a key can be long too
		mp = codec.AppendArrayHeader(mp, 5)
		mp = codec.AppendString(mp, text)
		mp = codec.AppendInt(mp, -1<<60)
		mp = codec.AppendFloat(mp, 1e-7)
		mp = codec.AppendBool(mp, true)
		mp = codec.AppendNil(mp)
		mp = codec.AppendString(mp, "empty")
		mp = codec.AppendMapHeader(mp, 0)
		mp = codec.AppendString(mp, "list")
		mp = codec.AppendArrayHeader(mp, 0)
		want, n, err := codec.ToJSON(nil, mp)
		if err != nil || n != len(mp) {
			t.Fatalf("text %d: ToJSON: %v", i, err)
		}
		var got bytes.Buffer
		bw := bufio.NewWriter(&got)
		if err := streamJSON(bw, mp); err != nil {
			t.Fatalf("text %d: %v", i, err)
		}
		bw.Flush()
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("text %d: streamed JSON differs from ToJSON (%d and %d bytes)", i, got.Len(), len(want))
		}
	}
	mp := codec.AppendArrayHeader(nil, 2)
	mp = codec.AppendString(mp, "one")
	if err := streamJSON(nopWriter{}, mp); err == nil {
		t.Error("a truncated value streamed")
	}
	if err := streamJSON(nopWriter{}, append(codec.AppendNil(nil), 0xc0)); err == nil {
		t.Error("a value with trailing bytes streamed")
	}
}
