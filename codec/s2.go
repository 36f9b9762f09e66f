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
// The block is written by (*s2.Dict).Encode, S2's fastest level: the
// better levels saved 7–10% more (records of 0.309× and 0.453× JSONL
// against 0.332× and 0.505×) but clear a 576 KiB table on every call,
// which made encoding a 1 KB message 5× slower.
func EncodeEventRecord(dst, payload []byte) []byte {
	if len(payload) < CompressMin {
		return EncodeRecord(dst, payload)
	}
	bp := zbufs.Get().(*[]byte)
	z := s2Dict().Encode((*bp)[:0], payload)
	if len(z) >= len(payload) {
		putZbuf(bp, z)
		return EncodeRecord(dst, payload)
	}
	dst = slices.Grow(dst, len(z)+RecordOverhead) // exactly the record: no room for the payload it saved
	start := len(dst)
	dst = append(dst, RecordVersionS2)
	dst = append(dst, z...)
	putZbuf(bp, z)
	return binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
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
