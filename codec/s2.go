package codec

import (
	_ "embed" // the dictionary
	"encoding/binary"
	"hash/crc32"
	"slices"
	"sync"

	"github.com/cockroachdb/errors"
	"github.com/klauspost/compress/s2"
)

// CompressMin is the least payload size EncodeEventRecord tries to
// compress. Part of no format (a reader takes either version at any size),
// only of what this code writes. Every event is tried because most events
// are small: the generated session's median payload is 107 bytes, the DSH
// corpus's 106. 32 was chosen for zstd frames, whose 10 bytes of header
// left nothing to save below it; an S2 block's header is a 1–2 byte
// length, so a lower threshold may pay (not measured).
const CompressMin = 32

// BetterMin is the least payload size EncodeEventRecord compresses with
// S2's better level. Like CompressMin, part of no format, only of what
// this code writes (the output still depends on the payload only). At
// 16 KiB the recording gateway's 50-request sessions went from 0.0808 to
// 0.0779 (Claude Code's shape) and from 0.0805 to 0.0773 (Codex's) of the
// bytes sent and answered; a 1 KiB threshold saved more (0.069, 0.072)
// at 14× the encode time of each small event.
const BetterMin = 16 << 10

// RecordVersionS2 is the format-version byte of a compressed record: its
// body is one S2 block of the payload, compressed with the dictionary.
const RecordVersionS2 byte = 2

// dictionary is the S2 dictionary of version 2 records, built from
// generated sessions only (codec/internal/gendict). Frozen: a version 2
// record can only be read with the same bytes.
//
//go:embed s2.dict
var dictionary []byte

// s2Dict is the parsed dictionary. A *s2.Dict is safe for concurrent use:
// its encoder tables are built once and only read after.
var s2Dict = sync.OnceValue(func() *s2.Dict {
	d := s2.NewDict(dictionary)
	if d == nil {
		panic("codec: the embedded s2 dictionary does not load")
	}
	return d
})

// zbufs holds scratch buffers for the compressed block.
var zbufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooled is the largest scratch buffer zbufs keeps. The block needs
// room for s2.MaxEncodedLen of the payload: one grown for a long answer
// is left to the collector, not held through the next collections.
const maxPooled = 256 << 10

// putZbuf returns z's buffer to zbufs, unless it is too large to keep.
func putZbuf(bp *[]byte, z []byte) {
	if cap(z) > maxPooled {
		return
	}
	*bp = z
	zbufs.Put(bp)
}

// EncodeEventRecord frames an event payload for storage: as a version 2
// record (an S2 block of the payload, with the dictionary) when the
// payload has at least CompressMin bytes and the block is smaller than the
// payload, else as EncodeRecord does (version 1). The output depends on
// the payload only: the same payload gives the same bytes in every process
// and on every backend.
//
//	+---------+--------------------------+------------------------------+
//	| ver=2   | S2 block: uvarint        | CRC32C(ver‖block), BE        |
//	| 1 byte  | decoded length, then     | 4 bytes                      |
//	|         | literals and copies      |                              |
//	+---------+--------------------------+------------------------------+
//
// The block is written by (*s2.Dict).Encode, S2's fastest level, for a
// payload under BetterMin: the better level saved 7–10% more (records of
// 0.309× and 0.453× JSONL against 0.332× and 0.505×) but clears a 576 KiB
// table on every call, which made encoding a 1 KB message 5–14× slower.
// A payload of BetterMin or more (a wire chunk, an answer's piece, a
// header snapshot, a long tool result) is written by EncodeBetter, where
// that clear is paid once for many bytes: 13–15% smaller blocks at 3–4×
// the encode time (see BetterMin).
func EncodeEventRecord(dst, payload []byte) []byte {
	z, bp := compress(payload)
	if z == nil {
		return EncodeRecord(dst, payload)
	}
	dst = slices.Grow(dst, len(z)+RecordOverhead) // exactly the record: no room for the payload it saved
	start := len(dst)
	dst = append(dst, RecordVersionS2)
	dst = append(dst, z...)
	putZbuf(bp, z)
	return binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// compress returns the S2 block EncodeEventRecord stores for payload (see
// there for the levels), in a buffer of zbufs that the caller gives back
// with putZbuf(bp, z); or nil when payload is stored as it is: shorter
// than CompressMin, or no smaller compressed.
func compress(payload []byte) (z []byte, bp *[]byte) {
	if len(payload) < CompressMin {
		return nil, nil
	}
	bp = zbufs.Get().(*[]byte)
	if len(payload) >= BetterMin {
		buf := *bp
		if n := s2.MaxEncodedLen(len(payload)); cap(buf) < n {
			buf = make([]byte, n)
		}
		z = s2Dict().EncodeBetter(buf[:cap(buf)], payload)
	} else {
		z = s2Dict().Encode((*bp)[:0], payload)
	}
	if len(z) >= len(payload) {
		putZbuf(bp, z)
		return nil, nil
	}
	return z, bp
}

// inflate decompresses the S2 block z of a version 2 record into a new
// buffer of at most max bytes. The block's declared length is checked
// against max before anything is allocated (a block that claims a huge
// size is refused, never allocated), and the block must decode to exactly
// that length. Failures are marked ErrCorrupt.
func inflate(z []byte, max int) ([]byte, error) {
	n, err := s2.DecodedLen(z)
	switch {
	case err != nil:
		return nil, corruptf("codec: compressed record: bad s2 block length: %s", errors.Safe(err.Error()))
	case n > max:
		return nil, corruptf("codec: compressed record declares %d bytes, over the %d byte cap",
			errors.Safe(n), errors.Safe(max))
	case n == 0:
		return nil, corruptf("codec: compressed record is empty")
	}
	out, err := s2Dict().Decode(make([]byte, n), z)
	if err != nil {
		return nil, corruptf("codec: compressed record does not decompress: %s", errors.Safe(err.Error()))
	}
	if len(out) != n {
		return nil, corruptf("codec: compressed record decodes to %d bytes, its block declares %d",
			errors.Safe(len(out)), errors.Safe(n))
	}
	return out, nil
}
