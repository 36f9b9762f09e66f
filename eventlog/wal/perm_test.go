package wal

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionlog/sessionlog/internal/permtest"
)

// TestPermissions: under the usual umask 022 the WAL's records (unapplied
// prompts and tool results) are the owner's alone: the directory 0700,
// every segment 0600. A WAL left looser (by an older version, or by hand)
// is tightened by the next Open, and nothing of another's is; Read
// changes nothing. Not parallel: the umask is the process's.
func TestPermissions(t *testing.T) {
	permtest.Umask(t, 0o022)
	dir := filepath.Join(t.TempDir(), "wal")
	wantAll := func(t *testing.T, dirMode, segMode fs.FileMode) {
		t.Helper()
		permtest.Want(t, dir, dirMode)
		segs, err := Segments(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(segs) < 2 {
			t.Fatalf("%d segments; want several", len(segs))
		}
		for _, p := range segs {
			permtest.Want(t, p, segMode)
		}
	}

	write(t, dir, small, 0, 1, 20)
	wantAll(t, 0o700, 0o600)

	// Loosen everything, as a WAL written before this rule was.
	segs, err := Segments(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range segs {
		mode := fs.FileMode(0o644)
		if i == 0 {
			mode = 0o666
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "notes.txt") // not a segment: not ours
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}

	var got []rec
	if _, err := Read(dir, 0, collect(&got)); err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, 1, 20)
	permtest.Want(t, dir, 0o755)
	permtest.Want(t, segs[0], 0o666)
	permtest.Want(t, segs[1], 0o644)

	write(t, dir, small, 0, 21, 30)
	wantAll(t, 0o700, 0o600)
	permtest.Want(t, other, 0o644)
}
