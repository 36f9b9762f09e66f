package powerfs

import (
	"context"
	"path/filepath"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// node is a loopback node whose changes of names and bytes are recorded.
// Every recording operation holds p.mu while it records and changes the
// disk, so a directory's durable names are taken before any change.
type node struct {
	fs.LoopbackNode
	p *FS
}

// dir is the node's path on the disk.
func (n *node) dir() string {
	return filepath.Join(n.RootData.Path, n.Path(n.Root()))
}

// file wraps what the loopback opened into a recording file handle.
func (n *node) file(fh fs.FileHandle) (fs.FileHandle, syscall.Errno) {
	lf, ok := fh.(*fs.LoopbackFile)
	if !ok {
		return fh, 0
	}
	fd, ok := lf.PassthroughFd()
	if !ok {
		return nil, syscall.EBADF
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, fs.ToErrno(err)
	}
	return &file{LoopbackFile: lf, p: n.p, fd: fd, ino: st.Ino}, 0
}

var (
	_ fs.NodeCreater         = (*node)(nil)
	_ fs.NodeOpener          = (*node)(nil)
	_ fs.NodeSetattrer       = (*node)(nil)
	_ fs.NodeUnlinker        = (*node)(nil)
	_ fs.NodeRenamer         = (*node)(nil)
	_ fs.NodeLinker          = (*node)(nil)
	_ fs.NodeSymlinker       = (*node)(nil)
	_ fs.NodeMknoder         = (*node)(nil)
	_ fs.NodeOpendirHandler  = (*node)(nil)
	_ fs.NodeCopyFileRanger  = (*node)(nil)
	_ fs.NodeTmpfiler        = (*node)(nil)
	_ fs.FileWriter          = (*file)(nil)
	_ fs.FileWritever        = (*file)(nil)
	_ fs.FileFsyncer         = (*file)(nil)
	_ fs.FileSetattrer       = (*file)(nil)
	_ fs.FileAllocater       = (*file)(nil)
	_ fs.FilePassthroughFder = (*file)(nil)
	_ fs.FileFsyncdirer      = (*dirHandle)(nil)
)

// nameChange records that name in this directory is about to change.
// The caller holds p.mu.
func (n *node) nameChange(name string) syscall.Errno {
	if err := n.p.changeName(n.dir(), name); err != nil {
		return n.p.fail(err)
	}
	n.p.stats.NameChanges++
	return 0
}

func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	n.p.mu.Lock()
	defer n.p.mu.Unlock()
	if errno := n.nameChange(name); errno != 0 {
		return nil, nil, 0, errno
	}
	// A truncation of an existing file is recorded, then done.
	ch, fh, fl, errno := n.LoopbackNode.Create(ctx, name, flags&^syscall.O_TRUNC, mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	f, errno := n.file(fh)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	if flags&syscall.O_TRUNC != 0 {
		if rf, ok := f.(*file); ok {
			if errno := rf.truncate(0); errno != 0 {
				return nil, nil, 0, errno
			}
		}
	}
	return ch, f, fl, 0
}

// Open opens the file; the kernel sends O_TRUNC as a separate Setattr.
func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fl, errno := n.LoopbackNode.Open(ctx, flags)
	if errno != 0 {
		return nil, 0, errno
	}
	f, errno := n.file(fh)
	return f, fl, errno
}

// Setattr records a truncation without a file handle, by path.
func (n *node) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if size, ok := in.GetSize(); ok {
		if _, isFile := fh.(*file); !isFile {
			fd, err := syscall.Open(n.dir(), syscall.O_RDWR|syscall.O_CLOEXEC, 0)
			if err != nil {
				return fs.ToErrno(err)
			}
			var st syscall.Stat_t
			errno := fs.ToErrno(syscall.Fstat(fd, &st))
			if errno == 0 {
				f := &file{p: n.p, fd: fd, ino: st.Ino}
				errno = f.truncate(int64(size))
			}
			syscall.Close(fd)
			if errno != 0 {
				return errno
			}
		}
	}
	return n.LoopbackNode.Setattr(ctx, fh, in, out)
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	n.p.mu.Lock()
	defer n.p.mu.Unlock()
	if errno := n.nameChange(name); errno != 0 {
		return errno
	}
	return n.LoopbackNode.Unlink(ctx, name)
}

func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	to, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	n.p.mu.Lock()
	defer n.p.mu.Unlock()
	if errno := n.nameChange(name); errno != 0 {
		return errno
	}
	if errno := to.nameChange(newName); errno != 0 {
		return errno
	}
	return n.LoopbackNode.Rename(ctx, name, newParent, newName, flags)
}

func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	n.p.mu.Lock()
	defer n.p.mu.Unlock()
	if errno := n.nameChange(name); errno != 0 {
		return nil, errno
	}
	return n.LoopbackNode.Link(ctx, target, name, out)
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	n.p.mu.Lock()
	defer n.p.mu.Unlock()
	if errno := n.nameChange(name); errno != 0 {
		return nil, errno
	}
	return n.LoopbackNode.Symlink(ctx, target, name, out)
}

