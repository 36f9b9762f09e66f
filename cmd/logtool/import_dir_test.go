package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// symlinkedTree builds, under tmp, what ~/.claude often is: a link to the
// real folder, holding transcripts in subfolders, a link to a transcript
// kept elsewhere, a link to the folder itself and one to its parent (two
// cycles), and a file that is no transcript. It returns the link.
func symlinkedTree(t *testing.T, tmp string) string {
	t.Helper()
	real := filepath.Join(tmp, "real")
	copyFile(t, filepath.Join("testdata", "import", "basic.jsonl"), filepath.Join(real, "a", "basic.jsonl"))
	copyFile(t, filepath.Join("testdata", "import", "kinds.jsonl"), filepath.Join(real, "b", "c", "kinds.jsonl"))
	copyFile(t, filepath.Join("testdata", "import", "cache-reads.jsonl"), filepath.Join(tmp, "elsewhere", "cache-reads.jsonl"))
	if err := os.WriteFile(filepath.Join(real, "notes.txt"), []byte("not a transcript\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{
		filepath.Join(tmp, "claude"):               real,
		filepath.Join(real, "b", "linked.jsonl"):   filepath.Join(tmp, "elsewhere", "cache-reads.jsonl"),
		filepath.Join(real, "b", "again.jsonl"):    filepath.Join(real, "a", "basic.jsonl"), // a file reached twice
		filepath.Join(real, "b", "c", "loop"):      real,
		filepath.Join(real, "a", "up"):             tmp,
		filepath.Join(real, "a", "dangling-dir"):   filepath.Join(tmp, "nowhere"),
		filepath.Join(real, "b", "unrelated-link"): filepath.Join(real, "notes.txt"),
	} {
		if err := os.Symlink(to, link); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
	return filepath.Join(tmp, "claude")
}

// TestImportSymlinkedFolder: a folder reached through a symbolic link, and
// transcripts that are links, are imported (item 13 of issue 19: they
// imported nothing, silently); link cycles end, and a file reached twice
// is imported once.
func TestImportSymlinkedFolder(t *testing.T) {
	tmp := t.TempDir()
	root := symlinkedTree(t, tmp)
	for _, format := range []string{"auto", "dsh"} {
		db := filepath.Join(tmp, format+".db")
		code, stdout, stderr := logtoolRun(t, db, "import", "--format", format, root)
		want := "basic-1 \ncache-reads \nkinds-1 \n"
		if got := idsOf(stdout); code != exitOK || got != want {
			t.Errorf("import --format %s of a linked folder = exit %d, imported %q, want %q\n%s", format, code, got, want, stderr)
		}
	}
}

// TestImportDirDSH: import DIR without --format imports the DSH files
// under it, walked as --format walks it (item 14: it said "is a
// directory").
func TestImportDirDSH(t *testing.T) {
	tmp := t.TempDir()
	root := symlinkedTree(t, tmp)
	db := filepath.Join(tmp, "s.db")
	code, stdout, stderr := logtoolRun(t, db, "import", root)
	if got, want := idsOf(stdout), "basic-1 \ncache-reads \nkinds-1 \n"; code != exitOK || got != want {
		t.Errorf("import DIR = exit %d, imported %q, want %q\n%s", code, got, want, stderr)
	}
	// A plain folder and a file, together.
	plain := filepath.Join(tmp, "plain")
	copyFile(t, filepath.Join("testdata", "import", "kinds.jsonl"), filepath.Join(plain, "x", "k.jsonl"))
	code, stdout, stderr = logtoolRun(t, filepath.Join(tmp, "t.db"), "import", plain, filepath.Join("testdata", "import", "basic.jsonl"))
	if got, want := idsOf(stdout), "kinds-1 \nbasic-1 \n"; code != exitOK || got != want {
		t.Errorf("import DIR FILE = exit %d, imported %q, want %q\n%s", code, got, want, stderr)
	}
}

// TestImportEmptyFolder: a folder with no transcript under it is a
// not-found error, with or without --format, and creates no store; next
// to a folder that has some, it is that folder's failure.
func TestImportEmptyFolder(t *testing.T) {
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "empty")
	if err := os.MkdirAll(filepath.Join(empty, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(empty, "sub", "notes.txt"), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(tmp, "link")
	if err := os.Symlink(empty, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	db := filepath.Join(tmp, "s.db")
	for _, args := range [][]string{{"import", empty}, {"import", "--format", "auto", empty}, {"import", "--format", "codex", link}} {
		code, stdout, stderr := logtoolRun(t, db, args...)
		if code != exitFailure || stdout != "" || !strings.Contains(stderr, "no *.jsonl file") {
			t.Errorf("%q = exit %d, stdout %q\n%s", args, code, stdout, stderr)
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Fatalf("%q created the store (%v)", args, err)
		}
	}
	full := filepath.Join(tmp, "full")
	copyFile(t, filepath.Join("testdata", "import", "basic.jsonl"), filepath.Join(full, "basic.jsonl"))
	code, stdout, stderr := logtoolRun(t, db, "import", empty, full)
	if code != exitFailure || idsOf(stdout) != "basic-1 \n" || !strings.Contains(stderr, "no *.jsonl file") ||
		!strings.Contains(stderr, "1 of 2 files not imported") {
		t.Errorf("import EMPTY FULL = exit %d, stdout %q\n%s", code, stdout, stderr)
	}
}

// idsOf keeps the first word of each line of an import's stdout.
func idsOf(stdout string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if id, _, ok := strings.Cut(line, " "); ok {
			b.WriteString(id + " \n")
		}
	}
	return b.String()
}
