package main

import (
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionlog/sessionlog/internal/powerfs"
	"github.com/sessionlog/sessionlog/internal/powerfs/powerfstest"
)

// TestExportSurvivesPowerCut: export -o's temporary file and rename, on a
// power-loss mount, cut right after the second export returns: the file
// holds the second export whole, the first is gone, and no temporary file
// is left. It fails if the temporary file is not synced before the rename
// (the name survives, the bytes do not) or the directory after it (the old
// export comes back).
func TestExportSurvivesPowerCut(t *testing.T) {
	// Only plain file calls reach the mount here (no mmap), so this
	// process can serve it and write to it.
	disk, mnt, fsys := powerfstest.Mount(t, nil)
	for _, text := range []string{"first export\n", "second export\n"} {
		err := writeFileAtomic(filepath.Join(mnt, "out.jsonl"), func(w io.Writer) error {
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
