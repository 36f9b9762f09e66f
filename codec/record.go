package codec

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/cockroachdb/errors"
)

// RecordVersion is the format-version byte of an uncompressed record:
// every header and engine record, and event records EncodeEventRecord does
// not compress. Part of the on-disk format: frozen. A record with a version
// above RecordVersionPack is refused as unsupported, never misread.
const RecordVersion byte = 1

// MaxRecord bounds a record's size when decoding (format byte, payload and
// CRC). It is above the JSON line limit so that every importable line fits.
const MaxRecord = 128 << 20

// recordOverhead is the version byte plus the CRC32C trailer.
const recordOverhead = 1 + 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// EncodeRecord frames payload for storage:
//
//	+---------+---------------------+------------------------------+
//	| version | payload (msgpack)   | CRC32C(version‖payload), BE  |
//	| 1 byte  | n bytes             | 4 bytes                      |
//	+---------+---------------------+------------------------------+
func EncodeRecord(dst, payload []byte) []byte {
	start := len(dst)
	dst = append(dst, RecordVersion)
	dst = append(dst, payload...)
	return binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// DecodeRecord checks a record's frame and returns its payload. For a
// version 1 record the payload aliases rec and nothing is allocated; a
// version 2 record is decompressed into a new buffer, bounded by MaxRecord.
// It checks the size cap, the version byte, the CRC, and that the payload
// is exactly one well-formed stored value (ValidateValue). Every failure is
// marked ErrCorrupt (or ErrUnsupported for a newer version).
func DecodeRecord(rec []byte) ([]byte, error) {
	payload, err := Unframe(rec, MaxRecord)
	if err != nil {
		return nil, err
	}
	if err := ValidateValue(payload); err != nil {
		return nil, err
	}
	return payload, nil
}

// Unframe checks a record's frame only — at most max bytes, the CRC, the
// version byte — and returns its payload without looking inside it: for
// records whose payload is not a stored JSON value (the store's own, typed
// engine records). A version 1 payload aliases rec; a version 2 one is
// decompressed into a new buffer of at most max-5 bytes (the payload a
// version 1 record of max bytes could hold). Failures are marked
// ErrCorrupt (ErrUnsupported for a newer version).
func Unframe(rec []byte, max int) ([]byte, error) {
	if len(rec) > max {
		return nil, corruptf("codec: record of %d bytes exceeds the %d byte cap",
			errors.Safe(len(rec)), errors.Safe(max))
	}
	if len(rec) < recordOverhead+1 {
		return nil, corruptf("codec: record of %d bytes is too short", errors.Safe(len(rec)))
	}
	body := rec[:len(rec)-4]
	if sum, got := checksums(rec); got != sum {
		return nil, corruptf("codec: record crc mismatch: stored %08x computed %08x",
			errors.Safe(sum), errors.Safe(got))
	}
	switch v := rec[0]; {
	case v == RecordVersion:
		return body[1:], nil
	case v == RecordVersionS2:
		return inflate(body[1:], max-recordOverhead)
	case v == RecordVersionPack:
		return nil, corruptf("codec: record is a pack of events (DecodePack), not one record")
	case v > RecordVersionPack:
		return nil, unsupportedf("codec: record format version %d is newer than %d",
			errors.Safe(v), errors.Safe(RecordVersionPack))
	default:
		return nil, corruptf("codec: record format version %d is unknown", errors.Safe(v))
	}
}

// ValidateValue checks that mp is exactly one stored value: msgpack of the
// kinds FromJSON writes (nil, bool, int, float64, str, array, map), string
// map keys, no duplicate keys, WTF-8 strings, finite floats, bounded depth,
// no trailing bytes. Failures are marked ErrCorrupt.
func ValidateValue(mp []byte) error {
	r := Reader{b: mp}
	if err := r.validate(maxStoredDepth); err != nil {
		return errors.Mark(errors.Wrapf(err, "codec: payload byte %d", errors.Safe(r.off)), ErrCorrupt)
	}
	if r.Len() != 0 {
		return corruptf("codec: %d trailing bytes after the payload", errors.Safe(r.Len()))
	}
	return nil
}

func (r *Reader) validate(depth int) error {
	t, err := r.Next()
	if err != nil {
		return err
	}
	switch t.Kind {
	case KindString:
		if !validWTF8(t.Str) {
			return errors.New("codec: string is not UTF-8")
		}
		return nil
	case KindArray, KindObject:
	default:
		return nil
	}
	if depth <= 0 {
		return errors.New("codec: nesting too deep")
	}
	if t.Kind == KindArray {
		for i := 0; i < t.N; i++ {
			if err := r.validate(depth - 1); err != nil {
				return err
			}
		}
		return nil
	}
	var keys keySet
	for i := 0; i < t.N; i++ {
		k, ok, err := r.key()
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("codec: object key is not a string")
		}
		if !validWTF8(k) {
			return errors.New("codec: key is not UTF-8")
		}
		// Compare keys by their string bytes, independent of header width.
		if !keys.add(r.b, r.off-len(k), r.off) {
			return errors.New("codec: duplicate object key")
		}
		if err := r.validate(depth - 1); err != nil {
			return err
		}
	}
	return nil
}

// checksums returns a framed record's stored CRC32C trailer and the one
// computed over its bytes; rec holds at least the trailer.
func checksums(rec []byte) (stored, computed uint32) {
	body := rec[:len(rec)-4]
	return binary.BigEndian.Uint32(rec[len(rec)-4:]), crc32.Checksum(body, castagnoli)
}

// ChecksumMismatch reports whether rec is long enough to hold a frame and
// its CRC32C trailer disagrees with its bytes: how a reader of damaged
// records tells a torn or flipped record from one whose frame is whole.
func ChecksumMismatch(rec []byte) bool {
	if len(rec) < recordOverhead {
		return false
	}
	stored, computed := checksums(rec)
	return stored != computed
}
