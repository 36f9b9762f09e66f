package main

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionlog/sessionlog/internal/powerfs"
	"github.com/sessionlog/sessionlog/internal/powerfs/powerfstest"
)

// TestReportSurvivesPowerCut: the report is written on a power-loss mount
// twice, then the power is cut: the file holds the second report. It fails
// without the directory sync after the rename (the first report comes
// back) or the file's sync before it (the file comes back empty).
func TestReportSurvivesPowerCut(t *testing.T) {
	// Only plain file calls reach the mount (no mmap): this process can
	// serve it and write to it.
	disk, mnt, fsys := powerfstest.Mount(t, nil)
	for _, text := range []string{"# first report\n", "# second report\n"} {
		if err := writeFileAtomic(filepath.Join(mnt, "BENCHMARKS.md"), []byte(text)); err != nil {
			t.Fatal(err)
		}
	}
	if s := fsys.Stats(); s.Writes < 2 || s.FileSyncs < 2 || s.DirSyncs < 2 {
		t.Fatalf("stats %+v: the reports were not written and synced through the mount", s)
	}
	rep, err := fsys.Cut(powerfs.Drop, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatalf("%+v", err)
	}
	got, err := os.ReadFile(filepath.Join(disk, "BENCHMARKS.md"))
	if err != nil || string(got) != "# second report\n" {
		t.Errorf("after the cut (%+v) the report holds %q (%v), want the second one", rep, got, err)
	}
}
