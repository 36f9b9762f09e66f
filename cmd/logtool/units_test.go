package main

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"
)

func TestNewUUID(t *testing.T) {
	v4 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	tests := []struct {
		name   string
		random []byte
		want   string
	}{
		{"zeros", make([]byte, 16), "00000000-0000-4000-8000-000000000000"},
		{"ones", bytes.Repeat([]byte{0xff}, 16), "ffffffff-ffff-4fff-bfff-ffffffffffff"},
		{"counting", []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, "00010203-0405-4607-8809-0a0b0c0d0e0f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := newUUID(bytes.NewReader(tt.random))
			if err != nil {
				t.Fatalf("newUUID = %v", err)
			}
			if got != tt.want || !v4.MatchString(got) {
				t.Errorf("newUUID = %s, want %s (a version 4 UUID)", got, tt.want)
			}
		})
	}
	if _, err := newUUID(bytes.NewReader(make([]byte, 15))); err == nil {
		t.Error("newUUID(15 bytes) = nil error, want one")
	}
}

func TestTimestamp(t *testing.T) {
	tests := []struct {
		name string
		ms   float64
		want string
	}{
		{"epoch", 0, "1970-01-01T00:00:00Z"},
		{"utc", 1767225600999, "2026-01-01T00:00:00Z"},
		{"negative", -1, "-"},
		{"beyond year 9999", 1e15, "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := timestamp(tt.ms); got != tt.want {
				t.Errorf("timestamp(%v) = %s, want %s", tt.ms, got, tt.want)
			}
		})
	}
}

// TestRun drives run itself, with the process env: a reader on a missing
// store fails with exit 1 and creates nothing, and help is exit 0.
func TestRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "missing.db")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"reader on a missing store", []string{"--db", db, "ls"}, exitFailure, "", "logtool: no store at " + db + "\nhint: "},
		{"help", []string{"--help"}, exitOK, "Usage:\n  logtool [flags]\n  logtool [command]", ""},
		{"usage", []string{"--db", db, "export"}, exitUsage, "", "logtool: export: missing SESSION\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr)
			if code != tt.code || !strings.Contains(stdout.String(), tt.stdout) || !strings.HasPrefix(stderr.String(), tt.stderr) {
				t.Errorf("run(%q) = %d, stdout %q, stderr %q; want %d, %q, %q",
					tt.args, code, stdout.String(), stderr.String(), tt.code, tt.stdout, tt.stderr)
			}
			if tt.stdout == "" && stdout.Len() != 0 {
				t.Errorf("run(%q) wrote %q on stdout, want nothing", tt.args, stdout.String())
			}
			if _, err := os.Stat(db); err == nil {
				t.Errorf("run(%q) created %s", tt.args, db)
			}
		})
	}
}

func TestWriteFileAtomic(t *testing.T) {
	errWrite := errors.New("write failed")
	tests := []struct {
		name     string
		existing []byte      // nil: no file before
		mode     os.FileMode // of the existing file
		write    string
		fail     bool
		want     string
		wantMode os.FileMode
	}{
		{name: "new file", write: "new\n", want: "new\n", wantMode: 0o644},
		{name: "replaces, keeps mode", existing: []byte("old\n"), mode: 0o600, write: "new\n", want: "new\n", wantMode: 0o600},
		{name: "failed write keeps the old file", existing: []byte("old\n"), mode: 0o640, write: "partial", fail: true, want: "old\n", wantMode: 0o640},
		{name: "failed write creates nothing", write: "partial", fail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
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
			err := writeFileAtomic(path, func(w io.Writer) error {
				if _, err := io.WriteString(w, tt.write); err != nil {
					return err
				}
				if tt.fail {
					return errWrite
				}
				return nil
			})
			if tt.fail != (err != nil) {
				t.Fatalf("writeFileAtomic = %v, want failure %v", err, tt.fail)
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
