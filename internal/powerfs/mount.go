package powerfs

import (
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// Mode is how a cut treats the unsynced writes.
type Mode int

// The cut modes (see the package doc).
const (
	Drop Mode = iota
	Tear
	Reorder
)

// Modes lists the cut modes.
var Modes = []Mode{Drop, Tear, Reorder}

func (m Mode) String() string {
	switch m {
	case Drop:
		return "drop"
	case Tear:
		return "tear"
	case Reorder:
		return "reorder"
	}
	return "mode(?)"
}

// Options configure a mount.
type Options struct {
	// Scratch is a directory on the disk's filesystem, outside the disk,
	// for the links that hold files losing their names; it is created and
	// emptied. Default: the disk's path with ".scratch" appended.
	Scratch string
	// OnWrite, when set, is called after each write is recorded and done,
	// before the writer is answered, with the writing thread's id: a test
	// can kill the writer there, in the middle of whatever it was writing.
	OnWrite func(tid uint32)
}

// FS is a mounted power-loss filesystem.
type FS struct {
	disk, mnt, scratch string
	server             *fuse.Server
	onWrite            func(tid uint32)
	unmounted          bool // by Cut or Unmount; both may be called

	mu    sync.Mutex
	files map[uint64]*fileState // by inode, the files with unsynced changes
	dirs  map[uint64]*dirState  // by inode, the directories with unsynced names
	held  map[uint64]bool       // the inodes linked into scratch
	stats Stats
	err   error // the first recording failure: the cut cannot be trusted
}

// Stats count what the writers did on a mount.
type Stats struct {
	Writes, Truncates, FileSyncs, DirSyncs, NameChanges int64
}

// ErrRecording marks a failure to record what a cut must undo: the mount
// answered the writer with EIO, and its cut refuses to run.
var ErrRecording = errors.New("powerfs: recording failed")

// Mount serves the directory disk at mnt (an existing empty directory)
// until Cut or Unmount.
func Mount(disk, mnt string, opts *Options) (*FS, error) {
	if opts == nil {
		opts = &Options{}
	}
	disk, err := filepath.Abs(disk)
	if err != nil {
		return nil, errors.Wrap(err, "powerfs: disk path")
	}
	p := &FS{disk: disk, mnt: mnt, scratch: opts.Scratch, onWrite: opts.OnWrite,
		files: map[uint64]*fileState{}, dirs: map[uint64]*dirState{}, held: map[uint64]bool{}}
	if p.scratch == "" {
		p.scratch = disk + ".scratch"
	}
	if err := os.RemoveAll(p.scratch); err != nil {
		return nil, errors.Wrap(err, "powerfs: empty the scratch directory")
	}
	if err := os.MkdirAll(p.scratch, 0o700); err != nil {
		return nil, errors.Wrap(err, "powerfs: make the scratch directory")
	}
	var st syscall.Stat_t
	if err := syscall.Stat(disk, &st); err != nil {
		return nil, errors.Wrap(err, "powerfs: stat the disk")
	}
	root := &fs.LoopbackRoot{Path: disk, Dev: st.Dev}
	root.NewNode = func(r *fs.LoopbackRoot, _ *fs.Inode, _ string, _ *syscall.Stat_t) fs.InodeEmbedder {
		return &node{LoopbackNode: fs.LoopbackNode{RootData: r}, p: p}
	}
	root.RootNode = root.NewNode(root, nil, "", &st)
	sec := time.Second
	p.server, err = fs.Mount(mnt, root.RootNode, &fs.Options{
		EntryTimeout: &sec,
		AttrTimeout:  &sec,
		MountOptions: fuse.MountOptions{
			DirectMountStrict: true,
			FsName:            "powerfs",
			Name:              "powerfs",
			// Passthrough would hand the kernel the disk's descriptors,
			// and writes would bypass the recording.
			DisabledCapabilities: fuse.CAP_PASSTHROUGH,
		},
	})
	if err != nil {
		return nil, errors.Wrapf(err, "powerfs: mount %s", errors.Safe(mnt))
	}
	return p, nil
}

// Dir is the mount point.
func (p *FS) Dir() string { return p.mnt }

// Stats returns what the writers did so far.
func (p *FS) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// fail records the first recording failure.
func (p *FS) fail(err error) syscall.Errno {
	if p.err == nil {
		p.err = errclass.Mark(err, ErrRecording)
	}
	return syscall.EIO
}

// unmount ends serving, retrying while the kernel still has the mount busy
// (a killed writer's descriptors are closed asynchronously).
func (p *FS) unmount() error {
	if p.unmounted {
		return nil
	}
	var err error
	for range 100 {
		if err = p.server.Unmount(); err == nil {
			p.server.Wait()
			p.unmounted = true
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.Wrapf(err, "powerfs: unmount %s", errors.Safe(p.mnt))
}

// Unmount ends serving with nothing lost, as a clean shutdown does, and
// removes the scratch directory. After Cut it does nothing.
func (p *FS) Unmount() error {
	if p.unmounted {
		return nil
	}
	if err := p.unmount(); err != nil {
		return err
	}
	return errors.Wrap(os.RemoveAll(p.scratch), "powerfs: remove the scratch directory")
}

// Report counts what a cut did.
type Report struct {
	Mode Mode
	// Files had unsynced changes; Sectors of them were unsynced, of which
	// Lost got their durable bytes back and Kept the written ones.
	Files, Sectors, Lost, Kept int
	// Resized counts the files whose size the cut changed.
	Resized int
	// Removed counts unsynced names removed, Restored lost names given back.
	Removed, Restored int
}

// Cut simulates a power cut: it unmounts (every writer must be dead) and
// rolls the disk back to what was durable, in mode, choosing with rng.
// The scratch directory is removed afterwards.
func (p *FS) Cut(mode Mode, rng *rand.Rand) (Report, error) {
	if err := p.unmount(); err != nil {
		return Report{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return Report{}, p.err
	}
	rep := Report{Mode: mode}
	if err := p.rollFiles(mode, rng, &rep); err != nil {
		return rep, err
	}
	if err := p.rollNames(&rep); err != nil {
		return rep, err
	}
	return rep, errors.Wrap(os.RemoveAll(p.scratch), "powerfs: remove the scratch directory")
}

// Unavailable says why this process cannot mount a powerfs (no /dev/fuse,
// or not root), or "" when it can: a test skips with the reason.
func Unavailable() string {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return "no /dev/fuse: power cuts need a FUSE mount"
	}
	if os.Geteuid() != 0 {
		return "not root: powerfs mounts with mount(2) directly"
	}
	return ""
}
