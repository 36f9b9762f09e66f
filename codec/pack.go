package codec

import (
	"encoding/binary"
	"hash/crc32"
	"slices"

	"github.com/cockroachdb/errors"
)

// RecordVersionPack is the format-version byte of a pack: the payloads of
// several consecutive events in one frame, compressed together.
const RecordVersionPack byte = 3

// PackTarget is the size, before compression, up to which a writer fills
// a pack (AppendPack's caller decides; part of no format, a reader takes
// packs of any size up to MaxRecord). Measured on the DSH corpus
// (2026-12-01): S2 with the dictionary stores events at 0.505× their JSONL
// one by one, and at 0.337×, 0.326× and 0.319× in packs of 2, 4 and 8 KiB;
// the larger the pack, the more a reader of one event decompresses and the
// more a writer re-compresses when it adds an event to the last pack.
const PackTarget = 4 << 10

// MaxPack bounds a pack's size when decoding. A writer puts an event
// larger than PackTarget in a pack of its own, so a pack holds at most one
// payload of up to MaxRecord-5 bytes (the most a record holds) with its
// length; S2 adds a few bytes to what does not compress.
const MaxPack = MaxRecord + 1<<16

// AppendPack frames payloads, the payloads of consecutive events, as one
// pack and appends it to dst:
//
//	+---------+-------------+-----------------------------+-----------------+
//	| ver=3   | uvarint n   | S2 block, with the          | CRC32C of all   |
//	| 1 byte  | events      | dictionary, of n × (uvarint | before it, BE   |
//	|         |             | length ‖ payload)           | 4 bytes         |
//	+---------+-------------+-----------------------------+-----------------+
//
// raw is scratch space for the uncompressed block; AppendPack returns it
// for reuse. The output depends on the payloads only. payloads must not
// be empty.
func AppendPack(dst, raw []byte, payloads [][]byte) (out, scratch []byte) {
	z, bp, raw := packBlock(raw, payloads)
	dst = slices.Grow(dst, 1+binary.MaxVarintLen64+len(z)+4) // one allocation
	start := len(dst)
	dst = append(dst, RecordVersionPack)
	dst = binary.AppendUvarint(dst, uint64(len(payloads)))
	dst = append(dst, z...)
	putZbuf(bp, z)
	return binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli)), raw
}

// packBlock returns the S2 block of a pack of payloads, in a buffer of
// zbufs that the caller gives back with putZbuf(bp, z), and the
// uncompressed block, written over raw.
func packBlock(raw []byte, payloads [][]byte) (z []byte, bp *[]byte, scratch []byte) {
	raw = raw[:0]
	for _, p := range payloads {
		raw = binary.AppendUvarint(raw, uint64(len(p)))
		raw = append(raw, p...)
	}
	bp = zbufs.Get().(*[]byte)
	return s2Dict().Encode((*bp)[:0], raw), bp, raw
}

// PackSize is the number of bytes payload adds to a pack before
// compression: what a writer sums against PackTarget.
func PackSize(payload []byte) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], uint64(len(payload))) + len(payload)
}

// IsPack reports whether a stored value is framed as a pack (its version
// byte); DecodePack checks the rest.
func IsPack(rec []byte) bool { return len(rec) > 0 && rec[0] == RecordVersionPack }

// DecodePack checks a pack's frame — at most MaxPack bytes, the CRC,
// the version, a count of at least one event, a block that decompresses
// to exactly the events it declares, no event empty — and returns the
// events' payloads, in order. They alias one new buffer, never rec. The
// payloads are not validated (ValidateValue does that, or DecodeRecord of
// a record framed from one). Failures are marked ErrCorrupt
// (ErrUnsupported for a sealed frame, which OpenPack reads).
func DecodePack(rec []byte) ([][]byte, error) {
	switch {
	case len(rec) > MaxPack:
		return nil, corruptf("codec: pack of %d bytes exceeds the %d byte cap", errors.Safe(len(rec)), errors.Safe(MaxPack))
	case len(rec) < RecordOverhead+2:
		return nil, corruptf("codec: pack of %d bytes is too short", errors.Safe(len(rec)))
	case rec[0] != RecordVersionPack && rec[0] != RecordVersionSealed:
		return nil, corruptf("codec: record format version %d is not a pack", errors.Safe(rec[0]))
	}
	if sum, got := checksums(rec); got != sum {
		return nil, corruptf("codec: pack crc mismatch: stored %08x computed %08x", errors.Safe(sum), errors.Safe(got))
	}
	if rec[0] == RecordVersionSealed {
		return nil, sealedErr()
	}
	body := rec[1 : len(rec)-4]
	n, w := binary.Uvarint(body)
	// Every event takes at least two bytes of the block (a length and a
	// payload byte), so n is bounded by the block's decoded size below.
	if w <= 0 || n == 0 {
		return nil, corruptf("codec: pack has no valid event count")
	}
	raw, err := inflate(body[w:], MaxRecord) // one payload of MaxRecord-5 bytes and its length fit
	if err != nil {
		return nil, errors.Wrap(err, "codec: pack")
	}
	return unpack(n, raw)
}

// unpack splits raw, the decompressed block of a pack that declares n
// events, into the events' payloads, which alias raw. Each must have a
// valid length, none may be empty or overrun raw, and there must be
// exactly n. Failures are marked ErrCorrupt.
func unpack(n uint64, raw []byte) ([][]byte, error) {
	if n > uint64(len(raw)/2) {
		return nil, corruptf("codec: pack declares %d events in %d bytes", errors.Safe(n), errors.Safe(len(raw)))
	}
	out := make([][]byte, 0, n)
	for off := 0; off < len(raw); {
		l, w := binary.Uvarint(raw[off:])
		off += max(w, 0)
		switch {
		case w <= 0:
			return nil, corruptf("codec: pack event %d has no valid length", errors.Safe(len(out)))
		case l == 0 || l > uint64(len(raw)-off):
			return nil, corruptf("codec: pack event %d of %d bytes overruns its pack", errors.Safe(len(out)), errors.Safe(l))
		case uint64(len(out)) == n:
			return nil, corruptf("codec: pack holds more than the %d events it declares", errors.Safe(n))
		}
		out = append(out, raw[off:off+int(l):off+int(l)])
		off += int(l)
	}
	if uint64(len(out)) != n {
		return nil, corruptf("codec: pack holds %d events, it declares %d", errors.Safe(len(out)), errors.Safe(n))
	}
	return out, nil
}
