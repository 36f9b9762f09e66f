package boltfmt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"math"

	"github.com/cockroachdb/errors"
)

// bbolt trusts its pages: the sizes and offsets of a page's elements, the
// page ids in branch elements and bucket headers, are used to build
// pointers into the memory map without a check. A damaged one makes bbolt
// read past the page, fault, or (under the race detector's checkptr) die
// of a fatal error no recover catches. So before bbolt reads a store,
// CheckPages walks the tree bbolt will read, from the file with ReadAt,
// and checks every page and element against the page's bounds and the
// file's size; the readers then stop before the damage.
//
// bbolt's page layout (go.etcd.io/bbolt internal/common): a 16-byte
// header (id 8, flags 2, count 2, overflow 4), then count elements of 16
// bytes: a branch element is pos 4, ksize 4, child page id 8; a leaf
// element is flags 4, pos 4, ksize 4, vsize 4, its key at the element's
// own offset + pos and its value right after the key. A leaf element with
// flag 1 is a bucket: its value is a 16-byte bucket header (root page id,
// sequence), followed, when the root is 0, by the inline page holding the
// bucket's elements. A freelist page holds count page ids of 8 bytes (the
// count in the first id when it is 0xFFFF).
const (
	pageBranch   = 0x01
	pageLeaf     = 0x02
	pageFreelist = 0x10
	elemSize     = 16
	bucketFlag   = 0x01
	bucketHeader = 16
	noFreelist   = math.MaxUint64
	// maxTreeDepth bounds the walk: a B+tree of a store never nears it.
	maxTreeDepth = 64
)

// PageDamage is what CheckPages found.
type PageDamage struct {
	// Store is damage above the sessions (the meta pages, the root, the
	// meta and sessions buckets): nothing can be read safely. Nil when
	// there is none.
	Store error
	// Freelist is damage to the freelist page, which only a writer reads
	// (bbolt loads it to open the file for writing): such a store opens
	// read-only. Nil when there is none.
	Freelist error
	// Sessions maps each damaged session to where its damage starts.
	Sessions map[string]SessionDamage
	// Pages counts the pages checked, Events the records found in the
	// sessions' events buckets.
	Pages  int
	Events int64
}

// SessionDamage is where a session's damage starts.
type SessionDamage struct {
	// From is the first seq whose record cannot be read safely: the
	// records before it can. -1 when the session's own bucket (its head
	// and header records, the root of its events) is damaged.
	From int64
	// Err says what is damaged, naming the page (not the session: the
	// reader's error names it).
	Err error
}

// Damaged reports whether anything is damaged.
func (d *PageDamage) Damaged() bool {
	return d.Store != nil || d.Freelist != nil || len(d.Sessions) > 0
}

// Err returns the error for reading session id from seq from on (from
// -1: its bucket, head and header), nil when that is safe, and when d is
// nil.
func (d *PageDamage) Err(id string, from int64) error {
	if d == nil {
		return nil
	}
	if d.Store != nil {
		return d.Store
	}
	sd, ok := d.Sessions[id]
	if !ok || from < sd.From {
		return nil
	}
	return sd.Err
}

// CheckPages checks the bbolt tree of the store file r of size bytes, as
// bbolt will read it: from the valid meta page with the highest txid, or
// from root when root is not 0 (a tree found by other means; page size
// pageSize and high-water mark hw, in pages, then apply). It reads the
// header and elements of every page in the tree, not the values of event
// records; a store of N pages costs N small reads.
func CheckPages(r io.ReaderAt, size int64, root, pageSize, hw uint64) PageDamage {
	d := PageDamage{Sessions: map[string]SessionDamage{}}
	w := &pageWalker{r: r, size: size, seen: map[uint64]bool{}}
	if root == 0 {
		m, err := newestMeta(r)
		if err != nil {
			d.Store = err
			return d
		}
		root, pageSize, hw = m.root, uint64(m.size), m.hw
		if m.freelist != noFreelist && pageSize >= boltMetaPageMin && pageSize <= 1<<20 {
			w.ps, w.hw = pageSize, hw
			d.Freelist = w.freelist(m.freelist)
		}
	}
	w.ps, w.hw = pageSize, hw
	if pageSize < boltMetaPageMin || pageSize > 1<<20 {
		d.Store = corruptf("eventlog: the meta page's page size %d is not one bbolt writes", errors.Safe(pageSize))
		return d
	}
	d.Store = w.root(root, &d)
	d.Pages = len(w.seen)
	return d
}

