package chunk

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"
)

// The bounds of a chunk (docs/gateway.md#what-is-recorded). Every chunk but the last of a body
// is at least Min and at most Max bytes long; on random bytes the mean is
// about Avg.
const (
	Min = 256
	Avg = 1 << avgBits
	Max = 8 << 10
)

const (
	avgBits = 10
	// A candidate cut before Avg bytes needs avgBits+2 zero bits of the
	// hash, one after needs avgBits-2 (FastCDC's normalized chunking,
	// level 2): lengths gather near Avg instead of spreading
	// geometrically.
	maskSmall = uint64(1<<(avgBits+2)-1) << (64 - (avgBits + 2))
	maskLarge = uint64(1<<(avgBits-2)-1) << (64 - (avgBits - 2))
	// firstCut leaves room to move a cut back to a character start
	// without going below Min.
	firstCut = Min + utf8.UTFMax - 1
	// window is how many bytes a gear hash depends on: each byte's
	// contribution is shifted out after 64 more.
	window = 64
)

// gear is the rolling hash's table: one pseudo-random word per byte value,
// from a fixed seed so that the same bytes always cut the same way.
var gear = func() (t [256]uint64) {
	x := uint64(0x5e55_1010_c4a4_c0de)
	for i := range t {
		// splitmix64
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		t[i] = z ^ z>>31
	}
	return t
}()

// Next returns the length of the first chunk of b: all of b when it is
// at most Min bytes, else a content-defined cut between Min and Max. The
// cut depends only on the 64 bytes before it, so an insertion, deletion
// or move inside a body changes the chunks around it and no others.
func Next(b []byte) int {
	n := len(b)
	if n <= firstCut {
		return n
	}
	limit := min(n, Max)
	normal := min(limit, Avg)
	var h uint64
	i := firstCut - window
	for ; i < firstCut-1; i++ {
		h = h<<1 + gear[b[i]]
	}
	for ; i < normal; i++ {
		h = h<<1 + gear[b[i]]
		if h&maskSmall == 0 {
			return charStart(b, i+1)
		}
	}
	for ; i < limit; i++ {
		h = h<<1 + gear[b[i]]
		if h&maskLarge == 0 {
			return charStart(b, i+1)
		}
	}
	return charStart(b, limit)
}

// charStart moves a cut at c back to the start of the UTF-8 sequence that
// holds b[c], when b[c] continues one that starts at most three bytes
// before; bytes that are not UTF-8 keep the cut where it is.
func charStart(b []byte, c int) int {
	if c >= len(b) {
		return c
	}
	for back := c; back > c-utf8.UTFMax && back > Min; back-- {
		if utf8.RuneStart(b[back]) {
			return back
		}
	}
	return c
}

// PieceMax bounds a piece of an answer (Piece).
const PieceMax = 64 << 10

// Piece returns the length of the first piece of an answer's bytes b: all
// of b when it is at most PieceMax bytes, else PieceMax moved back to the
// nearest UTF-8 character start (as Next's cuts are, so that a piece of a
// valid UTF-8 answer is valid UTF-8). An answer is not cut by content: no
// later body re-sends it, so its bytes would share no chunk, and one event
// per piece stores it with one digest and compresses it whole, where
// ~1 KiB chunks cost a digest and an event each (docs/gateway.md#what-is-recorded).
func Piece(b []byte) int {
	if len(b) <= PieceMax {
		return len(b)
	}
	for back := PieceMax; back > PieceMax-utf8.UTFMax; back-- {
		if utf8.RuneStart(b[back]) {
			return back
		}
	}
	return PieceMax
}

// Split cuts b into its chunks, in order; they share b's memory and
// concatenate to b. A nil or empty b has no chunks.
func Split(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := Next(b)
		out = append(out, b[:n:n])
		b = b[n:]
	}
	return out
}

// Digest is the SHA-256 of b in lower-case hex: a chunk's name, and a
// whole body's digest.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
