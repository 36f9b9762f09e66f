package wal

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/internal/atomicfile"
	"github.com/sessionlog/sessionlog/internal/errclass"
)

// Options configure a WAL opened for writing.
type Options struct {
	// SegmentSize is the size of a segment file in bytes; 0 means
	// DefaultSegmentSize, and it is capped at MaxSegmentSize. A segment is
	// cut when the next record would not fit; a record larger than
	// SegmentSize gets a segment of its own.
	SegmentSize int64
	// NoSync skips every fdatasync and fsync (tests, bulk loads): an
	// appended record survives a process crash, not a power cut.
	NoSync bool
	// OnCut, when set, is called with the new segment's file name as a
	// segment is about to be created, before anything of it is written
	// (the crash proofs log it, to tell a kill that lands mid-cut).
	OnCut func(name string)
}

// WAL is a write-ahead log open for appending. Append, Release and Close
// may be called from any goroutine but are serialized by a mutex: the WAL
// is meant for one writer (the committer), which batches appends itself.
// Last and Size may be called at any time.
type WAL struct {
	dir  string
	opts Options

	mu     sync.Mutex
	segs   []segment // live segments; the last is the one being written
	f      *os.File  // the last segment, nil until the first Append if none
	pos    int64     // offset of the next record in f
	next   uint64    // lsn of the next record
	link   uint32    // crc of the last record
	size   int64     // bytes of all live segment files
	buf    []byte
	broken error // the failure that broke the WAL, nil if none
	closed bool

	// writeHook, when set (tests), replaces the write of a record.
	writeHook func(f *os.File, b []byte, off int64) error
}

// Open opens the WAL in dir for appending, creating dir if missing. It
// reads every segment in order, calls fn for each intact record with
// lsn > after, in lsn order (the payload is valid only during the call),
// and positions the writer after the last intact record: a torn tail is
// dropped (its bytes zeroed, keeping the preallocation) and reported, and
// an unwritten last segment is deleted. The next Append gets lsn Report.Last+1, or
// after+1 when no record is present. Records with lsn <= after are checked
// but not passed to fn. An error from fn aborts Open and is returned.
func Open(dir string, after uint64, opts Options, fn func(lsn uint64, payload []byte) error) (*WAL, Report, error) {
	if opts.SegmentSize <= 0 {
		opts.SegmentSize = DefaultSegmentSize
	}
	opts.SegmentSize = min(opts.SegmentSize, MaxSegmentSize)
	if err := mkdir(dir, opts.NoSync); err != nil {
		return nil, Report{}, err
	}
	s, err := read(dir, after, fn)
	if err != nil {
		return nil, s.report, err
	}
	for _, sg := range s.segs {
		if err := restrict(sg.path, filePerm); err != nil {
			return nil, s.report, err
		}
	}
	w := &WAL{dir: dir, opts: opts, segs: s.segs, next: s.next, link: s.link}
	if s.unwritten != "" {
		if err := os.Remove(s.unwritten); err != nil {
			return nil, s.report, errors.Wrapf(err, "wal: remove unwritten segment %s", errors.Safe(s.unwritten))
		}
		if err := w.syncDir(); err != nil {
			return nil, s.report, err
		}
	}
	if len(w.segs) > 0 {
		last := &w.segs[len(w.segs)-1]
		f, err := os.OpenFile(last.path, os.O_RDWR, 0)
		if err != nil {
			return nil, s.report, errors.Wrapf(err, "wal: open %s", errors.Safe(last.path))
		}
		if s.tornOff >= 0 {
			// Zero the torn bytes rather than truncate, to keep the
			// segment's preallocation.
			if err := zeroFill(f, s.tornOff, s.tornOff+s.report.TornBytes); err == nil {
				err = w.sync(f)
			}
			if err != nil {
				f.Close()
				return nil, s.report, errors.Wrapf(err, "wal: drop torn tail of %s", errors.Safe(last.path))
			}
		}
		w.f, w.pos = f, last.end
	}
	for _, sg := range w.segs {
		w.size += sg.size
	}
	return w, s.report, nil
}

