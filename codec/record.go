package codec

import (
	"encoding/binary"
	"hash/crc32"
	"slices"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// RecordVersion is the format-version byte of an uncompressed record:
// every header and engine record, and event records EncodeEventRecord does
// not compress. Part of the on-disk format: frozen. A record with a version
// above RecordVersionPack is refused as unsupported, never misread.
const RecordVersion byte = 1

// MaxRecord bounds a record's size when decoding (format byte, payload and
// CRC). It is above the JSON line limit so that every importable line fits.
const MaxRecord = 128 << 20

// RecordOverhead is the bytes a record adds to its payload: the version
// byte and the CRC32C trailer. An uncompressed event record is its payload
// and RecordOverhead; the stores bound their batches by it.
const RecordOverhead = 1 + 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// EncodeRecord frames payload for storage:
//
//	+---------+---------------------+------------------------------+
//	| version | payload (msgpack)   | CRC32C(version‖payload), BE  |
//	| 1 byte  | n bytes             | 4 bytes                      |
//	+---------+---------------------+------------------------------+
func EncodeRecord(dst, payload []byte) []byte {
	dst = slices.Grow(dst, len(payload)+RecordOverhead) // one allocation, not one per append
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
// ErrCorrupt (ErrUnsupported for a newer version, and for a sealed record,
// which only OpenRecord reads: a reader that knows the content is sealed
// calls that, and says which key it needs).
func Unframe(rec []byte, max int) ([]byte, error) {
	if len(rec) > max {
		return nil, corruptf("codec: record of %d bytes exceeds the %d byte cap",
			errors.Safe(len(rec)), errors.Safe(max))
	}
	if len(rec) < RecordOverhead+1 {
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
		return inflate(body[1:], max-RecordOverhead)
	case v == RecordVersionPack:
		return nil, corruptf("codec: record is a pack of events (DecodePack), not one record")
	case v == RecordVersionSealed:
		return nil, sealedErr()
	case v > RecordVersionSealed:
		return nil, unsupportedf("codec: record format version %d is newer than %d",
			errors.Safe(v), errors.Safe(RecordVersionSealed))
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
		return errclass.Mark(errors.Wrapf(err, "codec: payload byte %d", errors.Safe(r.off)), ErrCorrupt)
	}
	if r.Len() != 0 {
		return corruptf("codec: %d trailing bytes after the payload", errors.Safe(r.Len()))
	}
	return nil
}

// validate checks one value at r's position (see ValidateValue): depth is
// the nesting still allowed, a container at depth 0 is refused. The kinds
// nearly every item has are read without making a Token.
func (r *Reader) validate(depth int) error {
	if r.off < len(r.b) {
		switch c := r.b[r.off]; {
		case c <= 0x7f || c >= 0xe0 || c == mpNil || c == mpFalse || c == mpTrue:
			r.off++
			return nil
		case c&0xe0 == 0xa0:
			if n := int(c & 0x1f); n < len(r.b)-r.off {
				r.off += 1 + n
				return checkString(r.b[r.off-n : r.off])
			}
		case c >= mpUint8 && c <= mpInt64:
			// Integers of every width: any bits are a value.
			if n := 1 << ((c - mpUint8) & 3); n < len(r.b)-r.off {
				r.off += 1 + n
				return nil
			}
		case c == mpStr8:
			if r.off+1 < len(r.b) {
				if n := int(r.b[r.off+1]); n <= len(r.b)-r.off-2 {
					r.off += 2 + n
					return checkString(r.b[r.off-n : r.off])
				}
			}
		case c&0xe0 == 0x80: // fixmap 0x80-0x8f, fixarray 0x90-0x9f
			r.off++
			n := int(c & 0x0f)
			if c < 0x90 {
				return r.validateObject(n, depth)
			}
			return r.validateArray(n, depth)
		}
	}
	t, err := r.Next()
	if err != nil {
		return err
	}
	return r.validateRest(t, depth)
}

// validateRest checks what follows t, which validate's caller has read:
// a string's bytes, or an array's or map's elements.
func (r *Reader) validateRest(t Token, depth int) error {
	switch t.Kind {
	case KindString:
		return checkString(t.Str)
	case KindArray:
		return r.validateArray(t.N, depth)
	case KindObject:
		return r.validateObject(t.N, depth)
	}
	return nil
}

// sealedErr is the error of a plain reader given a sealed frame.
func sealedErr() error {
	return errclass.Mark(errors.NewWithDepthf(1, "codec: record is sealed (format version %d): it opens only with its session's data key (OpenRecord, OpenPack)",
		errors.Safe(RecordVersionSealed)), ErrUnsupported)
}

var (
	errNotUTF8    = errors.New("codec: string is not UTF-8")
	errKeyNotUTF8 = errors.New("codec: key is not UTF-8")
	errDeep       = errors.New("codec: nesting too deep")
	errKeyKind    = errors.New("codec: object key is not a string")
	errDupKey     = errors.New("codec: duplicate object key")
)

func checkString(s []byte) error {
	if !validString(s) {
		return errNotUTF8
	}
	return nil
}

// validateArray checks the n elements of an array whose header was read.
func (r *Reader) validateArray(n, depth int) error {
	if n > len(r.b)-r.off {
		return errShort
	}
	if depth <= 0 {
		return errDeep
	}
	for i := 0; i < n; i++ {
		if err := r.validate(depth - 1); err != nil {
			return err
		}
	}
	return nil
}

// validateObject checks the n pairs of a map whose header was read.
func (r *Reader) validateObject(n, depth int) error {
	if n > (len(r.b)-r.off)/2 {
		return errShort
	}
	if depth <= 0 {
		return errDeep
	}
	var keys smallKeys
	for i := 0; i < n; i++ {
		start, err := r.member()
		if err != nil {
			return err
		}
		if !keys.add(r.b, start, r.off) {
			return errDupKey
		}
		if err := r.validate(depth - 1); err != nil {
			return err
		}
	}
	return nil
}

// member reads and checks a map key, which must be a WTF-8 string, and
// returns where its bytes start (they end at r.off).
func (r *Reader) member() (int, error) {
	k, ok, err := r.key()
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, errKeyKind
	}
	if !validString(k) {
		return 0, errKeyNotUTF8
	}
	return r.off - len(k), nil
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
	if len(rec) < RecordOverhead {
		return false
	}
	stored, computed := checksums(rec)
	return stored != computed
}