// pageWalker reads and checks pages.
type pageWalker struct {
	// ordered checks that the keys of each page are in order, and not
	// below the key the branch above gives the page (events buckets).
	ordered bool
	r       io.ReaderAt
	size    int64
	ps, hw  uint64
	seen    map[uint64]bool
}

// node is a checked page: its elements and the bytes they point into.
type node struct {
	id    uint64 // 0 for an inline page
	flags uint16
	count int
	b     []byte // the page from its header on: header, elements, keys and values
}

func (w *pageWalker) damagef(id uint64, format string, args ...interface{}) error {
	return corruptf("bbolt page %d: %s", errors.Safe(id), errors.Safe(fmt.Sprintf(format, args...)))
}

// page reads and checks page id: its header, and that its elements, keys
// and values lie within it.
func (w *pageWalker) page(id uint64) (*node, error) {
	if id < 2 || id >= w.hw {
		return nil, w.damagef(id, "out of the store's %d pages", w.hw)
	}
	if w.seen[id] {
		return nil, w.damagef(id, "reached twice in the tree")
	}
	w.seen[id] = true
	var h [16]byte
	off := int64(id * w.ps)
	if _, err := w.r.ReadAt(h[:], off); err != nil {
		return nil, w.damagef(id, "unreadable: %v", err)
	}
	if got := binary.LittleEndian.Uint64(h[0:]); got != id {
		return nil, w.damagef(id, "it says it is page %d", got)
	}
	span := (uint64(binary.LittleEndian.Uint32(h[12:])) + 1) * w.ps
	if id+span/w.ps > w.hw || off+int64(span) > w.size {
		return nil, w.damagef(id, "its %d overflow pages run past the end of the store", span/w.ps-1)
	}
	b := make([]byte, span)
	if _, err := w.r.ReadAt(b, off); err != nil {
		return nil, w.damagef(id, "unreadable: %v", err)
	}
	return w.parse(id, b)
}

// parse checks the page b (inline when id is 0).
func (w *pageWalker) parse(id uint64, b []byte) (*node, error) {
	if len(b) < 16 {
		return nil, w.damagef(id, "an inline page of %d bytes", len(b))
	}
	n := &node{id: id, flags: binary.LittleEndian.Uint16(b[8:]), count: int(binary.LittleEndian.Uint16(b[10:])), b: b}
	if n.flags != pageBranch && n.flags != pageLeaf {
		return nil, w.damagef(id, "flags %#x, neither branch nor leaf", n.flags)
	}
	if 16+n.count*elemSize > len(b) {
		return nil, w.damagef(id, "%d elements do not fit in %d bytes", n.count, len(b))
	}
	if n.flags == pageBranch && n.count == 0 {
		return nil, w.damagef(id, "a branch page with no elements")
	}
	for i := 0; i < n.count; i++ {
		e := 16 + i*elemSize
		var end uint64
		if n.flags == pageBranch {
			end = uint64(e) + uint64(binary.LittleEndian.Uint32(b[e:])) + uint64(binary.LittleEndian.Uint32(b[e+4:]))
		} else {
			end = uint64(e) + uint64(binary.LittleEndian.Uint32(b[e+4:])) +
				uint64(binary.LittleEndian.Uint32(b[e+8:])) + uint64(binary.LittleEndian.Uint32(b[e+12:]))
		}
		if end > uint64(len(b)) {
			return nil, w.damagef(id, "element %d ends at byte %d of a page of %d", i, end, len(b))
		}
	}
	return n, nil
}

