package stress_test

import (
	"encoding/binary"
	"fmt"
	"github.com/sessionlog/sessionlog/codec"
	"sort"

	"github.com/cockroachdb/errors"
)

// A pageMap says what every byte of a (clean) bbolt file is, so that the
// corruption sweep can tell where each flip landed: in a meta page, the
// freelist, a page no tree reaches (free), a page header, the element
// array of a branch or leaf, a key, or a value, and for a value which
// session's which record. It parses bbolt's file format (v2, as of bbolt
// v1.5: go.etcd.io/bbolt/internal/common) and eventlog's layout (its
// package doc) independently of both, from the file alone.

// bbolt's on-disk constants.
const (
	bbMagic          = 0xED0CDAED
	bbPageHeader     = 16 // id u64, flags u16, count u16, overflow u32
	bbElement        = 16 // branch: pos, ksize u32, pgid u64; leaf: flags, pos, ksize, vsize u32
	bbBucketHeader   = 16 // root pgid u64, sequence u64
	bbMetaSize       = 64 // magic … checksum
	bbBranchPage     = 0x01
	bbLeafPage       = 0x02
	bbFreelistPage   = 0x10
	bbBucketLeafFlag = 0x01
)

// Kinds of bytes.
type byteKind uint8

const (
	kindUnused       byteKind = iota // inside a live page, past its content
	kindMeta                         // pages 0 and 1
	kindFreelist                     // the freelist page(s)
	kindFree                         // a page no tree reaches
	kindPageHeader                   // the 16-byte header of a branch or leaf page
	kindElements                     // the element array of a branch or leaf page
	kindKey                          // a key
	kindBucketValue                  // a bucket header (and its inline page's header and elements)
	kindEventRecord                  // an event record (session, seq)
	kindHeaderRecord                 // a session's header record
	kindHeadRecord                   // a session's head record
	kindOtherValue                   // meta/format, or anything else
)

var kindNames = [...]string{"unused", "meta", "freelist", "free", "page-header", "elements", "key",
	"bucket-value", "event-record", "header-record", "head-record", "other-value"}

func (k byteKind) String() string { return kindNames[k] }

// region is a run of bytes of one kind.
type region struct {
	start, end int // [start, end)
	kind       byteKind
	session    string // for records and keys of a session
	seq        int64  // for event records (and their keys), else -1
}

// pageMap is the regions of a file, sorted, covering it whole.
type pageMap struct {
	pageSize int
	size     int
	regions  []region
}

// at returns the region holding byte off.
func (m *pageMap) at(off int) region {
	i := sort.Search(len(m.regions), func(i int) bool { return m.regions[i].end > off })
	return m.regions[i]
}

// mapPages maps the bbolt file b, which must be undamaged.
func mapPages(b []byte) (*pageMap, error) {
	if len(b) < 2*bbPageHeader+bbMetaSize {
		return nil, errors.New("corrupt_test: file too short for a bbolt file")
	}
	le := binary.LittleEndian
	if le.Uint32(b[bbPageHeader:]) != bbMagic {
		return nil, errors.New("corrupt_test: not a bbolt file")
	}
	ps := int(le.Uint32(b[bbPageHeader+8:]))
	if ps < 1024 || len(b)%ps != 0 {
		return nil, errors.Newf("corrupt_test: page size %d, file size %d", ps, len(b))
	}
	w := &walker{b: b, ps: ps, pages: make([]bool, len(b)/ps)}
	// The live meta is the one with the higher txid.
	meta := func(p int) (root, freelist, txid uint64) {
		m := b[p*ps+bbPageHeader:]
		return le.Uint64(m[16:]), le.Uint64(m[32:]), le.Uint64(m[48:])
	}
	r0, f0, t0 := meta(0)
	r1, f1, t1 := meta(1)
	root, freelist := r0, f0
	if t1 > t0 {
		root, freelist = r1, f1
	}
	w.add(region{start: 0, end: 2 * ps, kind: kindMeta, seq: -1})
	w.pages[0], w.pages[1] = true, true
	if freelist != 0xffffffffffffffff {
		if err := w.claim(int(freelist)); err != nil {
			return nil, err
		}
		n := 1 + int(le.Uint32(b[int(freelist)*ps+12:]))
		w.add(region{start: int(freelist) * ps, end: (int(freelist) + n) * ps, kind: kindFreelist, seq: -1})
	}
	if err := w.tree(int(root), nil); err != nil {
		return nil, err
	}
	for p, live := range w.pages {
		if !live {
			w.add(region{start: p * ps, end: (p + 1) * ps, kind: kindFree, seq: -1})
		}
	}
	sort.Slice(w.regions, func(i, j int) bool { return w.regions[i].start < w.regions[j].start })
	// Fill the gaps inside live pages (slack past their content).
	var all []region
	pos := 0
	for _, r := range w.regions {
		if r.start < pos {
			return nil, errors.Newf("corrupt_test: regions overlap at %d", r.start)
		}
		if r.start > pos {
			all = append(all, region{start: pos, end: r.start, kind: kindUnused, seq: -1})
		}
		all = append(all, r)
		pos = r.end
	}
	if pos < len(b) {
		all = append(all, region{start: pos, end: len(b), kind: kindUnused, seq: -1})
	}
	return &pageMap{pageSize: ps, size: len(b), regions: all}, nil
}

