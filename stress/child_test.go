package stress

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
)

// A child is this test binary re-executed to run one test function as a
// separate process: the function reads its role from envRole and skips
// when it is absent, so a normal run of the package never does child work.
const (
	envRole  = "SESSIONLOG_STRESS_ROLE"
	envStore = "SESSIONLOG_STRESS_STORE"
	envSeed  = "SESSIONLOG_STRESS_SEED"
	envIDs   = "SESSIONLOG_STRESS_SESSIONS"
	// envSabotage makes a child fail on purpose, for the tests that show
	// the checks of a run fire (crash_sabotage_test.go): "stall" makes a
	// crash child block right after its start line.
	envSabotage = "SESSIONLOG_STRESS_SABOTAGE"
	// envSegment sets the small write-ahead log segment size of a crash
	// child (childWAL).
	envSegment = "SESSIONLOG_STRESS_WAL_SEGMENT"
)

// childLimit is how long a child lives at most: it is killed or told to
// stop long before, but must never outlive a parent that died.
const childLimit = 2 * time.Minute

// child is a running child process with its stdout read line by line.
type child struct {
	t     testing.TB
	cmd   *exec.Cmd
	stdin io.WriteCloser
	// lines delivers the child's complete stdout lines, then is closed at
	// EOF. A last line without its newline (the child was killed while
	// writing it) is dropped.
	lines  chan string
	stderr *lockedBuffer
	done   chan struct{} // closed once Wait has returned
	state  *os.ProcessState
	err    error
}

// startChild runs the test named test in a child process with role and the
// given extra environment (KEY=VALUE).
func startChild(t testing.TB, test, role string, env ...string) *child {
	t.Helper()
	return startChildFor(t, childLimit, test, role, env...)
}

// startChildFor is startChild for a child that may live up to limit: one
// that ends by itself when its stdin closes (watchStdin), so that a long
// limit never lets it outlive its parent.
func startChildFor(t testing.TB, limit time.Duration, test, role string, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1",
		"-test.timeout="+limit.String())
	// Under -race, a race in the child must end it at once: a crash child
	// is killed before it could report one at exit.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " halt_on_error=1")
	cmd.Env = append(append(os.Environ(), envRole+"="+role, "GORACE="+gorace), env...)
	c := &child{t: t, cmd: cmd, lines: make(chan string, 4096), stderr: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stderr = c.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child %s: %v", test, err)
	}
	go func() {
		r := bufio.NewReaderSize(stdout, 64<<10)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				break // EOF, or a torn last line: dropped
			}
			c.lines <- strings.TrimSuffix(line, "\n")
		}
		close(c.lines)
		c.err = cmd.Wait()
		c.state = cmd.ProcessState
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			_ = cmd.Process.Kill()
			for range c.lines { // unblock the reader
			}
			<-c.done
		}
	})
	return c
}

// next returns the child's next stdout line, or ok=false when its stdout
// ended or nothing came within wait.
func (c *child) next(wait time.Duration) (line string, ok bool) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case line, ok = <-c.lines:
		return line, ok
	case <-timer.C:
		return "", false
	}
}

// expect reads lines until one equals want, failing when the child's
// stdout ends first or nothing comes for a minute.
func (c *child) expect(want string) {
	c.t.Helper()
	for {
		line, ok := c.next(time.Minute)
		if !ok {
			c.t.Fatalf("child: no %q line; it said on stderr:\n%s", want, c.stderr.String())
		}
		if line == want {
			return
		}
	}
}

// kill sends SIGKILL, waits for the child to be gone and returns the
// lines it wrote before dying that were not read yet.
func (c *child) kill() []string {
	c.t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		select {
		case <-c.done: // it had exited already; killedBySignal tells how
		default:
			if !errors.Is(err, os.ErrProcessDone) {
				c.t.Fatalf("kill child: %v", err)
			}
		}
	}
	var rest []string
	for line := range c.lines {
		rest = append(rest, line)
	}
	<-c.done
	return rest
}

// killedBySignal reports whether the child ended by SIGKILL (rather than
// exiting by itself, which for a crash child means it failed) without
// having reported a data race.
func (c *child) killedBySignal() bool {
	ws, ok := c.state.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL && !strings.Contains(c.stderr.String(), "DATA RACE")
}

// wait closes the child's stdin (its signal to finish) and waits for it
// to exit, failing unless it exited with status 0.
func (c *child) wait() {
	c.t.Helper()
	_ = c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(time.Minute):
		c.t.Fatalf("child did not exit within a minute of its stdin closing")
	}
	if c.err != nil {
		c.t.Fatalf("child: %v; stderr:\n%s", c.err, c.stderr.String())
	}
}

// lockedBuffer is a bytes.Buffer safe for the writer (exec's copier) and a
// reader (a failing test) at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// watchStdin ends the process when its stdin reaches EOF: a child's parent
// closes it to say "finish", and it closes by itself when the parent dies,
// so no child outlives its test.
func watchStdin(finish func()) {
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		finish()
	}()
}
