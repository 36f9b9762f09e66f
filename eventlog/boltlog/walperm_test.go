package boltlog_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/eventlog/wal"
	"github.com/sessionlog/sessionlog/internal/permtest"
	"github.com/sessionlog/sessionlog/rebuild"
)

// TestWALPermissions: under the usual umask 022, a store whose process
// died with writes in the write-ahead log leaves them readable by its
// owner only, as the store file is: the log's directory 0700, its
// segments 0600. A log left looser is tightened by the next read-write
// Open; a read-only Open changes nothing. Not parallel: the umask is the
// process's.
func TestWALPermissions(t *testing.T) {
	permtest.Umask(t, 0o022)
	noApply(t)
	path := filepath.Join(t.TempDir(), "sessions.db")
	dir := boltlog.WALDir(path)
	l, err := boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	writeSessions(t, l, "a", 2, 2)
	if err := boltlog.Crash(l); err != nil {
		t.Fatal(err)
	}
	segs, err := wal.Segments(dir)
	if err != nil || len(segs) == 0 {
		t.Fatalf("after the crash the log has %d segments (%v)", len(segs), err)
	}
	want := func(dirMode, segMode fs.FileMode) {
		t.Helper()
		permtest.Want(t, path, 0o600)
		permtest.Want(t, dir, dirMode)
		for _, p := range segs {
			permtest.Want(t, p, segMode)
		}
	}
	want(0o700, 0o600)

	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range segs {
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ro, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	want(0o755, 0o644)

	l, err = boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want(0o700, 0o600)
	if err := boltlog.Crash(l); err != nil {
		t.Fatal(err)
	}
}
