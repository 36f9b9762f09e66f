package permtest

import (
	"io/fs"
	"os"
	"syscall"
	"testing"
)

// Umask sets the process's umask to mask until the test ends.
func Umask(t testing.TB, mask int) {
	t.Helper()
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// Want fails the test unless path (not followed if a symbolic link) has
// exactly the permission bits want.
func Want(t testing.TB, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s has mode %v, want %v", path, got, want)
	}
}
