package powerfs

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/cockroachdb/errors"
	"golang.org/x/sys/unix"
)

// Sector is the unit a torn write is cut in.
const Sector = 512

// op is one unsynced change of a file's bytes or size, in the order they
// came: a write of [off, off+n), or a truncation to size (trunc).
type op struct {
	off, n int64
	trunc  bool
	size   int64 // the size after the op
}

// fileState is what a file's last sync left durable, for a file changed
// since then. It exists only while the file has unsynced changes.
type fileState struct {
	durableSize int64
	// undo holds, per sector first changed since the last sync, the
	// sector's durable bytes (zeros past durableSize).
	undo map[int64][]byte
	ops  []op
}

// dirState is a directory whose names changed since its last sync.
type dirState struct {
	path string // its path on the disk
	// durable holds the non-directory entries it had at its last sync.
	durable map[string]uint64
}

// fileOf returns the state of the file open as fd with inode ino, making
// it (everything durable so far) and the file's scratch link if needed.
// The caller holds p.mu.
func (p *FS) fileOf(fd int, ino uint64) (*fileState, error) {
	if s, ok := p.files[ino]; ok {
		return s, nil
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, errors.Wrap(err, "powerfs: fstat")
	}
	if err := p.holdFd(fd, ino); err != nil {
		return nil, err
	}
	s := &fileState{durableSize: st.Size, undo: map[int64][]byte{}}
	p.files[ino] = s
	return s, nil
}

// save keeps the durable bytes of the sectors of [off, end) not saved yet.
func (s *fileState) save(fd int, off, end int64) error {
	for sec := off / Sector; sec*Sector < end; sec++ {
		if _, ok := s.undo[sec]; ok {
			continue
		}
		b := make([]byte, Sector)
		start := sec * Sector
		if start < s.durableSize {
			n, err := syscall.Pread(fd, b, start)
			if err != nil {
				return errors.Wrapf(err, "powerfs: save sector %d", sec)
			}
			// Past the end of the file, or past the durable size, is zeros.
			clear(b[max(0, min(int64(n), s.durableSize-start)):])
		}
		s.undo[sec] = b
	}
	return nil
}

// holdFd links the file open as fd into the scratch directory, once.
func (p *FS) holdFd(fd int, ino uint64) error {
	if p.held[ino] {
		return nil
	}
	if err := unix.Linkat(fd, "", unix.AT_FDCWD, p.scratchPath(ino), unix.AT_EMPTY_PATH); err != nil && !errors.Is(err, syscall.EEXIST) {
		return errors.Wrap(err, "powerfs: hold a written file")
	}
	p.held[ino] = true
	return nil
}

// holdPath links the non-directory at path into the scratch directory,
// once; it returns its inode, or 0 when path is absent or a directory.
func (p *FS) holdPath(path string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return 0, nil
		}
		return 0, errors.Wrap(err, "powerfs: lstat")
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
		return 0, nil
	}
	if p.held[st.Ino] {
		return st.Ino, nil
	}
	if err := unix.Linkat(unix.AT_FDCWD, path, unix.AT_FDCWD, p.scratchPath(st.Ino), 0); err != nil && !errors.Is(err, syscall.EEXIST) {
		return 0, errors.Wrap(err, "powerfs: hold a file losing its name")
	}
	p.held[st.Ino] = true
	return st.Ino, nil
}

func (p *FS) scratchPath(ino uint64) string {
	return filepath.Join(p.scratch, strconv.FormatUint(ino, 10))
}

// dirOf returns the state of the directory at path (on the disk), taking
// its entries as durable when it has none yet. The caller holds p.mu.
func (p *FS) dirOf(path string) (*dirState, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return nil, errors.Wrap(err, "powerfs: stat a directory")
	}
	if d, ok := p.dirs[st.Ino]; ok {
		return d, nil
	}
	names, err := entries(path)
	if err != nil {
		return nil, err
	}
	d := &dirState{path: path, durable: names}
	p.dirs[st.Ino] = d
	return d, nil
}

// entries lists the non-directory entries of the directory at path.
func entries(path string) (map[string]uint64, error) {
	des, err := os.ReadDir(path)
	if err != nil {
		return nil, errors.Wrap(err, "powerfs: read a directory")
	}
	out := make(map[string]uint64, len(des))
	for _, de := range des {
		if de.IsDir() {
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(path, de.Name()), &st); err != nil {
			return nil, errors.Wrap(err, "powerfs: lstat an entry")
		}
		out[de.Name()] = st.Ino
	}
	return out, nil
}

// changeName records that name in the directory at dir is about to be
// created, removed or replaced: the directory's durable names are taken
// if not yet, and the file at the name, if any, is held so a cut can give
// it back. The caller holds p.mu.
func (p *FS) changeName(dir, name string) error {
	d, err := p.dirOf(dir)
	if err != nil {
		return err
	}
	if _, ok := d.durable[name]; !ok {
		return nil // not durable: nothing to give back
	}
	_, err = p.holdPath(filepath.Join(dir, name))
	return err
}

// syncDir makes the names of the directory at path durable.
func (p *FS) syncDir(path string) error {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return errors.Wrap(err, "powerfs: stat a directory")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.dirs, st.Ino)
	p.stats.DirSyncs++
	return nil
}

// syncFile makes the data and size of the file with inode ino durable.
func (p *FS) syncFile(ino uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.files, ino)
	p.stats.FileSyncs++
}
