package wal

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

const killDirEnv = "WAL_KILL_TEST_DIR"

// TestMain runs the appending child of TestKill when asked to.
func TestMain(m *testing.M) {
	if dir := os.Getenv(killDirEnv); dir != "" {
		killChild(dir)
		return
	}
	os.Exit(m.Run())
}

// killChild appends records with small, synced segments and prints each
// lsn once Append has acknowledged it, until it is killed.
func killChild(dir string) {
	w, _, err := Open(dir, 0, Options{SegmentSize: 4096}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out := bufio.NewWriter(os.Stdout)
	for {
		lsn, err := w.Append(payloadFor(w.Last() + 1))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Fprintln(out, lsn)
		out.Flush()
	}
}

// TestKill kills an appending process (SIGKILL) at random points, mid-write
// and mid-cut included, and reopens: no acknowledged record is lost, and
// appends continue. (A kill tests the process, not power loss: the page
// cache survives; power loss is the crash tests' part.)
func TestKill(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var acked uint64
	for round := 0; round < 8; round++ {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), killDirEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		kill := func() { cmd.Process.Signal(syscall.SIGKILL) }
		safety := time.AfterFunc(time.Minute, kill)
		// Kill once the child has acknowledged some records of its own,
		// a little later, so that the kill lands anywhere in a write.
		target, seen := 10+round*13, 0
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if lsn, err := strconv.ParseUint(sc.Text(), 10, 64); err == nil && lsn > acked {
				acked = lsn
			}
			if seen++; seen == target {
				time.AfterFunc(time.Duration(round%4)*time.Millisecond, kill)
			}
		}
		safety.Stop()
		cmd.Wait()
		var got []rec
		w, rep, err := Open(dir, 0, Options{SegmentSize: 4096, NoSync: true}, collect(&got))
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if rep.Last < acked {
			t.Fatalf("round %d: acknowledged lsn %d, WAL ends at %d (%+v)", round, acked, rep.Last, rep)
		}
		checkRecords(t, got, 1, rep.Last)
		t.Logf("round %d: acked %d, read %d, torn %d bytes at %q", round, acked, rep.Last, rep.TornBytes, rep.TornAt)
		w.Close()
	}
	if acked < 100 {
		t.Fatalf("only %d records acknowledged in all rounds", acked)
	}
	segs, _ := Segments(dir)
	if len(segs) < 3 {
		t.Fatalf("%d segments: no cut was exercised", len(segs))
	}
}
