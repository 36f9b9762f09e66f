package codec

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/cockroachdb/errors"
)

// RecordVersionSealed is the format-version byte of a sealed frame: a
// record or a pack whose body is sealed with AES-256-GCM under a session's
// data key (see the package doc, Sealed records). Part of the on-disk
// format: frozen.
const RecordVersionSealed byte = 4

// DataKeySize is the size of a data key: an AES-256 key.
const DataKeySize = 32

// sealedDomain begins the additional data of every sealed frame, which
// then holds the frame's plain header (version, form, a pack's count).
// Part of the format: frozen.
const sealedDomain = "sessionlog/sealed/1\x00"

const (
	// nonceSize and tagSize are AES-GCM's: the random nonce written
	// before the ciphertext, the tag after it.
	nonceSize = 12
	tagSize   = 16
	// sealOverhead is what sealing adds to the body it seals.
	sealOverhead = nonceSize + tagSize
	// maxSealedHeader is the longest plain header of a sealed frame:
	// the version, the form and a pack's count.
	maxSealedHeader = 2 + binary.MaxVarintLen64
	// minSealed is the shortest sealed frame: a header, a nonce, one
	// byte sealed, a tag and the CRC.
	minSealed = 2 + sealOverhead + 1 + 4
)

// Sealer seals and opens the frames of one session under its data key:
// AES-256-GCM with a random 96-bit nonce per frame (the standard
// library's cipher.NewGCMWithRandomNonce). It is safe for concurrent use.
// It never prints its key: every fmt verb prints "codec.Sealer(redacted)".
type Sealer struct {
	// aead returns the AEAD of the key. A func, not the AEAD: an AEAD is
	// a pointer to AES's key schedule, whose first words are the key,
	// and fmt follows a pointer met under a verb it does not take (%s
	// in an unexported field); a func it prints as an address.
	aead func() cipher.AEAD
	// ad holds the additional data of forms 1 and 2, whose plain header
	// never changes, so that sealing and opening a record allocates only
	// its own bytes.
	ad [RecordVersionS2 + 1][]byte
}

// NewSealer returns the Sealer of a data key of DataKeySize bytes; a key
// of another size is an error of class keys. The key is not retained: the
// Sealer holds AES's expansion of it.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != DataKeySize {
		return nil, keysf("codec: a data key of %d bytes; AES-256 takes %d", errors.Safe(len(key)), errors.Safe(DataKeySize))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, errors.NewAssertionErrorWithWrappedErrf(err, "codec: AES-256 of a %d-byte key", errors.Safe(len(key)))
	}
	aead, err := cipher.NewGCMWithRandomNonce(block)
	if err != nil {
		return nil, errors.NewAssertionErrorWithWrappedErrf(err, "codec: AES-256-GCM")
	}
	s := &Sealer{aead: func() cipher.AEAD { return aead }}
	for _, form := range []byte{RecordVersion, RecordVersionS2} {
		s.ad[form] = additional([]byte{RecordVersionSealed, form})
	}
	return s, nil
}

const redactedSealer = "codec.Sealer(redacted)"

// String returns "codec.Sealer(redacted)".
func (Sealer) String() string { return redactedSealer }

// GoString returns "codec.Sealer(redacted)".
func (Sealer) GoString() string { return redactedSealer }

// Format prints "codec.Sealer(redacted)" whatever the verb and flags.
func (Sealer) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redactedSealer) }

// IsSealed reports whether a stored value is a sealed frame (its version
// byte); OpenRecord, OpenPack and CheckFrame check the rest.
func IsSealed(rec []byte) bool { return len(rec) > 0 && rec[0] == RecordVersionSealed }

// SealRecord seals payload, a header's or an event's, as a sealed record,
// appended to dst: the S2 block EncodeEventRecord would store when that is
// smaller (form 2), else the payload (form 1), sealed under s.
//
//	+---------+--------+-----------+-----------------------+--------+------------------+
//	| ver=4   | form   | nonce     | AES-256-GCM of the    | tag    | CRC32C of all    |
//	| 1 byte  | 1 or 2 | 12 bytes  | payload or S2 block   | 16 B   | before it, BE 4  |
//	+---------+--------+-----------+-----------------------+--------+------------------+
//
// The additional data is "sessionlog/sealed/1\x00" followed by the
// version and form bytes. Each call draws a new random nonce, so the same
// payload gives different bytes every time. dst must not overlap payload.
func SealRecord(dst, payload []byte, s *Sealer) []byte {
	z, bp := compress(payload)
	if z == nil {
		return s.seal(dst, RecordVersion, 0, payload)
	}
	dst = s.seal(dst, RecordVersionS2, 0, z)
	putZbuf(bp, z)
	return dst
}

