package wal

import (
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

var (
	// ErrCorrupt marks a damaged WAL: a bad frame that is not a torn tail,
	// an lsn gap or repeat, a broken chain, a bad segment header, an
	// unknown format version. The error names the segment file and offset.
	ErrCorrupt = errors.New("wal: corrupt")
	// ErrBroken is returned by Append once a write or sync of the WAL has
	// failed: what reached the disk is unknown, so the WAL refuses further
	// appends until it is reopened (and its tail read back).
	ErrBroken = errors.New("wal: broken")
	// ErrTooLarge is returned by Append for a payload over MaxPayload.
	// Nothing was written; the WAL stays usable.
	ErrTooLarge = errors.New("wal: payload too large")
	// ErrClosed is returned by Append and Release after Close.
	ErrClosed = errors.New("wal: closed")
)

// corruptf returns an error marked ErrCorrupt, created one frame up.
func corruptf(format string, args ...interface{}) error {
	return errclass.Mark(errors.NewWithDepthf(1, format, args...), ErrCorrupt)
}

// Report says what a read found.
type Report struct {
	Segments  int    // segment files read
	Records   int    // intact records read (all of them, including those <= after)
	First     uint64 // lsn of the first record present (0 if none)
	Last      uint64 // lsn of the last intact record (0 if none)
	TornBytes int64  // bytes of an incomplete final record dropped (0 if none)
	TornAt    string // "<segment file name>@<offset>" of the dropped tail, "" if none
}

// segment is a live segment file.
type segment struct {
	path  string
	first uint64 // lsn of its first record (from its header)
	size  int64  // bytes of the file
	end   int64  // offset after its last intact record
}

// scan is what a read of a WAL directory found.
type scan struct {
	report Report
	segs   []segment // intact segments, in order
	next   uint64    // lsn the next record gets
	link   uint32    // crc of the last record (or the last header's link)
	// unwritten is the path of a last segment that holds no complete
	// header (created but never written), "" if none; it is not in segs.
	unwritten string
	tornOff   int64 // offset of a torn tail in the last of segs, -1 if none
}

// Segments returns the paths of the segment files in dir, in lsn order.
// Files with other names are ignored. A missing dir has none.
func Segments(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, errors.Wrapf(err, "wal: list %s", errors.Safe(dir))
	}
	var paths []string
	for _, e := range ents {
		if _, ok := parseSegmentName(e.Name()); ok && e.Type().IsRegular() {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(paths) // fixed-width hex names sort in lsn order
	return paths, nil
}

// Read reads the WAL in dir like Open, without writing: nothing is
// created, truncated or removed. It calls fn for each intact record with
// lsn > after, in lsn order; the payload is valid only during the call.
// A missing dir is an empty WAL (Report zero, nil error). fn may be nil.
func Read(dir string, after uint64, fn func(lsn uint64, payload []byte) error) (Report, error) {
	s, err := read(dir, after, fn)
	return s.report, err
}

// read reads every segment of dir in order; see Open for the rules.
func read(dir string, after uint64, fn func(lsn uint64, payload []byte) error) (scan, error) {
	s := scan{next: after + 1, tornOff: -1}
	paths, err := Segments(dir)
	if err != nil {
		return s, err
	}
	for i, path := range paths {
		last := i == len(paths)-1
		if err := s.segment(path, last, after, fn); err != nil {
			return s, err
		}
	}
	if len(s.segs) > 0 && s.next <= after {
		return s, corruptf("wal: %s ends before lsn %d, which is applied (next lsn %d)",
			errors.Safe(filepath.Base(s.segs[len(s.segs)-1].path)), errors.Safe(after), errors.Safe(s.next))
	}
	return s, nil
}

// segment reads one segment file into s.
func (s *scan) segment(path string, last bool, after uint64, fn func(uint64, []byte) error) error {
	name := filepath.Base(path)
	data, err := readSegment(path)
	if err != nil {
		return err
	}
	s.report.Segments++
	if last && (len(data) < headerSize || allZero(data)) {
		// Created but never written: nothing in it was acknowledged.
		s.unwritten = path
		if n := lastNonZero(data); n > 0 {
			s.report.TornBytes, s.report.TornAt = int64(n), name+"@0"
		}
		return nil
	}
	h, bad := parseHeader(data)
	if bad != "" {
		return corruptf("wal: segment %s@0: %s", errors.Safe(name), errors.Safe(bad))
	}
	if nameLSN, _ := parseSegmentName(name); nameLSN != h.first {
		return corruptf("wal: segment %s@0: header says first lsn %d", errors.Safe(name), errors.Safe(h.first))
	}
	if len(s.segs) == 0 {
		if h.first > s.next {
			return corruptf("wal: segment %s@0: first lsn %d, want at most %d: records %d..%d are missing",
				errors.Safe(name), errors.Safe(h.first), errors.Safe(s.next), errors.Safe(s.next), errors.Safe(h.first-1))
		}
		s.link = h.link // trusted: the segments before it were released
	} else {
		if h.first != s.next {
			return corruptf("wal: segment %s@0: first lsn %d, want %d", errors.Safe(name), errors.Safe(h.first), errors.Safe(s.next))
		}
		if h.link != s.link {
			return corruptf("wal: segment %s@0: chain link %08x, want %08x", errors.Safe(name), errors.Safe(h.link), errors.Safe(s.link))
		}
	}
	s.next = h.first
	off := headerSize
	for off < len(data) {
		f, ok := parseFrame(data[off:])
		if ok && f.lsn == s.next && f.link == s.link {
			if f.lsn > after && fn != nil {
				if err := fn(f.lsn, f.payload); err != nil {
					return err
				}
			}
			if s.report.Records == 0 {
				s.report.First = f.lsn
			}
			s.report.Records++
			s.report.Last = f.lsn
			s.next, s.link = f.lsn+1, f.crc
			off += f.size
			continue
		}
		if ok {
			// A torn write never yields a frame with a matching crc.
			return corruptf("wal: segment %s@%d: record with lsn %d and link %08x, want lsn %d and link %08x",
				errors.Safe(name), errors.Safe(off), errors.Safe(f.lsn), errors.Safe(f.link), errors.Safe(s.next), errors.Safe(s.link))
		}
		end := lastNonZero(data[off:])
		if end == 0 {
			break // zeros after the last record: preallocation
		}
		if !last {
			return corruptf("wal: segment %s@%d: bad record (want lsn %d)", errors.Safe(name), errors.Safe(off), errors.Safe(s.next))
		}
		switch p := intactAfter(data[off:off+end], s.next); {
		case p == -2:
			return corruptf("wal: segment %s@%d: bad record (want lsn %d), and the bytes after it are too irregular to call it a torn tail",
				errors.Safe(name), errors.Safe(off), errors.Safe(s.next))
		case p >= 0:
			return corruptf("wal: segment %s@%d: bad record (want lsn %d) before an intact one at offset %d",
				errors.Safe(name), errors.Safe(off), errors.Safe(s.next), errors.Safe(off+p))
		}
		s.tornOff = int64(off)
		s.report.TornBytes = int64(end)
		s.report.TornAt = fmt.Sprintf("%s@%d", name, off)
		break
	}
	s.segs = append(s.segs, segment{path: path, first: h.first, size: int64(len(data)), end: int64(off)})
	if s.tornOff >= 0 {
		s.segs[len(s.segs)-1].end = s.tornOff
	}
	return nil
}

// intactAfter returns the offset of the first intact frame in b after its
// first byte whose lsn could follow a damaged record with lsn lo, or -1: a
// bad frame followed by an intact one is damage, not a torn tail. Records
// are at least frameSize bytes, so a frame p bytes on has an lsn in
// [lo, lo+p/frameSize]; only offsets with such an lsn and a length that
// fits get a crc computed, so on real data the scan is about linear.
// Crafted bytes can make many offsets plausible; past a budget of crc work
// the scan gives up and reports the tail as damage (-2), never as torn.
func intactAfter(b []byte, lo uint64) int {
	budget := 16*len(b) + 1<<20
	for p := 1; p+frameSize <= len(b); p++ {
		if !plausibleFrame(b[p:], lo, lo+uint64(p)/frameSize) {
			continue
		}
		budget -= frameSize + int(binary.LittleEndian.Uint32(b[p:]))
		if budget < 0 {
			return -2
		}
		if _, ok := parseFrame(b[p:]); ok {
			return p
		}
	}
	return -1
}

// readSegment reads a whole segment file, refusing one too large to be a
// segment before allocating for it.
func readSegment(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.Wrapf(err, "wal: open %s", errors.Safe(path))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, errors.Wrapf(err, "wal: stat %s", errors.Safe(path))
	}
	if fi.Size() > maxFile {
		return nil, corruptf("wal: segment %s: %d bytes, more than a segment can hold", errors.Safe(filepath.Base(path)), errors.Safe(fi.Size()))
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, errors.Wrapf(err, "wal: read %s", errors.Safe(path))
	}
	return data, nil
}

// lastNonZero returns the length of b without its trailing zero bytes.
func lastNonZero(b []byte) int {
	n := len(b)
	for n >= 8 && b[n-8]|b[n-7]|b[n-6]|b[n-5]|b[n-4]|b[n-3]|b[n-2]|b[n-1] == 0 {
		n -= 8
	}
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return n
}

func allZero(b []byte) bool { return lastNonZero(b) == 0 }
