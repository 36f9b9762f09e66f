package atomicfile

import (
	"os"
	"syscall"

	"github.com/cockroachdb/errors"
)

// SyncDir fsyncs the directory dir, making the names created, renamed or
// removed in it durable: a file's own fsync makes its bytes durable, not
// its name, so after a power cut a store, or a file published by rename,
// whose directory was never synced can be gone. A filesystem that cannot
// sync directories (EINVAL, ENOTSUP) is taken as having nothing to sync.
// Every writer of the engine that creates or publishes a file calls it.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return errors.Wrapf(err, "sync directory %s", errors.Safe(dir))
	}
	err = d.Sync()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		err = nil
	}
	return errors.Wrapf(errors.CombineErrors(err, d.Close()), "sync directory %s", errors.Safe(dir))
}
