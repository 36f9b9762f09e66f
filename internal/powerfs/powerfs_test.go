package powerfs_test

import (
	"bytes"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sessionlog/sessionlog/internal/powerfs"
	"github.com/sessionlog/sessionlog/internal/powerfs/powerfstest"
)

// disk is a power-loss mount for one test: its disk directory and mount.
type disk struct {
	t       *testing.T
	dir     string // the disk
	mnt     string // where it is mounted
	fs      *powerfs.FS
	mounted bool
}

// mounted mounts a fresh empty disk, or skips when FUSE cannot be mounted
// here.
func newDisk(t *testing.T) *disk {
	t.Helper()
	powerfstest.Require(t)
	base := t.TempDir()
	d := &disk{t: t, dir: filepath.Join(base, "disk"), mnt: filepath.Join(base, "mnt")}
	for _, p := range []string{d.dir, d.mnt} {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	d.mount()
	t.Cleanup(func() {
		if d.mounted {
			if err := d.fs.Unmount(); err != nil {
				t.Error(err)
			}
		}
	})
	return d
}

func (d *disk) mount() {
	d.t.Helper()
	fsys, err := powerfs.Mount(d.dir, d.mnt, nil)
	if err != nil {
		d.t.Fatalf("%+v", err)
	}
	d.fs, d.mounted = fsys, true
}

func (d *disk) cut(mode powerfs.Mode, seed int64) powerfs.Report {
	d.t.Helper()
	d.mounted = false
	rep, err := d.fs.Cut(mode, rand.New(rand.NewSource(seed)))
	if err != nil {
		d.t.Fatalf("cut: %+v", err)
	}
	return rep
}

// on is the path of name on the mount, at is its path on the disk.
func (d *disk) on(name string) string { return filepath.Join(d.mnt, name) }
func (d *disk) at(name string) string { return filepath.Join(d.dir, name) }

// write writes b at off of the file name on the mount, creating it, and
// syncs the file when sync.
func (d *disk) write(name string, off int64, b []byte, sync bool) {
	d.t.Helper()
	f, err := os.OpenFile(d.on(name), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		d.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		d.t.Fatal(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			d.t.Fatal(err)
		}
	}
}

// syncDir fsyncs the mount's root directory.
func (d *disk) syncDir() {
	d.t.Helper()
	f, err := os.Open(d.mnt)
	if err != nil {
		d.t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		d.t.Fatal(err)
	}
}

// read reads the file name on the disk; nil when it does not exist.
func (d *disk) read(name string) []byte {
	d.t.Helper()
	b, err := os.ReadFile(d.at(name))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		d.t.Fatal(err)
	}
	return b
}

func fill(c byte, n int) []byte { return bytes.Repeat([]byte{c}, n) }

func TestDropLosesEveryUnsyncedWrite(t *testing.T) {
	d := newDisk(t)
	d.write("a", 0, fill('x', 3000), true)
	d.syncDir()
	d.write("a", 1000, fill('y', 2000), false) // overwrites the tail
	d.write("a", 3000, fill('z', 1500), false) // and extends the file
	if got := d.read("a"); len(got) != 4500 {
		t.Fatalf("before the cut the disk holds %d bytes, want all 4500 written", len(got))
	}
	rep := d.cut(powerfs.Drop, 1)
	if got := d.read("a"); !bytes.Equal(got, fill('x', 3000)) {
		t.Errorf("after a drop cut the file holds %d bytes %q…, want the 3000 synced x", len(got), got[:min(len(got), 20)])
	}
	if rep.Files != 1 || rep.Lost == 0 || rep.Kept != 0 || rep.Resized != 1 {
		t.Errorf("report %+v, want one file, sectors lost, none kept, resized", rep)
	}
}

