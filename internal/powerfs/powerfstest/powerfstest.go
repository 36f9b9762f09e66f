package powerfstest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionlog/sessionlog/internal/powerfs"
)

// Require skips t where powerfs cannot mount (no root or no /dev/fuse),
// saying why in one line; under CI, which must run the power-loss
// proofs, it fails instead.
func Require(t testing.TB) {
	t.Helper()
	if why := powerfs.Unavailable(); why != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s (CI must run the power-loss proofs)", why)
		}
		t.Skip(why)
	}
}

// Dirs is Require, then it makes and returns an empty disk directory and
// mount point, for a test that mounts (and cuts) more than once.
func Dirs(t testing.TB) (disk, mnt string) {
	t.Helper()
	Require(t)
	base := t.TempDir()
	disk, mnt = filepath.Join(base, "disk"), filepath.Join(base, "mnt")
	for _, d := range []string{disk, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return disk, mnt
}

// Mount is Dirs, then mounts powerfs with opts (nil for none) and
// unmounts it when the test ends, unless a Cut already did.
func Mount(t testing.TB, opts *powerfs.Options) (disk, mnt string, fsys *powerfs.FS) {
	t.Helper()
	disk, mnt = Dirs(t)
	fsys, err := powerfs.Mount(disk, mnt, opts)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	t.Cleanup(func() {
		if err := fsys.Unmount(); err != nil {
			t.Error(err)
		}
	})
	return disk, mnt, fsys
}