// walker collects the regions of the trees.
type walker struct {
	b       []byte
	ps      int
	pages   []bool // reached
	regions []region
}

func (w *walker) add(r region) {
	if r.end > r.start {
		w.regions = append(w.regions, r)
	}
}

// claim marks page p and its overflow pages reached.
func (w *walker) claim(p int) error {
	if p < 2 || p >= len(w.pages) {
		return errors.Newf("corrupt_test: page id %d out of range", p)
	}
	n := 1 + int(binary.LittleEndian.Uint32(w.b[p*w.ps+12:]))
	for i := p; i < p+n; i++ {
		if i >= len(w.pages) || w.pages[i] {
			return errors.Newf("corrupt_test: page %d reached twice", i)
		}
		w.pages[i] = true
	}
	return nil
}

// tree walks the bucket whose root is page p; path names the bucket
// (nil: the root bucket; then "sessions", the session id, "events").
func (w *walker) tree(p int, path []string) error {
	if err := w.claim(p); err != nil {
		return err
	}
	return w.page(p*w.ps, path, true)
}

// page walks the page whose header is at off (in the file; inline pages
// too). own says whether the page header is its own region (false for an
// inline page, whose header is part of its bucket value).
func (w *walker) page(off int, path []string, own bool) error {
	le := binary.LittleEndian
	b := w.b
	flags, count := le.Uint16(b[off+8:]), int(le.Uint16(b[off+10:]))
	kind := kindPageHeader
	if !own {
		kind = kindBucketValue
	}
	w.add(region{start: off, end: off + bbPageHeader, kind: kind, seq: -1})
	elems := off + bbPageHeader
	ekind := kindElements
	if !own {
		ekind = kindBucketValue
	}
	w.add(region{start: elems, end: elems + count*bbElement, kind: ekind, seq: -1})
	for i := 0; i < count; i++ {
		e := elems + i*bbElement
		switch flags {
		case bbBranchPage:
			pos, ksize, child := int(le.Uint32(b[e:])), int(le.Uint32(b[e+4:])), int(le.Uint64(b[e+8:]))
			w.add(region{start: e + pos, end: e + pos + ksize, kind: kindKey, seq: -1})
			if err := w.tree(child, path); err != nil {
				return err
			}
		case bbLeafPage:
			eflags, pos := le.Uint32(b[e:]), int(le.Uint32(b[e+4:]))
			ksize, vsize := int(le.Uint32(b[e+8:])), int(le.Uint32(b[e+12:]))
			key := string(b[e+pos : e+pos+ksize])
			v := e + pos + ksize
			r := keyRegion(path, key)
			r.start, r.end = e+pos, v
			w.add(r)
			if eflags&bbBucketLeafFlag != 0 {
				sub := append(append([]string(nil), path...), key)
				root := int(le.Uint64(b[v:]))
				if root != 0 {
					w.add(region{start: v, end: v + bbBucketHeader, kind: kindBucketValue, seq: -1})
					if err := w.tree(root, sub); err != nil {
						return err
					}
					continue
				}
				w.add(region{start: v, end: v + bbBucketHeader, kind: kindBucketValue, seq: -1})
				if err := w.page(v+bbBucketHeader, sub, false); err != nil {
					return err
				}
				continue
			}
			r = valueRegion(path, key, b[v:v+vsize])
			r.start, r.end = v, v+vsize
			w.add(r)
		default:
			return errors.Newf("corrupt_test: page at %d has flags %#x", off, flags)
		}
	}
	return nil
}

// keyRegion labels a key of the bucket at path.
func keyRegion(path []string, key string) region {
	r := region{kind: kindKey, seq: -1}
	if len(path) >= 2 && path[0] == "sessions" {
		r.session = path[1]
		if len(path) == 3 && len(key) == 8 {
			r.seq = int64(binary.BigEndian.Uint64([]byte(key)))
		}
	}
	return r
}

// valueRegion labels a value val of the bucket at path, following
// eventlog's layout: sessions/<id>/{header, head},
// sessions/<id>/events/<last seq>; an event value's seq is its first
// event's (a pack holds several, under the last one's seq).
func valueRegion(path []string, key string, val []byte) region {
	r := region{kind: kindOtherValue, seq: -1}
	switch {
	case len(path) == 3 && path[0] == "sessions" && path[2] == "events" && len(key) == 8:
		r.kind, r.session, r.seq = kindEventRecord, path[1], int64(binary.BigEndian.Uint64([]byte(key)))
		if codec.IsPack(val) {
			if evs, err := codec.DecodePack(val); err == nil {
				r.seq -= int64(len(evs)) - 1
			}
		}
	case len(path) == 2 && path[0] == "sessions" && key == "header":
		r.kind, r.session = kindHeaderRecord, path[1]
	case len(path) == 2 && path[0] == "sessions" && key == "head":
		r.kind, r.session = kindHeadRecord, path[1]
	}
	return r
}

// String describes a region for a report.
func (r region) String() string {
	s := fmt.Sprintf("%s [%d,%d)", r.kind, r.start, r.end)
	if r.session != "" {
		s += " session " + r.session
	}
	if r.seq >= 0 {
		s += fmt.Sprintf(" seq %d", r.seq)
	}
	return s
}
