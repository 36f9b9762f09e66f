package salvage

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/atomicfile"
	"github.com/sessionlog/sessionlog/rebuild"
)

// Options configures Into. The zero value (or nil) means the defaults.
type Options struct {
	// NoSync skips fsync while the new store is written. For tests only:
	// a crash may leave a new store that is not whole.
	NoSync bool
}

// Into copies src into a new store at path (see Copy), which must not
// exist: an existing path, even an empty file, is ErrExists and nothing is
// written. The new store is written under a temporary name next to path
// and appears at path only once it is complete and closed; on an error
// nothing is left behind. The new store checks every event with the rules
// of package rebuild, as logtool import does.
func Into(ctx context.Context, src Source, path string, opts *Options) (rep Report, err error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := free(path); err != nil {
		return rep, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".salvage-*")
	if err != nil {
		return rep, errors.Wrapf(err, "salvage: create the new store next to %s", errors.Safe(path))
	}
	tmp := f.Name()
	err = f.Close()
	defer func() {
		if err != nil {
			if rerr := os.Remove(tmp); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				err = errors.CombineErrors(err, rerr)
			}
		}
	}()
	if err != nil {
		return rep, errors.Wrapf(err, "salvage: create %s", errors.Safe(tmp))
	}
	dst, err := boltlog.Open(tmp, &eventlog.Options{
		NoSync:       o.NoSync,
		NewValidator: rebuild.NewValidator,
	}, nil)

	if err != nil {
		return rep, errors.Wrap(err, "salvage: open the new store")
	}
	rep, err = Copy(ctx, src, dst)
	err = errors.CombineErrors(err, dst.Close())
	if err != nil {
		return rep, err
	}
	return rep, publish(tmp, path)
}

// free checks that nothing exists at path.
func free(path string) error {
	_, err := os.Lstat(path)
	switch {
	case err == nil:
		return errors.WithHint(existsf("salvage: %s exists already", errors.Safe(path)),
			"salvage writes a new store: name a path that does not exist")
	case errors.Is(err, fs.ErrNotExist):
		return nil
	}
	return errors.Wrapf(err, "salvage: %s", errors.Safe(path))
}

// publish moves the finished store tmp to path without replacing anything
// that appeared there meanwhile: a hard link fails if path exists. Where
// hard links are not supported, it renames after checking path again.
func publish(tmp, path string) error {
	err := os.Link(tmp, path)
	switch {
	case err == nil:
		if err := os.Remove(tmp); err != nil {
			return errors.Wrapf(err, "salvage: remove %s", errors.Safe(tmp))
		}
	case errors.Is(err, fs.ErrExist):
		return errors.WithHint(existsf("salvage: %s appeared while the new store was written", errors.Safe(path)),
			"salvage writes a new store: name a path that does not exist")
	default:
		if err := free(path); err != nil {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			return errors.Wrapf(err, "salvage: move the new store to %s", errors.Safe(path))
		}
	}
	return errors.Wrap(atomicfile.SyncDir(filepath.Dir(path)), "salvage")
}
