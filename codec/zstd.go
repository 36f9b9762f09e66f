package codec

import (
	_ "embed" // the dictionary
	"encoding/binary"
	"hash/crc32"
	"sync"

	"github.com/cockroachdb/errors"
	"github.com/klauspost/compress/zstd"
)

// CompressMin is the least payload size EncodeEventRecord tries to
// compress. Part of no format (a reader takes either version at any size),
// only of what this code writes. Measured (2026-12-01, this dictionary,
// SpeedFastest, literals left raw): compressing payloads of at least 32,
// 64, 128 bytes gives records of 0.361×, 0.367×, 0.611× JSONL for the
// 100,000-event generated session and 0.509×, 0.510×, 0.601× for the DSH
// corpus; under 32 bytes the frame's own 10 bytes (magic, header,
// dictionary id, block header) leave nothing to save. Every event is tried
// because most events are small: the generated session's median payload
// is 107 bytes, the corpus's 106.
const CompressMin = 32

// DictionaryID is the zstd dictionary id of codec/zstd.dict, written in
// the frame header of every version 2 record. Part of the on-disk format:
// frozen with the dictionary ("SL01"; ids under 32768 are reserved by
// zstd).
const DictionaryID = 0x534c3031

// RecordVersionZstd is the format-version byte of a compressed record: its
// body is one zstd frame of the payload, compressed with the dictionary.
const RecordVersionZstd byte = 2

// dictionary is the zstd dictionary of version 2 records, trained on
// generated sessions only (codec/internal/gendict). Frozen.
//
//go:embed zstd.dict
var dictionary []byte

// zstdLevel is the level EncodeEventRecord compresses with, literals left
// raw (WithNoEntropyCompression). Measured on the same data as CompressMin:
// with the dictionary, the records of small events are mostly matches
// against it, and Huffman-coding the literals too made the DSH corpus's
// records 0.455× JSONL instead of 0.509× (the generated session's 0.361×
// either way) but made decompressing a 1 KB assistant/message 6× slower
// (4.1 µs against 0.68 µs), which costs the decode target against
// encoding/json. Levels above SpeedFastest saved 1–5% more and took 1.5–3×
// longer to encode. The output of a level is a function of the input only.
const zstdLevel = zstd.SpeedFastest

// Without a dictionary, records were 0.707× JSONL for the generated
// session and 0.595× for the corpus (SpeedDefault, entropy coded): a
// record of a 100-byte event has nothing to match but itself. The
// dictionary, trained on generated sessions only, makes them 0.361× and
// 0.509×: 49% and 14% smaller.

// coders holds the shared zstd encoder and decoder. EncodeAll and
// DecodeAll are safe for concurrent use and keep their state in internal
// pools, so one of each serves every goroutine.
var coders = sync.OnceValues(func() (*zstd.Encoder, *zstd.Decoder) {
	enc, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstdLevel),
		zstd.WithEncoderDict(dictionary),
		zstd.WithEncoderCRC(false), // the record's CRC32C covers the frame
		zstd.WithNoEntropyCompression(true),
		zstd.WithSingleSegment(true),
		zstd.WithZeroFrames(true))
	if err != nil {
		panic("codec: the embedded zstd dictionary does not load: " + err.Error())
	}
	dec, err := zstd.NewReader(nil,
		zstd.WithDecoderDicts(dictionary),
		zstd.WithDecoderMaxMemory(MaxRecord),
		zstd.WithDecodeAllCapLimit(true),
		zstd.WithDecoderConcurrency(0))
	if err != nil {
		panic("codec: the embedded zstd dictionary does not load: " + err.Error())
	}
	return enc, dec
})

// zbufs holds scratch buffers for the compressed frame.
var zbufs = sync.Pool{New: func() any { return new([]byte) }}

// EncodeEventRecord frames an event payload for storage: as a version 2
// record (a zstd frame of the payload, with the dictionary) when the
// payload has at least CompressMin bytes and the frame is smaller than the
// payload, else as EncodeRecord does (version 1). The output depends on
// the payload only: the same payload gives the same bytes in every process
// and on every backend.
//
//	+---------+--------------------------+------------------------------+
//	| ver=2   | zstd frame: single       | CRC32C(ver‖frame), BE        |
//	| 1 byte  | segment, content size,   | 4 bytes                      |
//	|         | dictionary id, no xxhash |                              |
//	+---------+--------------------------+------------------------------+
func EncodeEventRecord(dst, payload []byte) []byte {
	if len(payload) < CompressMin {
		return EncodeRecord(dst, payload)
	}
	enc, _ := coders()
	bp := zbufs.Get().(*[]byte)
	z := enc.EncodeAll(payload, (*bp)[:0])
	if len(z) >= len(payload) {
		*bp = z
		zbufs.Put(bp)
		return EncodeRecord(dst, payload)
	}
	start := len(dst)
	dst = append(dst, RecordVersionZstd)
	dst = append(dst, z...)
	*bp = z
	zbufs.Put(bp)
	return binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// inflate decompresses the zstd frame z of a version 2 record into a new
// buffer of at most max bytes. The frame must declare its content size,
// which is checked against max before anything is allocated (a frame that
// claims a huge size is refused, never allocated), and must decode to
// exactly that size. Failures are marked ErrCorrupt.
func inflate(z []byte, max int) ([]byte, error) {
	var h zstd.Header
	if err := h.Decode(z); err != nil {
		return nil, corruptf("codec: compressed record: bad zstd frame header: %s", errors.Safe(err.Error()))
	}
	switch {
	case h.Skippable || !h.HasFCS:
		return nil, corruptf("codec: compressed record: zstd frame has no content size")
	case h.DictionaryID != DictionaryID:
		return nil, corruptf("codec: compressed record: zstd dictionary %d is not %d",
			errors.Safe(h.DictionaryID), errors.Safe(uint32(DictionaryID)))
	case h.FrameContentSize > uint64(max):
		return nil, corruptf("codec: compressed record declares %d bytes, over the %d byte cap",
			errors.Safe(h.FrameContentSize), errors.Safe(max))
	case h.FrameContentSize == 0:
		return nil, corruptf("codec: compressed record is empty")
	}
	_, dec := coders()
	out, err := dec.DecodeAll(z, make([]byte, 0, h.FrameContentSize))
	if err != nil {
		return nil, corruptf("codec: compressed record does not decompress: %s", errors.Safe(err.Error()))
	}
	if uint64(len(out)) != h.FrameContentSize {
		return nil, corruptf("codec: compressed record decodes to %d bytes, its frame declares %d",
			errors.Safe(len(out)), errors.Safe(h.FrameContentSize))
	}
	return out, nil
}