// Append writes one record and returns its lsn once it is written and
// fdatasynced (unless Options.NoSync). After a failed write or sync every
// later Append returns ErrBroken.
func (w *WAL) Append(payload []byte) (uint64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.closed:
		return 0, errors.Wrapf(ErrClosed, "wal: append to %s", errors.Safe(w.dir))
	case w.broken != nil:
		return 0, errclass.Mark(errors.Wrapf(w.broken, "wal: %s refuses appends after a failed write", errors.Safe(w.dir)), ErrBroken)
	case len(payload) > MaxPayload:
		return 0, errors.Wrapf(ErrTooLarge, "wal: payload of %d bytes, at most %d", errors.Safe(len(payload)), errors.Safe(MaxPayload))
	}
	n := int64(frameSize + len(payload))
	if w.f == nil || (w.pos > headerSize && w.pos+n > w.opts.SegmentSize) {
		if err := w.cut(); err != nil {
			w.broken = err
			return 0, errclass.Mark(err, ErrBroken)
		}
	}
	if err := w.prefill(w.pos + n); err != nil {
		w.broken = err
		return 0, errclass.Mark(err, ErrBroken)
	}
	lsn := w.next
	var crc uint32
	w.buf, crc = appendFrame(w.buf[:0], lsn, w.link, payload)
	err := w.write(w.buf, w.pos)
	if err == nil {
		err = w.sync(w.f)
	}
	if err != nil {
		w.broken = errors.Wrapf(err, "wal: write lsn %d at %s@%d", errors.Safe(lsn), errors.Safe(filepath.Base(w.f.Name())), errors.Safe(w.pos))
		return 0, errclass.Mark(w.broken, ErrBroken)
	}
	if cap(w.buf) > 1<<20 {
		w.buf = nil // do not pin a large record's buffer
	}
	w.pos += n
	w.segs[len(w.segs)-1].end = w.pos
	w.next, w.link = lsn+1, crc
	return lsn, nil
}

func (w *WAL) write(b []byte, off int64) error {
	if w.writeHook != nil {
		return w.writeHook(w.f, b, off)
	}
	_, err := w.f.WriteAt(b, off)
	return err
}

// cut starts a new segment for the next record: it writes the header,
// syncs it and then the directory, so the new name is durable before a
// record in it is. Append's prefill then fills it with zeros.
func (w *WAL) cut() error {
	if w.f != nil {
		if err := w.f.Close(); err != nil {
			return errors.Wrapf(err, "wal: close %s", errors.Safe(w.f.Name()))
		}
		w.f = nil
	}
	path := filepath.Join(w.dir, segmentName(w.next))
	if w.opts.OnCut != nil {
		w.opts.OnCut(filepath.Base(path))
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, filePerm)
	if err != nil {
		return errors.Wrapf(err, "wal: create segment")
	}
	hdr := appendHeader(nil, header{first: w.next, link: w.link})
	_, err = f.WriteAt(hdr, 0)
	if err == nil {
		err = w.sync(f)
	}
	if err == nil {
		err = w.syncDir()
	}
	if err != nil {
		f.Close()
		return errors.Wrapf(err, "wal: create segment %s", errors.Safe(filepath.Base(path)))
	}
	w.segs = append(w.segs, segment{path: path, first: w.next, size: headerSize, end: headerSize})
	w.size += headerSize
	w.f, w.pos = f, headerSize
	return nil
}

// prefillStep is how far ahead of the records a segment is filled with
// zeros (see doc.go, Preallocation).
const prefillStep = 4 << 20

// prefill makes the segment being written at least end bytes long, filling
// it with zeros up to prefillStep bytes ahead (not past SegmentSize), so
// that most records are written over zeros and their fdatasync changes no
// metadata. The record's own fdatasync makes the new size durable.
func (w *WAL) prefill(end int64) error {
	seg := &w.segs[len(w.segs)-1]
	if end <= seg.size {
		return nil
	}
	to := max(end, min(seg.size+prefillStep, w.opts.SegmentSize))
	if err := zeroFill(w.f, seg.size, to); err != nil {
		return errors.Wrapf(err, "wal: preallocate %s", errors.Safe(filepath.Base(seg.path)))
	}
	w.size += to - seg.size
	seg.size = to
	return nil
}

// Last returns the lsn of the last record appended or read (after, if
// none).
func (w *WAL) Last() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.next - 1
}

