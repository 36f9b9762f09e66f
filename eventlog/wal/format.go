package wal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// The on-disk layout; doc.go draws it.
const (
	// Version is the segment format version this code writes and reads.
	Version = 1

	headerSize = 32 // segment header
	frameHead  = 16 // record: length, link, lsn
	frameTail  = 4  // record: crc
	frameSize  = frameHead + frameTail

	// MaxPayload is the largest payload Append accepts.
	MaxPayload = 256 << 20

	// DefaultSegmentSize is Options.SegmentSize when it is 0.
	DefaultSegmentSize = 64 << 20
	// MaxSegmentSize bounds Options.SegmentSize.
	MaxSegmentSize = 1 << 30

	// maxFile bounds the size of a segment file a read accepts: the
	// largest segment, or one record of MaxPayload alone.
	maxFile = MaxSegmentSize + headerSize + frameSize + MaxPayload

	segSuffix = ".wal"
)

// magic opens every segment file.
var magic = [8]byte{'s', 'l', 'o', 'g', 'w', 'a', 'l', '\n'}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header is a segment header.
type header struct {
	first uint64 // lsn of the segment's first record
	link  uint32 // crc of the record before it, 0 for the very first
}

// appendHeader appends the 32 bytes of h to b.
func appendHeader(b []byte, h header) []byte {
	start := len(b)
	b = append(b, magic[:]...)
	b = binary.LittleEndian.AppendUint32(b, Version)
	b = binary.LittleEndian.AppendUint32(b, h.link)
	b = binary.LittleEndian.AppendUint64(b, h.first)
	b = binary.LittleEndian.AppendUint32(b, 0) // reserved
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

// parseHeader decodes a segment header; the string says what is wrong.
func parseHeader(b []byte) (header, string) {
	if len(b) < headerSize {
		return header{}, fmt.Sprintf("short header (%d bytes)", len(b))
	}
	if crc32.Checksum(b[:28], castagnoli) != binary.LittleEndian.Uint32(b[28:32]) {
		return header{}, "header crc mismatch"
	}
	if [8]byte(b[:8]) != magic {
		return header{}, "bad magic"
	}
	if v := binary.LittleEndian.Uint32(b[8:12]); v != Version {
		return header{}, fmt.Sprintf("unknown format version %d", v)
	}
	if binary.LittleEndian.Uint32(b[24:28]) != 0 {
		return header{}, "reserved header bytes are not zero"
	}
	return header{
		link:  binary.LittleEndian.Uint32(b[12:16]),
		first: binary.LittleEndian.Uint64(b[16:24]),
	}, ""
}

// appendFrame appends one record frame to b and returns it with the
// frame's crc.
func appendFrame(b []byte, lsn uint64, link uint32, payload []byte) ([]byte, uint32) {
	start := len(b)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	b = binary.LittleEndian.AppendUint32(b, link)
	b = binary.LittleEndian.AppendUint64(b, lsn)
	b = append(b, payload...)
	crc := crc32.Checksum(b[start:], castagnoli)
	return binary.LittleEndian.AppendUint32(b, crc), crc
}

// frame is a record frame found in a segment.
type frame struct {
	lsn     uint64
	link    uint32
	crc     uint32
	payload []byte // aliases the segment's bytes
	size    int    // bytes of the whole frame
}

// parseFrame decodes the frame at the start of b: ok is false unless its
// length fits in b and its crc matches. It never allocates.
func parseFrame(b []byte) (frame, bool) {
	if len(b) < frameSize {
		return frame{}, false
	}
	n := binary.LittleEndian.Uint32(b[0:4])
	if n > MaxPayload || uint64(n) > uint64(len(b)-frameSize) {
		return frame{}, false
	}
	end := frameHead + int(n)
	crc := binary.LittleEndian.Uint32(b[end : end+4])
	if crc32.Checksum(b[:end], castagnoli) != crc {
		return frame{}, false
	}
	return frame{
		link:    binary.LittleEndian.Uint32(b[4:8]),
		lsn:     binary.LittleEndian.Uint64(b[8:16]),
		crc:     crc,
		payload: b[frameHead:end:end],
		size:    end + frameTail,
	}, true
}

// plausibleFrame is the cheap prefilter of the torn-tail scan: the frame at
// the start of b has a length that fits and an lsn in [lo, hi].
func plausibleFrame(b []byte, lo, hi uint64) bool {
	if len(b) < frameSize {
		return false
	}
	n := binary.LittleEndian.Uint32(b[0:4])
	if n > MaxPayload || uint64(n) > uint64(len(b)-frameSize) {
		return false
	}
	lsn := binary.LittleEndian.Uint64(b[8:16])
	return lsn >= lo && lsn <= hi
}

// segmentName is the file name of the segment whose first lsn is first.
func segmentName(first uint64) string {
	return fmt.Sprintf("%016x%s", first, segSuffix)
}

// parseSegmentName returns the first lsn a segment file name states.
func parseSegmentName(name string) (uint64, bool) {
	hex, ok := strings.CutSuffix(name, segSuffix)
	if !ok || len(hex) != 16 {
		return 0, false
	}
	v, err := strconv.ParseUint(hex, 16, 64)
	if err != nil || segmentName(v) != name {
		return 0, false
	}
	return v, true
}
