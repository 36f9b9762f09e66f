package boltfmt

import (
	"unsafe"

	"github.com/cockroachdb/errors"
	bolt "go.etcd.io/bbolt"

	"github.com/sessionlog/sessionlog/codec"
)

// The values bbolt hands out alias its memory map, and their sizes come
// from the page they sit on: a damaged page can claim up to 4 GiB, or place
// a value past the end of the file. Copying such a value faults past the
// map, or first allocates gigabytes (and under the race detector shadows
// them all: seconds per read, gigabytes of memory). So every value is
// checked against the pages the transaction can see before it is read.

// Bounds is the part of the memory map a transaction's pages occupy:
// [lo, hi), hi from the transaction's high-water mark, which a store never
// exceeds. A value can also lie outside the map: in a page a write
// transaction built in memory, or in an inline bucket that bbolt copied to
// the heap to align it (an inline bucket is smaller than a page).
type Bounds struct {
	lo, hi uintptr
	// outside is the longest value that may lie outside the map.
	outside int
}

func BoundsOf(tx *bolt.Tx) Bounds {
	info := tx.DB().Info()
	m := Bounds{lo: info.Data, hi: info.Data + uintptr(tx.Size()), outside: info.PageSize}
	if tx.Writable() {
		m.outside = codec.MaxPack
	}
	return m
}

// Holds reports whether v can be read: no longer than a pack, and
// inside the transaction's pages, or short enough for a page built in
// memory.
func (m Bounds) Holds(v []byte) bool {
	if len(v) > codec.MaxPack {
		return false
	}
	if len(v) == 0 {
		return true
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(v)))
	if p < m.lo || p >= m.hi {
		return len(v) <= m.outside
	}
	return uintptr(len(v)) <= m.hi-p
}

// Check returns nil when m holds v, else an ErrCorrupt error naming what
// v is.
func (m Bounds) Check(v []byte, what string) error {
	if m.Holds(v) {
		return nil
	}
	return corruptf("eventlog: %s: a value of %d bytes that lies outside the store's pages (a damaged page)",
		errors.Safe(what), errors.Safe(len(v)))
}
