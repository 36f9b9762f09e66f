package powerfs

import (
	"math/rand"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/cockroachdb/errors"
)

// rollFiles gives every file with unsynced changes what mode leaves of
// them. The caller holds p.mu, with the filesystem unmounted.
func (p *FS) rollFiles(mode Mode, rng *rand.Rand, rep *Report) error {
	inos := make([]uint64, 0, len(p.files))
	for ino := range p.files {
		inos = append(inos, ino)
	}
	slices.Sort(inos) // the same rng draws for the same history
	for _, ino := range inos {
		if err := p.rollFile(p.files[ino], p.scratchPath(ino), mode, rng, rep); err != nil {
			return err
		}
		delete(p.files, ino)
	}
	return nil
}

// span is a byte range [from, to).
type span struct{ from, to int64 }

func (p *FS) rollFile(s *fileState, path string, mode Mode, rng *rand.Rand, rep *Report) error {
	fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		return errors.Wrap(err, "powerfs: open a held file")
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return errors.Wrap(err, "powerfs: fstat a held file")
	}
	rep.Files++
	secs := make([]int64, 0, len(s.undo))
	for sec := range s.undo {
		secs = append(secs, sec)
	}
	slices.Sort(secs)

	// What survives: whole sectors (tear) or the byte ranges of a suffix
	// of the ops (reorder); and the size.
	size := s.durableSize
	var keepSec map[int64]bool
	var kept []span
	switch mode {
	case Tear:
		keepSec = make(map[int64]bool, len(secs))
		for _, sec := range secs {
			keepSec[sec] = rng.Intn(2) == 0
		}
		if rng.Intn(2) == 0 {
			size = st.Size
		}
	case Reorder:
		k := rng.Intn(len(s.ops) + 1)
		for _, o := range s.ops[k:] {
			kept = append(kept, span{o.off, o.off + o.n})
			if o.trunc {
				size = o.size
			} else {
				size = max(size, o.off+o.n)
			}
		}
	}

	cur := make([]byte, Sector)
	for _, sec := range secs {
		buf := slices.Clone(s.undo[sec])
		start := sec * Sector
		var keep []span
		if keepSec[sec] {
			keep = []span{{start, start + Sector}}
		}
		for _, k := range kept {
			if k.from < start+Sector && k.to > start {
				keep = append(keep, span{max(k.from, start), min(k.to, start+Sector)})
			}
		}
		if len(keep) == 0 {
			rep.Lost++
		} else {
			rep.Kept++
			clear(cur)
			if _, err := syscall.Pread(fd, cur, start); err != nil {
				return errors.Wrap(err, "powerfs: read a sector")
			}
			for _, k := range keep {
				copy(buf[k.from-start:k.to-start], cur[k.from-start:k.to-start])
			}
		}
		rep.Sectors++
		if _, err := syscall.Pwrite(fd, buf, start); err != nil {
			return errors.Wrap(err, "powerfs: write a sector back")
		}
	}
	if err := syscall.Ftruncate(fd, size); err != nil {
		return errors.Wrap(err, "powerfs: truncate back")
	}
	if size != st.Size {
		rep.Resized++
	}
	return nil
}

// rollNames gives every directory with unsynced names exactly its durable
// ones. The caller holds p.mu, with the filesystem unmounted.
func (p *FS) rollNames(rep *Report) error {
	for ino, d := range p.dirs {
		cur, err := entries(d.path)
		if err != nil {
			return err
		}
		for name, ino := range cur {
			if want, ok := d.durable[name]; !ok || want != ino {
				if err := syscall.Unlink(filepath.Join(d.path, name)); err != nil {
					return errors.Wrap(err, "powerfs: remove an unsynced name")
				}
				rep.Removed++
				delete(cur, name)
			}
		}
		for name, ino := range d.durable {
			if _, ok := cur[name]; ok {
				continue
			}
			if !p.held[ino] {
				return errors.AssertionFailedf("powerfs: a durable name lost its inode %d, which nothing held", ino)
			}
			if err := syscall.Link(p.scratchPath(ino), filepath.Join(d.path, name)); err != nil {
				return errors.Wrap(err, "powerfs: give a lost name back")
			}
			rep.Restored++
		}
		delete(p.dirs, ino)
	}
	return nil
}