func TestNamesNeedTheDirectorySync(t *testing.T) {
	cases := []struct {
		name    string
		syncDir bool // fsync the directory after the renames and unlinks
		want    map[string][]byte
	}{
		{"unsynced names are lost", false, map[string][]byte{
			"new": nil, "gone": []byte("gone v1"), "target": []byte("target v1"), "target.tmp": nil,
		}},
		{"synced names survive", true, map[string][]byte{
			"new": []byte("new v1"), "gone": nil, "target": []byte("target v2"), "target.tmp": nil,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDisk(t)
			d.write("gone", 0, []byte("gone v1"), true)
			d.write("target", 0, []byte("target v1"), true)
			d.syncDir()
			// A new file, its data synced, its name not (or later).
			d.write("new", 0, []byte("new v1"), true)
			// A durable name removed.
			if err := os.Remove(d.on("gone")); err != nil {
				t.Fatal(err)
			}
			// A durable file replaced by a synced temporary file.
			d.write("target.tmp", 0, []byte("target v2"), true)
			if err := os.Rename(d.on("target.tmp"), d.on("target")); err != nil {
				t.Fatal(err)
			}
			if c.syncDir {
				d.syncDir()
			}
			rep := d.cut(powerfs.Drop, 1)
			for name, want := range c.want {
				if got := d.read(name); !bytes.Equal(got, want) {
					t.Errorf("%s holds %q after the cut, want %q", name, got, want)
				}
			}
			if !c.syncDir && (rep.Removed != 2 || rep.Restored != 2) {
				t.Errorf("report %+v, want 2 names removed (new, the renamed target) and 2 restored (gone, target)", rep)
			}
		})
	}
}

// TestUnsyncedDataUnderASyncedName is the temporary-file rename without the
// file's fsync: the name survives, pointing at what was synced of the data
// (nothing).
func TestUnsyncedDataUnderASyncedName(t *testing.T) {
	d := newDisk(t)
	d.write("out.tmp", 0, []byte("export"), false)
	if err := os.Rename(d.on("out.tmp"), d.on("out")); err != nil {
		t.Fatal(err)
	}
	d.syncDir()
	d.cut(powerfs.Drop, 1)
	if got, err := os.ReadFile(d.at("out")); err != nil || len(got) != 0 {
		t.Errorf("out after the cut: %q, %v; want an empty file", got, err)
	}
}

// sectors writes n sectors of old, synced, then overwrites them with new in
// writes of per sectors each, in order, unsynced.
func sectors(d *disk, n, per int) {
	d.write("f", 0, fill('o', n*powerfs.Sector), true)
	d.syncDir()
	for i := 0; i < n; i += per {
		d.write("f", int64(i*powerfs.Sector), fill('n', per*powerfs.Sector), false)
	}
}

// states returns, per sector of the file, 'o' or 'n', failing on a sector
// that mixes both or holds anything else.
func states(t *testing.T, b []byte, n int) []byte {
	t.Helper()
	if len(b) != n*powerfs.Sector {
		t.Fatalf("the file holds %d bytes, want %d (its size never changed)", len(b), n*powerfs.Sector)
	}
	out := make([]byte, n)
	for i := range n {
		s := b[i*powerfs.Sector : (i+1)*powerfs.Sector]
		switch {
		case bytes.Equal(s, fill('o', powerfs.Sector)):
			out[i] = 'o'
		case bytes.Equal(s, fill('n', powerfs.Sector)):
			out[i] = 'n'
		default:
			t.Fatalf("sector %d is torn inside: %q…", i, s[:16])
		}
	}
	return out
}

func TestTearKeepsARandomSubsetOfSectors(t *testing.T) {
	const n = 64
	d := newDisk(t)
	sectors(d, n, 4)
	rep := d.cut(powerfs.Tear, 7)
	got := states(t, d.read("f"), n)
	old, neu := bytes.Count(got, []byte("o")), bytes.Count(got, []byte("n"))
	t.Logf("sectors after the tear: %s", got)
	if old == 0 || neu == 0 {
		t.Errorf("a tear of %d sectors kept %d and lost %d; want some of each", n, neu, old)
	}
	if rep.Sectors != n || rep.Kept != neu || rep.Lost != old {
		t.Errorf("report %+v, disk: %d kept, %d lost", rep, neu, old)
	}
	// Within a write of 4 sectors too, sectors survive independently.
	split := false
	for i := 0; i < n; i += 4 {
		w := got[i : i+4]
		if bytes.Contains(w, []byte("o")) && bytes.Contains(w, []byte("n")) {
			split = true
		}
	}
	if !split {
		t.Errorf("no write was torn between its sectors: %s", got)
	}
}

func TestReorderKeepsALaterSuffix(t *testing.T) {
	const n, per = 64, 4
	inside := 0
	for seed := int64(1); seed <= 4; seed++ {
		d := newDisk(t)
		sectors(d, n, per)
		rep := d.cut(powerfs.Reorder, seed)
		got := states(t, d.read("f"), n)
		// The writes went in file order: the survivors are the last ones.
		k := bytes.IndexByte(got, 'n')
		if k < 0 {
			k = n
		}
		if k%per != 0 || !bytes.Equal(got[k:], fill('n', n-k)) {
			t.Errorf("seed %d: sectors %s: the surviving writes are not a suffix of whole writes", seed, got)
		}
		if rep.Kept != n-k || rep.Lost != k {
			t.Errorf("seed %d: report %+v, disk: %d kept, %d lost", seed, rep, n-k, k)
		}
		if k > 0 && k < n {
			inside++
		}
	}
	if inside == 0 {
		t.Errorf("no reorder cut kept some writes and lost earlier ones")
	}
}

