package chunk_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sessionlog/sessionlog/internal/ssegen"
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
		{"text", []byte(ssegen.Text(2, 1<<20))},
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
	base := []byte(ssegen.Text(5, 200<<10))
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

// TestSessions checks the gateway's storage target on the requests of
// 50-step sessions shaped like the two agents': each shared byte stored
// once, so that the chunks kept are at most 8% of the bytes sent.
func TestSessions(t *testing.T) {
	for _, tt := range []struct {
		name   string
		bodies [][]byte
	}{
		{"claude-code", ssegen.ClaudeRequests(50)},
		{"codex", ssegen.CodexRequests(50)},
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

// TestPiece: an answer's pieces are PieceMax bytes, less the bytes of a
// character that straddles the cut (so each piece of UTF-8 is UTF-8);
// bytes that are not UTF-8 are cut at PieceMax; at most PieceMax is one
// piece.
func TestPiece(t *testing.T) {
	euro := "€" // 3 bytes
	for _, tt := range []struct {
		name string
		b    []byte
		want int
	}{
		{"empty", nil, 0},
		{"short", []byte("event: ping\n\n"), 13},
		{"exactly PieceMax", bytes.Repeat([]byte("a"), chunk.PieceMax), chunk.PieceMax},
		{"ASCII", bytes.Repeat([]byte("a"), chunk.PieceMax+1), chunk.PieceMax},
		{"a character across the cut", []byte(strings.Repeat("a", chunk.PieceMax-1) + euro), chunk.PieceMax - 1},
		{"a character ending at the cut", []byte(strings.Repeat("a", chunk.PieceMax-3) + euro + "b"), chunk.PieceMax},
		{"4-byte character", []byte(strings.Repeat("a", chunk.PieceMax-2) + "😀"), chunk.PieceMax - 2},
		{"not UTF-8", bytes.Repeat([]byte{0x80}, chunk.PieceMax+10), chunk.PieceMax},
	} {
		if got := chunk.Piece(tt.b); got != tt.want {
			t.Errorf("%s: Piece = %d, want %d", tt.name, got, tt.want)
		}
	}
	answer := ssegen.Anthropic(300 << 10)
	for b := answer; len(b) > 0; {
		n := chunk.Piece(b)
		if n == 0 || n > chunk.PieceMax || !utf8.Valid(b[:n]) {
			t.Fatalf("a piece of %d bytes, valid UTF-8 %v", n, utf8.Valid(b[:n]))
		}
		b = b[n:]
	}
}
