package atomicfile

import (
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/cockroachdb/errors"
)

// ContentPerm is the permission of a new file that holds session content
// (an export): its owner's alone, as the store file is.
const ContentPerm fs.FileMode = 0o600

// Write writes path with write, through a temporary file renamed over
// path only when write succeeded. A file that exists keeps its
// permissions (and must be a regular file); a new one gets perm less the
// process's umask, as a file created by open(2) does: ContentPerm for
// what holds session content. The error of write is returned as it is; a
// failure of the file system names what (op) was being written to path.
func Write(path, op string, perm fs.FileMode, write func(io.Writer) error) (err error) {
	var keep *fs.FileMode // the permissions of the file replaced
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return errors.Newf("%s: %s is not a regular file", errors.Safe(op), errors.Safe(path))
		}
		m := fi.Mode().Perm()
		keep, perm = &m, ContentPerm // the owner's alone until the write is done
	}
	wrap := func(err error) error { return errors.Wrapf(err, "%s to %s", errors.Safe(op), errors.Safe(path)) }
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := createTemp(dir, base, perm.Perm())
	if err != nil {
		return wrap(err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()      // may be closed already; the error is secondary
			_ = os.Remove(tmp) // best effort: the temp file holds nothing of value
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if keep != nil {
		if err := f.Chmod(*keep); err != nil {
			return wrap(err)
		}
	}
	if err := f.Sync(); err != nil {
		return wrap(err)
	}
	if err := f.Close(); err != nil {
		return wrap(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return wrap(err)
	}
	// The rename is durable only once the directory is synced: a failure
	// here is a failure of the write.
	return wrap(SyncDir(dir))
}

// createTemp creates a new file next to base in dir, with perm less the
// umask (os.CreateTemp's 0600 would need a chmod, which ignores the
// umask).
func createTemp(dir, base string, perm fs.FileMode) (*os.File, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, "."+base+".tmp-"+strconv.FormatUint(uint64(rand.Uint32()), 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if err != nil && errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		return f, err
	}
}