// TestReorderOverlapping: a later write that survives keeps its bytes over
// an earlier lost one; the earlier one's other bytes are lost.
func TestReorderOverlapping(t *testing.T) {
	for seed := int64(1); ; seed++ {
		if seed > 100 {
			t.Fatal("no seed kept exactly the second of two writes")
		}
		d := newDisk(t)
		d.write("f", 0, fill('o', 4*powerfs.Sector), true)
		d.syncDir()
		d.write("f", 0, fill('a', 3*powerfs.Sector), false)
		d.write("f", powerfs.Sector+100, fill('b', powerfs.Sector), false)
		rep := d.cut(powerfs.Reorder, seed)
		got := d.read("f")
		if rep.Lost == 3 {
			continue // both lost
		}
		if bytes.Count(got, []byte("a")) == 3*powerfs.Sector-powerfs.Sector {
			continue // both kept: a's bytes under b are b's
		}
		want := fill('o', 4*powerfs.Sector)
		copy(want[powerfs.Sector+100:], fill('b', powerfs.Sector))
		if !bytes.Equal(got, want) {
			t.Fatalf("seed %d: only the second write kept, but the file is not the old bytes with b over them", seed)
		}
		return
	}
}

func TestCleanUnmountKeepsEverything(t *testing.T) {
	d := newDisk(t)
	d.write("a", 0, []byte("never synced"), false)
	d.mounted = false
	if err := d.fs.Unmount(); err != nil {
		t.Fatal(err)
	}
	if got := d.read("a"); string(got) != "never synced" {
		t.Errorf("after a clean unmount the file holds %q", got)
	}
}

// TestStatsCount: what the writers did is counted.
func TestStatsCount(t *testing.T) {
	d := newDisk(t)
	d.write("a", 0, []byte("1"), true)
	d.write("a", 1, []byte("2"), false)
	if err := os.Truncate(d.on("a"), 1); err != nil {
		t.Fatal(err)
	}
	d.syncDir()
	s := d.fs.Stats()
	if s.Writes != 2 || s.FileSyncs != 1 || s.DirSyncs != 1 || s.NameChanges != 1 || s.Truncates != 1 {
		t.Errorf("stats %+v, want 2 writes, 1 file sync, 1 dir sync, 1 name change, 1 truncate", s)
	}
	d.cut(powerfs.Drop, 1)
	if got := d.read("a"); string(got) != "1" {
		t.Errorf("after the cut a holds %q, want the synced 1", got)
	}
}

// TestMappedReadsSeeWrites: a process that maps a file on the mount
// (shared, read-only, as bbolt does) sees each write of its own through
// the mapping at once. The mapping is made in a child process: a page
// fault served by the faulting process's own FUSE goroutines can stall
// the Go runtime.
func TestMappedReadsSeeWrites(t *testing.T) {
	d := newDisk(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestMappedReadsChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "POWERFS_MMAP_FILE="+d.on("m"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("mapped reads ok")) {
		t.Fatalf("the child did not run its checks:\n%s", out)
	}
	if s := d.fs.Stats(); s.Writes < 3 {
		t.Errorf("stats %+v: the child's writes did not go through the mount", s)
	}
}

// TestMappedReadsChild is TestMappedReadsSeeWrites's child; run directly,
// it skips.
func TestMappedReadsChild(t *testing.T) {
	path := os.Getenv("POWERFS_MMAP_FILE")
	if path == "" {
		t.Skip("the child of TestMappedReadsSeeWrites; runs only when it starts it")
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const size = 4 * 4096
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	for i, w := range []string{"first", "second", "third"} {
		off := int64(4096 + i*100)
		if _, err := f.WriteAt([]byte(w), off); err != nil {
			t.Fatal(err)
		}
		if got := string(m[off : off+int64(len(w))]); got != w {
			t.Fatalf("the mapping shows %q at %d after writing %q", got, off, w)
		}
	}
	if _, err := f.WriteAt([]byte("again"), 4096); err != nil {
		t.Fatal(err)
	}
	if got := string(m[4096:4101]); got != "again" {
		t.Fatalf("the mapping shows %q after an overwrite", got)
	}
	os.Stdout.WriteString("mapped reads ok\n")
}
