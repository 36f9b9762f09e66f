package main

import (
	"path/filepath"
	"testing"

	"github.com/sessionlog/sessionlog/internal/permtest"
)

// TestExportPermissions: under the usual umask 022, export -o writes the
// session, content like the store file, readable by its owner only (it
// was 0644 whatever the umask). Not parallel: the umask is the process's.
func TestExportPermissions(t *testing.T) {
	permtest.Umask(t, 0o022)
	dir := t.TempDir()
	db := filepath.Join(dir, "sessions.db")
	mustRunArgs(t, "--db", db, "import", "testdata/import/basic.jsonl")
	out := filepath.Join(dir, "basic.jsonl")
	mustRunArgs(t, "--db", db, "export", "basic-1", "-o", out)
	permtest.Want(t, db, 0o600)
	permtest.Want(t, out, 0o600)
}