// Size returns the bytes of all live segment files, preallocated zeros
// included (at most 4 MiB past the last record of a segment).
func (w *WAL) Size() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.size
}

// Release deletes every segment other than the one being written whose
// records all have lsn <= applied, then syncs the directory (unless
// NoSync). It never deletes a record with lsn > applied. The files are
// deleted outside the lock, so a Release does not delay an Append.
func (w *WAL) Release(applied uint64) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return errors.Wrapf(ErrClosed, "wal: release in %s", errors.Safe(w.dir))
	}
	n := 0
	// Segment i holds lsns segs[i].first .. segs[i+1].first-1.
	for n+1 < len(w.segs) && w.segs[n+1].first-1 <= applied {
		n++
	}
	gone := append([]segment(nil), w.segs[:n]...)
	for _, sg := range gone {
		w.size -= sg.size
	}
	w.segs = append(w.segs[:0], w.segs[n:]...)
	w.mu.Unlock()
	if n == 0 {
		return nil
	}
	for _, sg := range gone {
		if err := os.Remove(sg.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			// Left on disk, it is read and checked again by the next Open,
			// and released then.
			return errors.Wrapf(err, "wal: release %s", errors.Safe(filepath.Base(sg.path)))
		}
	}
	return w.syncDir()
}

// Close syncs and closes the segment being written. It is idempotent.
func (w *WAL) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.f == nil {
		return nil
	}
	var err error
	if w.broken == nil {
		err = w.sync(w.f)
	}
	err = errors.CombineErrors(err, w.f.Close())
	w.f = nil
	return errors.Wrapf(err, "wal: close %s", errors.Safe(w.dir))
}

// Remove deletes every segment in dir and dir itself, then syncs dir's
// parent. Another file in dir makes it fail. A missing dir is nil.
func Remove(dir string) error {
	paths, err := Segments(dir)
	if err != nil {
		return err
	}
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return errors.Wrapf(err, "wal: remove %s", errors.Safe(p))
		}
	}
	if err := os.Remove(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return errors.Wrapf(err, "wal: remove %s", errors.Safe(dir))
	}
	return syncDir(filepath.Dir(dir))
}

// sync fdatasyncs f unless NoSync.
func (w *WAL) sync(f *os.File) error {
	if w.opts.NoSync {
		return nil
	}
	return fdatasync(f)
}

func (w *WAL) syncDir() error {
	if w.opts.NoSync {
		return nil
	}
	return syncDir(w.dir)
}

func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return errors.Wrapf(err, "wal: fdatasync %s", errors.Safe(filepath.Base(f.Name())))
		}
	}
}

// The permissions of what the WAL creates: its records are the store's
// content (prompts, tool results) before they are applied, so only the
// owner reads them, as with the store file itself. A stricter umask makes
// them stricter still.
const (
	filePerm fs.FileMode = 0o600
	dirPerm  fs.FileMode = 0o700
)

// restrict takes the group's and others' permissions off path when it has
// any beyond perm (a WAL written before they were restricted, or under a
// looser setting); it never adds a permission.
func restrict(path string, perm fs.FileMode) error {
	fi, err := os.Stat(path)
	if err != nil {
		return errors.Wrapf(err, "wal: read permissions of %s", errors.Safe(filepath.Base(path)))
	}
	mode := fi.Mode().Perm()
	if mode&^perm == 0 {
		return nil
	}
	return errors.Wrapf(os.Chmod(path, mode&perm), "wal: restrict permissions of %s", errors.Safe(filepath.Base(path)))
}

// mkdir creates dir if it is missing and makes its name durable; an
// existing dir loses the group's and others' permissions.
func mkdir(dir string, noSync bool) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return errors.Newf("wal: %s is not a directory", errors.Safe(dir))
		}
		return restrict(dir, dirPerm)
	}
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return errors.Wrapf(err, "wal: create %s", errors.Safe(dir))
	}
	if noSync {
		return nil
	}
	return syncDir(filepath.Dir(dir))
}

// syncDir fsyncs the directory dir (atomicfile.SyncDir, the one
// definition): a filesystem that cannot sync directories is taken as
// having nothing to sync.
func syncDir(dir string) error {
	return errors.Wrap(atomicfile.SyncDir(dir), "wal")
}
