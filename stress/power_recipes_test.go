package stress

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/powerfs"
)

// powerDisk mounts a fresh powerfs disk for a recipe, or skips where FUSE
// cannot be mounted. It returns the disk and the mount.
func powerDisk(t *testing.T) (string, string, *powerfs.FS) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse: power cuts need a FUSE mount")
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: powerfs mounts with mount(2) directly")
	}
	base := t.TempDir()
	disk, mnt := filepath.Join(base, "disk"), filepath.Join(base, "mnt")
	for _, d := range []string{disk, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fsys, err := powerfs.Mount(disk, mnt, nil)
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

// TestPowerRecipeNewStoreName: a child creates a store on the mount and
// acknowledges its first events; power is cut, dropping everything not
// synced. The store and the events must be there. Before eventlog.Open
// synced the store's directory, the file's name was never durable and the
// store was gone after the cut.
func TestPowerRecipeNewStoreName(t *testing.T) {
	disk, mnt, fsys := powerDisk(t)
	c := startChild(t, "TestCrashChild", "crash", envStore+"="+filepath.Join(mnt, "sessions.db"),
		envSeed+"=1", envIDs+"=recipe-0001")
	c.expect("start")
	log := &roundLog{durable: map[string]map[int64]string{}, staged: map[string]bool{}}
	deadline := time.Now().Add(time.Minute)
	for log.lines == 0 && time.Now().Before(deadline) {
		line, ok := c.next(time.Until(deadline))
		if !ok {
			break
		}
		log.add(t, line)
	}
	c.kill()
	if log.lines == 0 {
		t.Fatalf("the child acknowledged no event; stderr:\n%s", c.stderr.String())
	}
	rep, err := fsys.Cut(powerfs.Drop, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatalf("%+v", err)
	}
	t.Logf("cut: %+v", rep)
	st, err := eventlog.Open(filepath.Join(disk, "sessions.db"), &eventlog.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("after the cut the store does not open, though %d events were acknowledged: %v", log.lines, err)
	}
	defer st.Close()
	head, err := st.Head(context.Background(), "recipe-0001")
	if err != nil {
		t.Fatalf("after the cut: %v", err)
	}
	for seq := range log.durable["recipe-0001"] {
		if seq >= head.Next {
			t.Errorf("seq %d was acknowledged, the session holds %d events", seq, head.Next)
		}
	}
}