// key returns element i's key; value its value (leaf) and whether it is a
// bucket; child the page of branch element i.
func (n *node) key(i int) []byte {
	e := 16 + i*elemSize
	if n.flags == pageBranch {
		pos, ks := int(binary.LittleEndian.Uint32(n.b[e:])), int(binary.LittleEndian.Uint32(n.b[e+4:]))
		return n.b[e+pos : e+pos+ks]
	}
	pos, ks := int(binary.LittleEndian.Uint32(n.b[e+4:])), int(binary.LittleEndian.Uint32(n.b[e+8:]))
	return n.b[e+pos : e+pos+ks]
}

func (n *node) value(i int) (v []byte, bucket bool) {
	e := 16 + i*elemSize
	flags := binary.LittleEndian.Uint32(n.b[e:])
	pos, ks, vs := int(binary.LittleEndian.Uint32(n.b[e+4:])), int(binary.LittleEndian.Uint32(n.b[e+8:])), int(binary.LittleEndian.Uint32(n.b[e+12:]))
	return n.b[e+pos+ks : e+pos+ks+vs], flags&bucketFlag != 0
}

func (n *node) child(i int) uint64 {
	return binary.LittleEndian.Uint64(n.b[16+i*elemSize+8:])
}

// visit calls fn with every leaf element of the bucket whose root page is
// root (or whose inline page is inline), in key order; lo is the lowest
// key the subtree may hold (from the branch above), for fn's error. A
// damaged page stops the walk with its error and the lowest key of what
// could not be walked.
func (w *pageWalker) visit(root uint64, inline []byte, depth int, lo []byte,
	fn func(key, value []byte, bucket bool) error) (bad []byte, err error) {
	if depth > maxTreeDepth {
		return lo, w.damagef(root, "the tree is deeper than %d", maxTreeDepth)
	}
	var n *node
	if root == 0 {
		n, err = w.parse(0, inline)
	} else {
		n, err = w.page(root)
	}
	if err != nil {
		return lo, err
	}
	if w.ordered {
		// Seeks trust the order of keys, a walk does not see it: keys out
		// of order send a seek astray while every page reads.
		for i := 1; i < n.count; i++ {
			if bytes.Compare(n.key(i-1), n.key(i)) >= 0 {
				return lo, w.damagef(root, "its keys are out of order at element %d", i)
			}
		}
		if n.count > 0 && lo != nil && bytes.Compare(n.key(0), lo) < 0 {
			return lo, w.damagef(root, "its first key sorts before the key the page above gives it")
		}
	}
	if n.flags == pageBranch {
		for i := 0; i < n.count; i++ {
			if bad, err := w.visit(n.child(i), nil, depth+1, n.key(i), fn); err != nil {
				return bad, err
			}
		}
		return nil, nil
	}
	for i := 0; i < n.count; i++ {
		v, bucket := n.value(i)
		if err := fn(n.key(i), v, bucket); err != nil {
			return lo, err
		}
	}
	return nil, nil
}

// bucket returns the root page and inline page of a bucket value.
func (w *pageWalker) bucket(v []byte, what string) (root uint64, inline []byte, err error) {
	if len(v) < bucketHeader {
		return 0, nil, corruptf("bucket %s: a bucket header of %d bytes", errors.Safe(what), errors.Safe(len(v)))
	}
	root = binary.LittleEndian.Uint64(v)
	if root == 0 {
		inline = v[bucketHeader:]
	}
	return root, inline, nil
}

// root walks the root bucket: the meta bucket whole, and the sessions
// bucket, attributing damage inside a session's bucket to that session.
func (w *pageWalker) root(root uint64, d *PageDamage) error {
	_, err := w.visit(root, nil, 0, nil, func(k, v []byte, bucket bool) error {
		if !bucket {
			return nil // not the layout's: eventlog's own checks refuse it
		}
		r, inline, err := w.bucket(v, fmt.Sprintf("%q", k))
		if err != nil {
			return err
		}
		if !bytes.Equal(k, BucketSessions) {
			_, err := w.visit(r, inline, 1, nil, func(_, v []byte, bucket bool) error {
				if bucket {
					return corruptf("bucket %q holds a bucket", errors.Safe(string(k)))
				}
				return nil
			})
			return err
		}
		_, err = w.visit(r, inline, 1, nil, func(id, v []byte, bucket bool) error {
			if bucket {
				w.session(string(id), v, d)
			}
			return nil
		})
		return err
	})
	return err
}

