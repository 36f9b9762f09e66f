package atomicfile

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/eventlog"
)

// Write writes path with write, through a temporary file renamed over
// path only when write succeeded. A file that exists keeps its
// permissions (and must be a regular file); a new one gets 0644. The error
// of write is returned as it is; a failure of the file system names what
// (op) was being written to path.
func Write(path, op string, write func(io.Writer) error) (err error) {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return errors.Newf("%s: %s is not a regular file", errors.Safe(op), errors.Safe(path))
		}
		mode = fi.Mode().Perm()
	}
	wrap := func(err error) error { return errors.Wrapf(err, "%s to %s", errors.Safe(op), errors.Safe(path)) }
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
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
	if err := f.Chmod(mode); err != nil {
		return wrap(err)
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
	return wrap(eventlog.SyncDir(dir))
}
