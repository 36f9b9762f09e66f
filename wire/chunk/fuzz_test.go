package chunk_test

import (
	"bytes"
	"testing"

	"github.com/sessionlog/sessionlog/internal/ssegen"
	"github.com/sessionlog/sessionlog/wire/chunk"
)

// FuzzSplit checks the cut's contract on any bytes: the chunks concatenate
// to the input, keep their bounds, never cut a valid UTF-8 input inside a
// character, and cutting the rest after a chunk gives the same chunks
// (the cut depends on nothing but the bytes).
func FuzzSplit(f *testing.F) {
	f.Add([]byte(nil))
	f.Add([]byte(ssegen.Text(7, 3*chunk.Max)))
	f.Add(randomBytes(8, 2*chunk.Max))
	f.Add(bytes.Repeat([]byte("é"), chunk.Max))
	f.Fuzz(func(t *testing.T, b []byte) {
		chunks := chunk.Split(b)
		checkChunks(t, b, chunks)
		if len(chunks) > 1 {
			rest := chunk.Split(b[len(chunks[0]):])
			if len(rest) != len(chunks)-1 {
				t.Fatalf("the chunks after the first: %d; split alone: %d", len(chunks)-1, len(rest))
			}
		}
	})
}
