package agenttest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The agents .ci/agents.sh installs, by the name of their command under
// the install directory's bin/.
const (
	Claude = "claude"
	Codex  = "codex"
	Gemini = "gemini"
)

// RunTimeout bounds one run of an agent.
const RunTimeout = 120 * time.Second

// Binary returns the path of the installed agent name, skipping t with
// one line when it is absent, or failing it when
// $SESSIONLOG_TEST_AGENTS_REQUIRED=1.
func Binary(t testing.TB, name string) string {
	t.Helper()
	dir := os.Getenv("SESSIONLOG_TEST_AGENTS")
	if dir == "" {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, ".cache", "sessionlog-agents")
		}
	}
	path := filepath.Join(dir, "bin", name)
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("SESSIONLOG_TEST_AGENTS_REQUIRED") == "1" {
			t.Fatalf("agent %s is required (SESSIONLOG_TEST_AGENTS_REQUIRED=1) but not installed at %s: run .ci/agents.sh", name, path)
		}
		t.Skipf("agent %s not installed at %s (.ci/agents.sh installs it)", name, path)
	}
	return path
}

// Env is an isolated place to run an agent: a throwaway home, temporary
// directory and working directory, and a proxy sink that every request
// not to loopback is sent to (and recorded by, and refused).
type Env struct {
	Home, Tmp, Work string
	Sink            *Sink
	// Vars are the environment variables of every run, "NAME=value".
	Vars []string
	// Timeout bounds each run (RunTimeout unless changed).
	Timeout time.Duration
}

// NewEnv makes an Env under t's temporary directory. The environment
// holds PATH (to find node and a shell), the throwaway HOME, TMPDIR and
// XDG directories, and HTTPS_PROXY/HTTP_PROXY/ALL_PROXY naming the sink,
// with NO_PROXY covering loopback; nothing else of the test's own
// environment.
func NewEnv(t testing.TB) *Env {
	t.Helper()
	root := t.TempDir()
	e := &Env{Home: filepath.Join(root, "home"), Tmp: filepath.Join(root, "tmp"), Work: filepath.Join(root, "work"), Timeout: RunTimeout}
	for _, d := range []string{e.Home, e.Tmp, e.Work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	e.Sink = NewSink(t)
	proxy := e.Sink.URL
	e.Vars = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + e.Home,
		"TMPDIR=" + e.Tmp,
		"XDG_CONFIG_HOME=" + filepath.Join(e.Home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(e.Home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(e.Home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(e.Home, ".local", "state"),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
		"HTTPS_PROXY=" + proxy, "https_proxy=" + proxy,
		"HTTP_PROXY=" + proxy, "http_proxy=" + proxy,
		"ALL_PROXY=" + proxy, "all_proxy=" + proxy,
		"NO_PROXY=127.0.0.1,localhost,::1", "no_proxy=127.0.0.1,localhost,::1",
	}
	return e
}

// Result is what one run of an agent gave.
type Result struct {
	Stdout, Stderr []byte
	Err            error // nil when it exited 0
	Took           time.Duration
}

// Run runs bin with args in e.Work with e's environment plus extra,
// standard input empty, bounded by e.Timeout: on the timeout its whole
// process group is killed, and so is whatever of the group outlives it
// when it ends.
func (e *Env) Run(t testing.TB, extra []string, bin string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = e.Work
	cmd.Env = append(append([]string(nil), e.Vars...), extra...)
	cmd.Stdin = nil
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	if cmd.Process != nil {
		// Whatever the agent left running in its group goes with it.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if ctx.Err() != nil {
		err = errors.Join(err, errors.New("agenttest: the run timed out"))
	}
	return Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Err: err, Took: time.Since(start)}
}

// Sink is the proxy every agent is pointed at: it records each attempt
// (a CONNECT's target, a plain request's method and URL) and refuses it,
// so nothing an agent sends past its model reaches the network.
type Sink struct {
	URL string

	mu       sync.Mutex
	attempts []string
}

// NewSink starts a sink, closed when t ends.
func NewSink(t testing.TB) *Sink {
	s := &Sink{}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// ServeHTTP records and refuses.
func (s *Sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
	target := r.Method + " " + r.Host
	if r.Method != http.MethodConnect {
		target = r.Method + " " + r.URL.String()
	}
	s.mu.Lock()
	s.attempts = append(s.attempts, target)
	s.mu.Unlock()
	http.Error(w, "agenttest: no network here", http.StatusForbidden)
}

// Attempts returns what reached the sink, in order.
func (s *Sink) Attempts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.attempts...)
}

// Tail returns the last n bytes of b as text, for a failure message.
func Tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.ToValidUTF8(string(b), "?")
}
