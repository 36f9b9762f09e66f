package atomicfile_test

import (
	"io"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/internal/atomicfile"
	"github.com/sessionlog/sessionlog/internal/permtest"
	"github.com/sessionlog/sessionlog/internal/powerfs"
	"github.com/sessionlog/sessionlog/internal/powerfs/powerfstest"
)

// TestWrite runs under a set umask (not parallel: the umask is the
// process's). A new export is its owner's alone whatever the umask; a
// file that is not content gets its permissions less the umask, as
// open(2) gives them; a file replaced keeps its own.
func TestWrite(t *testing.T) {
	errWrite := errors.New("write failed")
	tests := []struct {
		name     string
		umask    int
		perm     os.FileMode // asked for a new file
		existing []byte      // nil: no file before
		mode     os.FileMode // of the existing file
		write    string
		fail     bool
		want     string
		wantMode os.FileMode
	}{
		{name: "new content file", umask: 0o022, perm: atomicfile.ContentPerm, write: "new\n", want: "new\n", wantMode: 0o600},
		{name: "new content file, no umask", umask: 0, perm: atomicfile.ContentPerm, write: "new\n", want: "new\n", wantMode: 0o600},
		{name: "new content file, strict umask", umask: 0o077, perm: atomicfile.ContentPerm, write: "new\n", want: "new\n", wantMode: 0o600},
		{name: "new file, not content", umask: 0o022, perm: 0o644, write: "new\n", want: "new\n", wantMode: 0o644},
		{name: "new file, not content, stricter umask", umask: 0o027, perm: 0o644, write: "new\n", want: "new\n", wantMode: 0o640},
		{name: "replaces, keeps mode", umask: 0o022, perm: atomicfile.ContentPerm, existing: []byte("old\n"), mode: 0o600, write: "new\n", want: "new\n", wantMode: 0o600},
		{name: "replaces, keeps the mode its owner gave it", umask: 0o022, perm: atomicfile.ContentPerm, existing: []byte("old\n"), mode: 0o644, write: "new\n", want: "new\n", wantMode: 0o644},
		{name: "failed write keeps the old file", umask: 0o022, perm: atomicfile.ContentPerm, existing: []byte("old\n"), mode: 0o640, write: "partial", fail: true, want: "old\n", wantMode: 0o640},
		{name: "failed write creates nothing", umask: 0o022, perm: atomicfile.ContentPerm, write: "partial", fail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			permtest.Umask(t, tt.umask)
			dir := t.TempDir()
			path := filepath.Join(dir, "out.jsonl")
			if tt.existing != nil {
				if err := os.WriteFile(path, tt.existing, tt.mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tt.mode); err != nil { // umask
					t.Fatal(err)
				}
			}
			err := atomicfile.Write(path, "export", tt.perm, func(w io.Writer) error {
				if _, err := io.WriteString(w, tt.write); err != nil {
					return err
				}
				if tt.fail {
					return errWrite
				}
				return nil
			})
			if tt.fail != (err != nil) {
				t.Fatalf("Write = %v, want failure %v", err, tt.fail)
			}
			got, rerr := os.ReadFile(path)
			switch {
			case tt.want == "" && !errors.Is(rerr, fs.ErrNotExist):
				t.Errorf("after a failed write, %s exists (%v)", path, rerr)
			case tt.want != "" && string(got) != tt.want:
				t.Errorf("content = %q, want %q", got, tt.want)
			}
			if tt.want != "" {
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm() != tt.wantMode {
					t.Errorf("mode = %v, want %v", fi.Mode().Perm(), tt.wantMode)
				}
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if e.Name() != "out.jsonl" {
					t.Errorf("left behind %s", e.Name())
				}
			}
		})
	}
}

// TestSurvivesPowerCut: Write's temporary file and rename (export -o's,
// logbench's report), on a power-loss mount, cut right after the second
// export returns: the file
// holds the second export whole, the first is gone, and no temporary file
// is left. It fails if the temporary file is not synced before the rename
// (the name survives, the bytes do not) or the directory after it (the old
// export comes back).
func TestSurvivesPowerCut(t *testing.T) {
	// Only plain file calls reach the mount here (no mmap), so this
	// process can serve it and write to it.
	disk, mnt, fsys := powerfstest.Mount(t, nil)
	for _, text := range []string{"first export\n", "second export\n"} {
		err := atomicfile.Write(filepath.Join(mnt, "out.jsonl"), "export", atomicfile.ContentPerm, func(w io.Writer) error {
			_, err := io.WriteString(w, text)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if s := fsys.Stats(); s.Writes == 0 || s.FileSyncs < 2 || s.DirSyncs < 2 {
		t.Fatalf("stats %+v: the exports did not write and sync through the mount", s)
	}
	rep, err := fsys.Cut(powerfs.Drop, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatalf("%+v", err)
	}
	got, err := os.ReadFile(filepath.Join(disk, "out.jsonl"))
	if err != nil || string(got) != "second export\n" {
		t.Errorf("after the cut (%+v) out.jsonl holds %q (%v), want the second export", rep, got, err)
	}
	if left, _ := filepath.Glob(filepath.Join(disk, ".out.jsonl.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left after the cut: %v", left)
	}
}