func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	n.p.mu.Lock()
	defer n.p.mu.Unlock()
	if errno := n.nameChange(name); errno != 0 {
		return nil, errno
	}
	return n.LoopbackNode.Mknod(ctx, name, mode, rdev, out)
}

// Tmpfile is refused: an O_TMPFILE file named later by linkat(2) through
// /proc would change a name this filesystem does not see.
func (n *node) Tmpfile(ctx context.Context, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EOPNOTSUPP
}

// CopyFileRange is refused, so the kernel copies through reads and
// recorded writes.
func (n *node) CopyFileRange(ctx context.Context, fhIn fs.FileHandle, offIn uint64, out *fs.Inode, fhOut fs.FileHandle, offOut, size, flags uint64) (uint32, syscall.Errno) {
	return 0, syscall.EOPNOTSUPP
}

func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	path := n.dir()
	ds, errno := fs.NewLoopbackDirStream(path)
	if errno != 0 {
		return nil, 0, errno
	}
	return &dirHandle{ds: ds, p: n.p, path: path}, 0, 0
}

// file is a loopback file whose writes, truncations and syncs are
// recorded. fd stays open until the kernel releases the handle.
type file struct {
	*fs.LoopbackFile
	p   *FS
	fd  int
	ino uint64
}

// PassthroughFd refuses kernel passthrough, which would bypass Write.
func (f *file) PassthroughFd() (int, bool) { return -1, false }

func (f *file) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	return f.Writev(ctx, [][]byte{data}, off)
}

func (f *file) Writev(ctx context.Context, data [][]byte, off int64) (uint32, syscall.Errno) {
	n, errno := f.writev(data, off)
	if fc, ok := ctx.(*fuse.Context); ok && f.p.onWrite != nil && errno == 0 {
		f.p.onWrite(fc.Caller.Pid)
	}
	return n, errno
}

func (f *file) writev(data [][]byte, off int64) (uint32, syscall.Errno) {
	p := f.p
	p.mu.Lock()
	defer p.mu.Unlock()
	n := int64(0)
	for _, d := range data {
		n += int64(len(d))
	}
	s, err := p.fileOf(f.fd, f.ino)
	if err == nil {
		err = s.save(f.fd, off, off+n)
	}
	if err != nil {
		return 0, p.fail(err)
	}
	written := int64(0)
	for _, d := range data {
		m, err := syscall.Pwrite(f.fd, d, off+written)
		written += int64(max(m, 0))
		if err != nil {
			s.ops = append(s.ops, op{off: off, n: written})
			return uint32(written), fs.ToErrno(err)
		}
	}
	s.ops = append(s.ops, op{off: off, n: written})
	p.stats.Writes++
	return uint32(written), 0
}

// truncate records a truncation to size and does it.
func (f *file) truncate(size int64) syscall.Errno {
	p := f.p
	p.mu.Lock()
	defer p.mu.Unlock()
	var st syscall.Stat_t
	if err := syscall.Fstat(f.fd, &st); err != nil {
		return p.fail(err)
	}
	s, err := p.fileOf(f.fd, f.ino)
	if err == nil {
		// Only durable bytes can be lost by a truncation; past the
		// durable size the disk holds zeros either way.
		lo, hi := min(st.Size, size), min(max(st.Size, size), s.durableSize)
		if lo < hi {
			err = s.save(f.fd, lo, hi)
		}
	}
	if err != nil {
		return p.fail(err)
	}
	if err := syscall.Ftruncate(f.fd, size); err != nil {
		return fs.ToErrno(err)
	}
	lo, hi := min(st.Size, size), max(st.Size, size)
	s.ops = append(s.ops, op{off: lo, n: hi - lo, trunc: true, size: size})
	p.stats.Truncates++
	return 0
}

func (f *file) Setattr(ctx context.Context, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if size, ok := in.GetSize(); ok {
		if errno := f.truncate(int64(size)); errno != 0 {
			return errno
		}
	}
	return f.LoopbackFile.Setattr(ctx, in, out)
}

// Fsync makes the file's data and size durable (fsync and fdatasync
// alike). The disk itself is not synced: only the simulation's
// durability matters.
func (f *file) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	f.p.syncFile(f.ino)
	return 0
}

// Allocate is refused: the stores under test grow files by truncation.
func (f *file) Allocate(ctx context.Context, off, size uint64, mode uint32) syscall.Errno {
	return syscall.EOPNOTSUPP
}

// dirHandle is an open directory whose fsync makes its names durable.
type dirHandle struct {
	ds   fs.DirStream
	p    *FS
	path string
}

func (d *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	return d.ds.(fs.FileReaddirenter).Readdirent(ctx)
}

func (d *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	return d.ds.(fs.FileSeekdirer).Seekdir(ctx, off)
}

func (d *dirHandle) Releasedir(ctx context.Context, flags uint32) {
	d.ds.(fs.FileReleasedirer).Releasedir(ctx, flags)
}

func (d *dirHandle) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	if err := d.p.syncDir(d.path); err != nil {
		d.p.mu.Lock()
		defer d.p.mu.Unlock()
		return d.p.fail(err)
	}
	return 0
}