// session walks a session's bucket and its events bucket, noting where
// damage starts.
func (w *pageWalker) session(id string, v []byte, d *PageDamage) {
	whole := func(err error) {
		d.Sessions[id] = SessionDamage{From: -1, Err: errors.Wrap(err, "its bucket sits on a damaged page")}
	}
	r, inline, err := w.bucket(v, fmt.Sprintf("sessions/%q", id))
	if err != nil {
		whole(err)
		return
	}
	// The events bucket is the session bucket's only sub-bucket; its key
	// may be damaged (eventlog's readers report that, salvage finds it
	// by the walk), so every sub-bucket is checked as one.
	var subs [][]byte
	if _, err := w.visit(r, inline, 2, nil, func(k, v []byte, bucket bool) error {
		if bucket {
			subs = append(subs, v)
		}
		return nil
	}); err != nil {
		whole(err)
		return
	}
	// A value is keyed by the seq of the last event it holds (values.go):
	// the damage starts after the last key read before it.
	from := int64(0)
	err = nil
	for _, events := range subs {
		r, inline, berr := w.bucket(events, fmt.Sprintf("sessions/%q/events", id))
		if berr != nil {
			whole(berr)
			return
		}
		w.ordered = true // a value is found by a seek for its seqs
		_, err = w.visit(r, inline, 3, nil, func(k, v []byte, bucket bool) error {
			if bucket {
				return corruptf("session %q: the events bucket holds a bucket", errors.Safe(id))
			}
			if len(k) == 8 && k[0]&0x80 == 0 {
				from = max(from, int64(binary.BigEndian.Uint64(k))+1)
			}
			d.Events++
			return nil
		})
		w.ordered = false
		if err != nil {
			break
		}
	}
	if err == nil {
		return
	}
	d.Sessions[id] = SessionDamage{From: from, Err: errors.Wrapf(err,
		"the records from seq %d on sit on a damaged page", errors.Safe(from))}
}

// freelist checks the freelist page.
func (w *pageWalker) freelist(id uint64) error {
	if id < 2 || id >= w.hw {
		return w.damagef(id, "the freelist page is out of the store's %d pages", w.hw)
	}
	var h [24]byte
	off := int64(id * w.ps)
	if _, err := w.r.ReadAt(h[:], off); err != nil {
		return w.damagef(id, "the freelist page is unreadable: %v", err)
	}
	if binary.LittleEndian.Uint64(h[0:]) != id || binary.LittleEndian.Uint16(h[8:]) != pageFreelist {
		return w.damagef(id, "not the freelist page the meta page names")
	}
	span := (uint64(binary.LittleEndian.Uint32(h[12:])) + 1) * w.ps
	count, idx := uint64(binary.LittleEndian.Uint16(h[10:])), uint64(0)
	if count == 0xFFFF {
		count, idx = binary.LittleEndian.Uint64(h[16:]), 1
	}
	if id+span/w.ps > w.hw || off+int64(span) > w.size || count > span/8 || 16+(idx+count)*8 > span {
		return w.damagef(id, "the freelist's %d page ids do not fit in it", count)
	}
	return nil
}

// newestMeta returns the meta page bbolt uses: the valid one with the
// highest txid.
func newestMeta(r io.ReaderAt) (metaPage, error) {
	m0, m1 := readMetas(r)
	switch {
	case m0.ok && m1.ok && m1.txid > m0.txid, !m0.ok && m1.ok:
		return m1, nil
	case m0.ok:
		return m0, nil
	}
	return metaPage{}, corruptf("eventlog: both bbolt meta pages are damaged (%s; %s)", errors.Safe(m0.why), errors.Safe(m1.why))
}

