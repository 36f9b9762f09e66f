package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/rebuild"
)

// testNow is the clock of every scripted run: fork and demo times are
// derived from it, so their output is stable.
var testNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fileSizeLine matches the value of stat's "file size" line.
var fileSizeLine = regexp.MustCompile(`(?m)^(file size +)[0-9]+`)

// readOnlyCommands are the commands that must leave the store untouched.
var readOnlyCommands = map[string]bool{"export": true, "ls": true, "show": true, "stat": true,
	"replay": true, "verify": true, "diff": true, "cache": true}

// TestCLI runs the scripts in testdata/cli. Each file runs in a fresh temp
// dir whose store is $DB. Directives:
//
//	logtool ARGS...      run logtool (with --db $DB unless ARGS name one or
//	                     $LOGTOOL_DB is set); the input is stdin; prints the
//	                     exit code, stdout and stderr. Read-only commands are
//	                     checked to leave the store byte-identical (and
//	                     uncreated when it was missing).
//	setenv NAME=VALUE    set a variable of the env logtool sees
//	exists PATH          print whether PATH exists
//	cmp A B              print whether files A and B are byte-identical
//	cat PATH             print a file
//	lock / unlock        hold the store open for writing in the test, as
//	                     another process would
//	flip-meta PATH       damage the newest bbolt meta page (as TestSalvage)
//
// $TMP and $DB are expanded in arguments, and the temp dir is printed as
// $TMP. Rewrite expected output with go test ./cmd/logtool -run TestCLI -rewrite.
func TestCLI(t *testing.T) {
	datadriven.Walk(t, "testdata/cli", func(t *testing.T, path string) {
		s := newScript(t)
		defer s.unlock(t)
		datadriven.RunTest(t, path, s.run)
	})
}

// script is the state of one datadriven file.
type script struct {
	tmp, db string
	vars    map[string]string
	// subst holds replacements (old, new, …) applied to outputs after
	// $TMP: run-dependent numbers a directive named.
	subst  []string
	random *rand.ChaCha8
	held   *boltlog.Log
}

func newScript(t *testing.T) *script {
	tmp := t.TempDir()
	return &script{
		tmp:    tmp,
		db:     filepath.Join(tmp, "sessions.db"),
		vars:   map[string]string{},
		random: rand.NewChaCha8([32]byte{'l', 'o', 'g', 't', 'o', 'o', 'l'}),
	}
}

func (s *script) expand(a string) string {
	a = strings.ReplaceAll(a, "$DB", s.db)
	return strings.ReplaceAll(a, "$TMP", s.tmp)
}

func (s *script) env(stdin string) env {
	return env{
		stdin:  strings.NewReader(stdin),
		getenv: func(k string) string { return s.vars[k] },
		now:    func() time.Time { return testNow },
		random: s.random,
	}
}

func (s *script) run(t *testing.T, td *datadriven.TestData) string {
	args := make([]string, 0, len(td.CmdArgs))
	for _, a := range td.CmdArgs {
		args = append(args, s.expand(a.String()))
	}
	switch td.Cmd {
	case "logtool":
		return s.logtool(t, td, args)
	case "setenv":
		for _, a := range td.CmdArgs {
			s.vars[a.Key] = s.expand(a.Vals[0])
		}
		return ""
	case "exists":
		_, err := os.Stat(args[0])
		return fmt.Sprintf("%v\n", err == nil)
	case "cmp":
		a, errA := os.ReadFile(args[0])
		b, errB := os.ReadFile(args[1])
		if errA != nil || errB != nil {
			t.Fatalf("%s: cmp: %v %v", td.Pos, errA, errB)
		}
		if bytes.Equal(a, b) {
			return "identical\n"
		}
		return fmt.Sprintf("differ (%d and %d bytes)\n", len(a), len(b))
	case "cat":
		b, err := os.ReadFile(args[0])
		if err != nil {
			t.Fatalf("%s: cat: %v", td.Pos, err)
		}
		return string(b)
	case "lock":
		l, err := boltlog.Open(s.db, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
		if err != nil {
			t.Fatalf("%s: lock: %v", td.Pos, err)
		}
		s.held = l
		return ""
	case "unlock":
		s.unlock(t)
		return ""
	case "flip-meta":
		return flipMetaDirective(t, td, args[0])
	}
	t.Fatalf("%s: unknown directive %s", td.Pos, td.Cmd)
	return ""
}

func (s *script) unlock(t *testing.T) {
	if s.held != nil {
		if err := s.held.Close(); err != nil {
			t.Errorf("unlock: %v", err)
		}
		s.held = nil
	}
}

// logtool runs one command line and renders its result.
func (s *script) logtool(t *testing.T, td *datadriven.TestData, args []string) string {
	named := s.vars["LOGTOOL_DB"] != ""
	for _, a := range args {
		if a == "--db" || strings.HasPrefix(a, "--db=") {
			named = true
		}
	}
	if !named {
		args = append([]string{"--db", s.db}, args...)
	}
	stdin := td.Input
	if stdin != "" {
		stdin += "\n"
	}
	readOnly := false
	for _, a := range args {
		if readOnlyCommands[a] {
			readOnly = true
			break
		}
	}
	before := fileState(t, s.db)
	var stdout, stderr bytes.Buffer
	code := runEnv(context.Background(), s.env(stdin), args, &stdout, &stderr)
	if readOnly {
		if after := fileState(t, s.db); after != before {
			t.Errorf("%s: read-only command changed the store: %s, then %s", td.Pos, before, after)
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "exit %d\n", code)
	for _, part := range []struct {
		name string
		buf  *bytes.Buffer
	}{{"stdout", &stdout}, {"stderr", &stderr}} {
		if part.buf.Len() == 0 {
			continue
		}
		text := strings.ReplaceAll(part.buf.String(), s.tmp, "$TMP")
		if len(s.subst) > 0 {
			text = strings.NewReplacer(s.subst...).Replace(text)
		}
		// The file size depends on the page size of the platform.
		text = fileSizeLine.ReplaceAllString(text, "${1}N")
		fmt.Fprintf(&out, "%s:\n%s", part.name, text)
		if !strings.HasSuffix(text, "\n") {
			out.WriteString("<no newline at end>\n")
		}
	}
	return out.String()
}

// fileState describes a file for before/after comparison: missing, or its
// size and SHA-256.
func fileState(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "missing"
	}
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return fmt.Sprintf("%d bytes sha256 %x", len(b), sha256.Sum256(b))
}