// SealPack frames payloads, the payloads of consecutive events, as a
// sealed pack appended to dst: AppendPack's block, sealed under s, with
// the count of events left in the clear (and authenticated) so that the
// store's structure can be checked without the key.
//
//	+---------+--------+-----------+-----------+--------------------+--------+--------------+
//	| ver=4   | form=3 | uvarint n | nonce     | AES-256-GCM of the | tag    | CRC32C of    |
//	| 1 byte  | 1 byte | events    | 12 bytes  | pack's S2 block    | 16 B   | all, BE 4    |
//	+---------+--------+-----------+-----------+--------------------+--------+--------------+
//
// The additional data is "sessionlog/sealed/1\x00" followed by the
// version, the form and the count as written. raw is scratch space, as
// for AppendPack. payloads must not be empty.
func SealPack(dst, raw []byte, payloads [][]byte, s *Sealer) (out, scratch []byte) {
	z, bp, raw := packBlock(raw, payloads)
	dst = s.seal(dst, RecordVersionPack, uint64(len(payloads)), z)
	putZbuf(bp, z)
	return dst, raw
}

// seal appends to dst the sealed frame of body, the body of a frame of
// version form (count the events of a pack).
func (s *Sealer) seal(dst []byte, form byte, count uint64, body []byte) []byte {
	dst = slices.Grow(dst, maxSealedHeader+sealOverhead+len(body)+4) // one allocation
	start := len(dst)
	dst = append(dst, RecordVersionSealed, form)
	if form == RecordVersionPack {
		dst = binary.AppendUvarint(dst, count)
	}
	dst = s.aead().Seal(dst, nil, body, s.additional(dst[start:]))
	return binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// additional is the package's additional(hdr), taken from s.ad for the
// headers of forms 1 and 2.
func (s *Sealer) additional(hdr []byte) []byte {
	if len(hdr) == 2 && hdr[1] <= RecordVersionS2 && s.ad[hdr[1]] != nil {
		return s.ad[hdr[1]]
	}
	return additional(hdr)
}

// additional returns the additional data of a sealed frame whose plain
// header is hdr: the domain, then hdr.
func additional(hdr []byte) []byte {
	ad := make([]byte, 0, len(sealedDomain)+len(hdr))
	return append(append(ad, sealedDomain...), hdr...)
}

// OpenRecord checks a sealed record's frame and opens it: the sealed
// counterpart of Unframe. It checks the size cap (max bytes), the CRC, the
// version byte, the form, then opens the body under s and, for form 2,
// decompresses it into a new buffer of at most max-5 bytes. The payload
// is not validated (ValidateValue, DecodeStoredEvent do that).
//
// A frame that fails a check the key plays no part in (the size, the CRC,
// a torn or unknown header) is ErrCorrupt, as is a plain record (version
// 1 or 2: a sealed store holds none) and a block that does not
// decompress; a frame whose CRC holds but whose body does not open under
// s is ErrKeys: the CRC covers the sealed bytes, so damage is caught
// before the key is tried. (Bytes altered on purpose, the CRC recomputed,
// cannot be told from a wrong key.)
func OpenRecord(rec []byte, s *Sealer, max int) ([]byte, error) {
	f, hdr, err := sealedFrame(rec, max)
	if err != nil {
		return nil, err
	}
	switch f.Form {
	case RecordVersion:
		body := rec[hdr : len(rec)-4]
		out, err := s.aead().Open(make([]byte, 0, len(body)-sealOverhead), nil, body, s.additional(rec[:hdr]))
		if err != nil {
			return nil, notOpened("record")
		}
		return out, nil
	case RecordVersionS2:
		bp := zbufs.Get().(*[]byte)
		z, err := s.open(*bp, rec, hdr)
		if err != nil {
			zbufs.Put(bp)
			return nil, notOpened("record")
		}
		out, err := inflate(z, max-RecordOverhead)
		putZbuf(bp, z)
		return out, errors.Wrap(err, "codec: sealed record")
	}
	return nil, corruptf("codec: sealed record is a pack (OpenPack), not one record")
}

// OpenPack checks a sealed pack's frame and opens it: the sealed
// counterpart of DecodePack, with the checks of OpenRecord (cap MaxPack)
// and then DecodePack's on the opened block. It returns the events'
// payloads, in order, aliasing one new buffer. Failures are ErrCorrupt,
// or ErrKeys for a whole frame that does not open under s.
func OpenPack(rec []byte, s *Sealer) ([][]byte, error) {
	f, hdr, err := sealedFrame(rec, MaxPack)
	if err != nil {
		return nil, err
	}
	if f.Form != RecordVersionPack {
		return nil, corruptf("codec: sealed record of form %d is not a pack", errors.Safe(f.Form))
	}
	bp := zbufs.Get().(*[]byte)
	z, err := s.open(*bp, rec, hdr)
	if err != nil {
		zbufs.Put(bp)
		return nil, notOpened("pack")
	}
	raw, err := inflate(z, MaxRecord)
	putZbuf(bp, z)
	if err != nil {
		return nil, errors.Wrap(err, "codec: sealed pack")
	}
	out, err := unpack(uint64(f.Events), raw)
	return out, errors.Wrap(err, "codec: sealed pack")
}

// open opens the sealed body of rec, whose plain header is rec[:hdr],
// into buf's storage.
func (s *Sealer) open(buf, rec []byte, hdr int) ([]byte, error) {
	body := rec[hdr : len(rec)-4]
	if n := len(body) - sealOverhead; cap(buf) < n {
		buf = make([]byte, 0, n)
	}
	return s.aead().Open(buf[:0], nil, body, s.additional(rec[:hdr]))
}

// notOpened is the error of a whole sealed frame that does not open.
func notOpened(what string) error {
	return keysf("codec: sealed %s does not open with this data key", errors.Safe(what))
}

// Frame is what CheckFrame reads of a stored value without opening or
// decompressing it.
type Frame struct {
	// Version is the format-version byte: RecordVersion, RecordVersionS2,
	// RecordVersionPack or RecordVersionSealed.
	Version byte
	// Form is the version of the frame a sealed frame seals (1, 2 or 3),
	// else Version.
	Form byte
	// Events is the number of events the value holds: a pack's count as
	// it declares it, else 1.
	Events int
}

// CheckFrame checks what of a stored value can be checked without its
// key and without decompressing it: the size cap (max bytes), the CRC,
// the version byte and, for a sealed frame, the form and the room for a
// nonce, a body and a tag; for a pack, sealed or not, a count of at least
// one event and at most one per two bytes of MaxRecord. Failures are
// marked ErrCorrupt (ErrUnsupported for a newer version). The structure
// checks of a store whose content is sealed read this.
func CheckFrame(rec []byte, max int) (Frame, error) {
	if IsSealed(rec) {
		f, _, err := sealedFrame(rec, max)
		return f, err
	}
	if len(rec) > max {
		return Frame{}, corruptf("codec: record of %d bytes exceeds the %d byte cap", errors.Safe(len(rec)), errors.Safe(max))
	}
	if len(rec) < RecordOverhead+1 {
		return Frame{}, corruptf("codec: record of %d bytes is too short", errors.Safe(len(rec)))
	}
	if sum, got := checksums(rec); got != sum {
		return Frame{}, corruptf("codec: record crc mismatch: stored %08x computed %08x", errors.Safe(sum), errors.Safe(got))
	}
	f := Frame{Version: rec[0], Form: rec[0], Events: 1}
	switch v := rec[0]; {
	case v == RecordVersion || v == RecordVersionS2:
		return f, nil
	case v == RecordVersionPack:
		n, _, err := packCount(rec[1 : len(rec)-4])
		if err != nil {
			return Frame{}, err
		}
		f.Events = n
		return f, nil
	case v > RecordVersionSealed:
		return Frame{}, unsupportedf("codec: record format version %d is newer than %d", errors.Safe(v), errors.Safe(RecordVersionSealed))
	}
	return Frame{}, corruptf("codec: record format version %d is unknown", errors.Safe(rec[0]))
}

// packCount reads the count of events at the front of a pack's body, and
// the count's length: at least one event, and at most one per two bytes
// of the largest block.
func packCount(body []byte) (n, w int, err error) {
	c, w := binary.Uvarint(body)
	if w <= 0 || c == 0 || c > MaxRecord/2 {
		return 0, 0, corruptf("codec: pack has no valid event count")
	}
	return int(c), w, nil
}

// sealedFrame checks the frame of a sealed value without opening it (see
// CheckFrame) and returns what it holds and the length of its plain
// header.
func sealedFrame(rec []byte, max int) (f Frame, hdr int, err error) {
	switch {
	case len(rec) > max:
		return Frame{}, 0, corruptf("codec: sealed record of %d bytes exceeds the %d byte cap", errors.Safe(len(rec)), errors.Safe(max))
	case len(rec) < RecordOverhead:
		return Frame{}, 0, corruptf("codec: sealed record of %d bytes is too short", errors.Safe(len(rec)))
	}
	if sum, got := checksums(rec); got != sum {
		return Frame{}, 0, corruptf("codec: sealed record crc mismatch: stored %08x computed %08x", errors.Safe(sum), errors.Safe(got))
	}
	switch {
	case rec[0] != RecordVersionSealed:
		return Frame{}, 0, corruptf("codec: record format version %d is not sealed, in sealed content", errors.Safe(rec[0]))
	case len(rec) < minSealed:
		return Frame{}, 0, corruptf("codec: sealed record of %d bytes is too short", errors.Safe(len(rec)))
	}
	f = Frame{Version: RecordVersionSealed, Form: rec[1], Events: 1}
	hdr = 2
	switch f.Form {
	case RecordVersion, RecordVersionS2:
	case RecordVersionPack:
		n, w, err := packCount(rec[2 : len(rec)-4])
		if err != nil {
			return Frame{}, 0, errors.Wrap(err, "codec: sealed")
		}
		f.Events = n
		hdr += w
		if len(rec)-4-hdr < sealOverhead+1 {
			return Frame{}, 0, corruptf("codec: sealed pack of %d bytes is too short", errors.Safe(len(rec)))
		}
	default:
		return Frame{}, 0, corruptf("codec: sealed record of unknown form %d", errors.Safe(f.Form))
	}
	return f, hdr, nil
}
