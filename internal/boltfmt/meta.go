package boltfmt

import (
	"encoding/binary"
	"hash/fnv"
	"io"
	"os"

	"github.com/cockroachdb/errors"
)

// bbolt's meta page, as it lays it out (go.etcd.io/bbolt internal/common):
// a 16-byte page header, then magic, version, page size, flags (4 bytes
// each), the root bucket (16), the freelist, high-water and txid (8 each)
// and an FNV-64a checksum of everything before it; little-endian on the
// machines bbolt supports. Pages 0 and 1 hold the two metas, alternately
// written by each commit.
const (
	boltPageHeader  = 16
	boltMagic       = 0xED0CDAED
	boltVersion     = 2
	boltMetaSummed  = 56 // bytes the checksum covers
	boltMetaSize    = 64
	boltMetaPageMin = 512
)

type metaPage struct {
	ok   bool
	txid uint64
	size uint32
	// root is the root bucket's page, freelist the freelist's, hw the
	// high-water mark (pages).
	root, freelist, hw uint64
	why                string
}

func readMeta(r io.ReaderAt, off int64) metaPage {
	var b [boltPageHeader + boltMetaSize]byte
	if _, err := r.ReadAt(b[:], off); err != nil {
		return metaPage{why: "unreadable"}
	}
	m := b[boltPageHeader:]
	switch {
	case binary.LittleEndian.Uint32(m[0:]) != boltMagic:
		return metaPage{why: "bad magic"}
	case binary.LittleEndian.Uint32(m[4:]) != boltVersion:
		return metaPage{why: "unknown version"}
	}
	h := fnv.New64a()
	h.Write(m[:boltMetaSummed])
	if h.Sum64() != binary.LittleEndian.Uint64(m[boltMetaSummed:]) {
		return metaPage{why: "checksum mismatch"}
	}
	return metaPage{ok: true, txid: binary.LittleEndian.Uint64(m[48:]), size: binary.LittleEndian.Uint32(m[8:]),
		root: binary.LittleEndian.Uint64(m[16:]), freelist: binary.LittleEndian.Uint64(m[32:]), hw: binary.LittleEndian.Uint64(m[40:])}
}

// readMetas reads both bbolt meta pages: the first at offset 0, the
// second one page further, by the page size the first records when it is
// valid; else the second is looked for one page further for each page
// size a store may have (pageSizes).
func readMetas(r io.ReaderAt) (m0, m1 metaPage) {
	m0 = readMeta(r, 0)
	if m0.ok && m0.size >= boltMetaPageMin {
		return m0, readMeta(r, int64(m0.size))
	}
	for _, ps := range pageSizes() {
		if m1 = readMeta(r, int64(ps)); m1.ok && uint64(m1.size) == ps {
			return m0, m1
		}
	}
	return m0, readMeta(r, int64(os.Getpagesize()))
}

// pageSizes are the page sizes a store may have, the likeliest first:
// what this code creates stores with, then this machine's (bbolt's
// default, and what stores before format 3 have), then the other powers
// of two bbolt takes.
func pageSizes() []uint64 {
	out := []uint64{PageSize}
	if os := uint64(os.Getpagesize()); os != PageSize {
		out = append(out, os)
	}
	for ps := uint64(boltMetaPageMin); ps <= 1<<16; ps *= 2 {
		if ps != out[0] && (len(out) < 2 || ps != out[1]) {
			out = append(out, ps)
		}
	}
	return out
}

// CheckMeta checks bbolt's two meta pages in the store file r, which
// bbolt validates on Open but, finding the newest one damaged, silently
// replaces by the older one: the store then reads as it was one commit
// earlier, and nothing else can tell. CheckMeta reports that case (and
// any damaged meta page) as ErrCorrupt naming the page and the
// transaction the store now reads. A power loss during a commit can leave
// the same picture, with no commit lost that was acknowledged; the error
// says both.
func CheckMeta(r io.ReaderAt) error {
	m0, m1 := readMetas(r)
	switch {
	case m0.ok && m1.ok:
		return nil
	case !m0.ok && !m1.ok:
		return corruptf("eventlog: both bbolt meta pages are damaged (%s; %s)", errors.Safe(m0.why), errors.Safe(m1.why))
	}
	bad, good, goodMeta, why := 0, 1, m1, m0.why
	if m0.ok {
		bad, good, goodMeta, why = 1, 0, m0, m1.why
	}
	return errors.WithHint(corruptf("eventlog: bbolt meta page %d is damaged (%s): the store reads the commit of meta page %d (txid %d), and the commit after it, if there was one, is lost",
		errors.Safe(bad), errors.Safe(why), errors.Safe(good), errors.Safe(goodMeta.txid)),
		"a power loss while committing leaves the same picture without losing an acknowledged write; otherwise restore the store from a copy, or run 'logtool salvage'")
}

// Needs returns the size in bytes that the last transaction of the store
// file r needs, by its newest valid meta page (high-water mark × page
// size); ok is false when neither meta page is valid.
func Needs(r io.ReaderAt) (need int64, ok bool) {
	m, err := newestMeta(r)
	if err != nil {
		return 0, false
	}
	return int64(m.hw) * int64(m.size), true
}
