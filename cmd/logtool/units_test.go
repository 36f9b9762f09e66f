package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
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

// TestHelpReadable reads every command's --help as a user does: exit 0,
// all of it printable text (a flag's hidden sentinel default once printed
// a NUL byte into replay's), and replay's optional --wire NAME shown with
// the default it takes.
func TestHelpReadable(t *testing.T) {
	var root bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, &root, io.Discard); code != exitOK {
		t.Fatalf("logtool --help = %d, want %d", code, exitOK)
	}
	_, list, ok := strings.Cut(root.String(), "Available Commands:\n")
	if !ok {
		t.Fatalf("logtool --help lists no commands:\n%s", root.String())
	}
	list, _, _ = strings.Cut(list, "\n\n")
	var names []string
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	if len(names) < 10 {
		t.Fatalf("logtool --help lists %d commands, want every one: %q", len(names), names)
	}
	for _, name := range names {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{name, "--help"}, &stdout, &stderr); code != exitOK || stderr.Len() != 0 {
			t.Errorf("logtool %s --help = %d, stderr %q; want %d and nothing", name, code, stderr.String(), exitOK)
		}
		for i, r := range stdout.String() {
			if r != '\n' && !unicode.IsPrint(r) {
				t.Errorf("logtool %s --help: unprintable %q at byte %d", name, r, i)
				break
			}
		}
		if name == "replay" && !strings.Contains(stdout.String(), `--wire NAME[="auto"]`) {
			t.Errorf("logtool replay --help does not show --wire's default:\n%s", stdout.String())
		}
	}
}
