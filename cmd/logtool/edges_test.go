package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
)

// cancelReader cancels a context on its first Read, then reads r: an
// interrupt that arrives while a file is being imported.
type cancelReader struct {
	cancel context.CancelFunc
	r      io.Reader
}

func (c *cancelReader) Read(p []byte) (int, error) {
	c.cancel()
	return c.r.Read(p)
}

// TestImportInterrupted: an interrupt during import rolls the current file
// back, leaves the files after it unattempted, says how many, and exits
// 130. The file before it stays imported.
func TestImportInterrupted(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sessions.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kinds, err := os.ReadFile("testdata/import/kinds.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	e := env{
		stdin:  &cancelReader{cancel: cancel, r: bytes.NewReader(kinds)},
		getenv: func(string) string { return "" },
		now:    func() time.Time { return testNow },
		random: strings.NewReader(strings.Repeat("r", 64)),
	}
	var stdout, stderr bytes.Buffer
	args := []string{"--db", db, "import", "testdata/import/basic.jsonl", "-", "testdata/import/torn.jsonl", "testdata/import/delta-first.jsonl"}
	code := runEnv(ctx, e, args, &stdout, &stderr)
	if code != exitInterrupted {
		t.Errorf("exit %d; want %d (stderr %q)", code, exitInterrupted, stderr.String())
	}
	if got, want := stdout.String(), "basic-1 28\n"; got != want {
		t.Errorf("stdout %q; want %q", got, want)
	}
	if got, want := stderr.String(), "logtool: import interrupted: stdin was rolled back; 2 of 4 files not attempted\n"; got != want {
		t.Errorf("stderr %q; want %q", got, want)
	}
	st, err := boltlog.Open(db, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	heads, err := st.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(heads) != 1 || heads[0].Header.ID != "basic-1" {
		t.Errorf("the store holds %d sessions; want basic-1 alone", len(heads))
	}
}

// TestUsageEdges: command lines a shell can pass but a script cannot
// spell: an empty --step is a usage error (exit 2), not "every step".
func TestUsageEdges(t *testing.T) {
	tests := []struct {
		args       []string
		code       int
		wantStderr string
	}{
		{[]string{"replay", "s", "--step", ""}, exitUsage,
			"logtool: replay: --step needs a step T.S (turn.step, from 1.1)\nhint: run 'logtool replay --help' for usage\n"},
		{[]string{"replay", "s", "--step="}, exitUsage,
			"logtool: replay: --step needs a step T.S (turn.step, from 1.1)\nhint: run 'logtool replay --help' for usage\n"},
		{[]string{"--db", "", "ls"}, exitUsage,
			"logtool: --db must name a file\nhint: run 'logtool ls --help' for usage\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			e := env{stdin: strings.NewReader(""), getenv: func(string) string { return "" },
				now: func() time.Time { return testNow }, random: strings.NewReader("")}
			var stdout, stderr bytes.Buffer
			code := runEnv(context.Background(), e, tt.args, &stdout, &stderr)
			if code != tt.code || stderr.String() != tt.wantStderr || stdout.Len() != 0 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stderr %q", code, stdout.String(), stderr.String(), tt.code, tt.wantStderr)
			}
		})
	}
}

// envInterruptChild is set in the environment of TestInterruptChild.
const envInterruptChild = "LOGTOOL_TEST_INTERRUPT_CHILD"

// TestInterruptChild is the child process of TestImportSIGINT: it runs
// main, the real entry point with its signal handling, on the test
// binary's arguments after "--". main exits the process.
func TestInterruptChild(t *testing.T) {
	if os.Getenv(envInterruptChild) == "" {
		t.Skip("the child process of TestImportSIGINT")
	}
	os.Args = append([]string{"logtool"}, flag.Args()...)
	main()
}

// TestImportSIGINT sends a real SIGINT to a logtool process (this test
// binary running main) while it imports: after the first file, while it
// waits on the second, a FIFO. Signals arrive when they arrive, so the
// test checks what holds wherever it lands: the process exits 130, its
// last line says how many files were not attempted, and every file is
// accounted for: imported (on stdout, and in the store, nothing else is),
// refused, rolled back, or not attempted.
func TestImportSIGINT(t *testing.T) {
	dir := t.TempDir()
	db, fifo := filepath.Join(dir, "sessions.db"), filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--db", db, "import", "testdata/import/basic.jsonl", fifo,
		"testdata/import/kinds.jsonl", "testdata/import/torn.jsonl"}
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestInterruptChild$", "-test.count=1", "--"}, args...)...)
	cmd.Env = append(os.Environ(), envInterruptChild+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The first file's line says the import has moved on to the FIFO.
	first, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || first != "basic-1 28\n" {
		_ = cmd.Process.Kill()
		t.Fatalf("first line %q, %v; stderr %s", first, err, stderr.String())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	// Give the signal time to reach the command before the FIFO has data
	// (not needed for the checks below, which hold either way: it keeps
	// the signal from landing after the last file).
	time.Sleep(100 * time.Millisecond)
	// Feed the FIFO, opened read-write so that this never blocks; it stays
	// open until the child is gone, so the child never waits on it forever.
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	delta, err := os.ReadFile("testdata/import/delta-first.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(delta); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stdout)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("no exit a minute after SIGINT; stderr %s", stderr.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
		t.Fatalf("child: %v; want exit %d; stderr %s", err, exitInterrupted, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	last := regexp.MustCompile(`^logtool: import interrupted: (no file was being imported|.+ was rolled back); ([0-9]) of 4 files not attempted$`)
	m := last.FindStringSubmatch(lines[len(lines)-1])
	if m == nil {
		t.Fatalf("last line %q; want it to match %s", lines[len(lines)-1], last)
	}
	imported := strings.Fields(first + string(rest))
	refused, rolledBack, notAttempted := 0, 0, int(m[2][0]-'0')
	for _, l := range lines[:len(lines)-1] {
		if strings.HasPrefix(l, "logtool: import ") { // not hints or warnings
			refused++
		}
	}
	if m[1] != "no file was being imported" {
		rolledBack = 1
	}
	if n := len(imported)/2 + refused + rolledBack + notAttempted; n != 4 || notAttempted == 0 {
		t.Errorf("%d imported, %d refused, %d rolled back, %d not attempted: want 4 files, some not attempted\nstdout %q\nstderr %q",
			len(imported)/2, refused, rolledBack, notAttempted, first+string(rest), stderr.String())
	}
	st, err := boltlog.Open(db, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	heads, err := st.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range heads {
		ids = append(ids, h.Header.ID)
	}
	var want []string
	for i := 0; i < len(imported); i += 2 {
		want = append(want, imported[i])
	}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Errorf("the store holds %q; want what stdout says was imported, %q", ids, want)
	}
	t.Logf("%d imported, %d refused, %d rolled back, %d not attempted", len(want), refused, rolledBack, notAttempted)
}