// Tree is a bbolt tree found from the pages of a store whose meta pages
// are both damaged (FindTree).
type Tree struct {
	// PageSize and Root are the page size and the root bucket's page; HW
	// is the high-water mark, from the file's size.
	PageSize, Root, HW uint64
	// Candidates counts the pages that look like a root: the root of
	// each commit is written to a new page, so older ones linger in
	// freed pages until they are reused.
	Candidates int
	// Damage is what CheckPages finds in the tree.
	Damage PageDamage
}

// FindTree finds the tree of a store from its pages, for a store whose
// meta pages are both damaged: every page that looks like the root bucket
// of a store (a leaf holding exactly the buckets "meta" and "sessions") is
// checked with CheckPages, and the one whose tree is sound above its
// sessions and holds the most events is taken; a store only grows, so
// that is the newest the pages still hold. The page size is the damaged
// meta page's when it reads as one bbolt writes, else every one a store
// may have (pageSizes) is tried: read at the wrong size, a root's children
// are not pages, and its tree is damaged above the sessions.
// ErrCorrupt when no page looks like a root.
func FindTree(r io.ReaderAt, size int64) (Tree, error) {
	sizes := pageSizes()
	var h [boltPageHeader + boltMetaSize]byte
	if _, err := r.ReadAt(h[:], 0); err == nil {
		if p := uint64(binary.LittleEndian.Uint32(h[boltPageHeader+8:])); p >= boltMetaPageMin && p <= 1<<16 && p&(p-1) == 0 {
			sizes = []uint64{p}
		}
	}
	var best Tree
	found := false
	for _, ps := range sizes {
		hw := uint64(size) / ps
		w := &pageWalker{r: r, size: size, ps: ps, hw: hw}
		for id := uint64(2); id < hw; id++ {
			w.seen = map[uint64]bool{}
			n, err := w.page(id)
			if err != nil || n.flags != pageLeaf || n.count != 2 {
				continue
			}
			k0, k1 := n.key(0), n.key(1)
			_, b0 := n.value(0)
			_, b1 := n.value(1)
			if !b0 || !b1 || !bytes.Equal(k0, BucketMeta) || !bytes.Equal(k1, BucketSessions) {
				continue
			}
			t := Tree{PageSize: ps, Root: id, HW: hw, Damage: CheckPages(r, size, id, ps, hw)}
			best.Candidates++
			switch {
			case !found,
				best.Damage.Store != nil && t.Damage.Store == nil,
				(best.Damage.Store == nil) == (t.Damage.Store == nil) && t.Damage.Events > best.Damage.Events:
				t.Candidates = best.Candidates
				best, found = t, true
			}
		}
	}
	if !found {
		return Tree{}, corruptf("eventlog: no page looks like the root of a store's tree, at any page size")
	}
	return best, nil
}

// MetaPages returns the two meta pages of a store whose tree is t, as
// bbolt writes them (no freelist: bbolt rebuilds it, and a read-only open
// never needs it), with transaction id txid.
func (t Tree) MetaPages(txid uint64) []byte {
	b := make([]byte, 2*t.PageSize)
	for i := uint64(0); i < 2; i++ {
		p := b[i*t.PageSize:]
		binary.LittleEndian.PutUint64(p[0:], i)
		binary.LittleEndian.PutUint16(p[8:], 0x04) // meta page
		m := p[boltPageHeader:]
		binary.LittleEndian.PutUint32(m[0:], boltMagic)
		binary.LittleEndian.PutUint32(m[4:], boltVersion)
		binary.LittleEndian.PutUint32(m[8:], uint32(t.PageSize))
		binary.LittleEndian.PutUint64(m[16:], t.Root)
		binary.LittleEndian.PutUint64(m[32:], noFreelist)
		binary.LittleEndian.PutUint64(m[40:], t.HW)
		binary.LittleEndian.PutUint64(m[48:], txid+i)
		h := fnv.New64a()
		h.Write(m[:boltMetaSummed])
		binary.LittleEndian.PutUint64(m[boltMetaSummed:], h.Sum64())
	}
	return b
}
