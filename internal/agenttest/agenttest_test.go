package agenttest

import (
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunTimeout checks that a run that outlasts its bound ends, and
// takes its whole process group with it.
func TestRunTimeout(t *testing.T) {
	e := NewEnv(t)
	e.Timeout = 500 * time.Millisecond
	pidFile := filepath.Join(e.Tmp, "pid")
	start := time.Now()
	r := e.Run(t, nil, "/bin/sh", "-c", `sleep 60 & echo $! > "$1"; wait`, "sh", pidFile)
	if r.Err == nil || !strings.Contains(r.Err.Error(), "timed out") {
		t.Fatalf("run: %v, want a timeout", r.Err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the run took %v to end", took)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the run's child %d outlived it", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRunEnvironment checks that a run sees the Env's variables and
// extra, and nothing else of the test's environment.
func TestRunEnvironment(t *testing.T) {
	t.Setenv("AGENTTEST_SECRET_OF_THE_HOST", "x")
	e := NewEnv(t)
	r := e.Run(t, []string{"EXTRA=1"}, "/usr/bin/env")
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	out := string(r.Stdout)
	for _, want := range []string{"HOME=" + e.Home + "\n", "TMPDIR=" + e.Tmp + "\n", "HTTPS_PROXY=" + e.Sink.URL + "\n", "EXTRA=1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("environment lacks %q", want)
		}
	}
	if strings.Contains(out, "AGENTTEST_SECRET_OF_THE_HOST") {
		t.Errorf("the test's own environment leaked into the run")
	}
}

// TestSinkRefuses checks that the sink records a tunnel and a plain
// request through it, and lets neither through.
func TestSinkRefuses(t *testing.T) {
	s := NewSink(t)
	proxy, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}, Timeout: 10 * time.Second}
	if resp, err := c.Get("https://example.invalid/secret"); err == nil {
		resp.Body.Close()
		t.Errorf("a tunnel through the sink was opened")
	}
	resp, err := c.Get("http://example.invalid/plain")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("plain request through the sink: %d", resp.StatusCode)
	}
	got := s.Attempts()
	if len(got) != 2 || got[0] != "CONNECT example.invalid:443" || got[1] != "GET http://example.invalid/plain" {
		t.Errorf("attempts %q", got)
	}
}

// alive says whether process pid runs: it exists and is not a zombie
// waiting for a parent (or an init) to reap it.
func alive(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command's closing parenthesis.
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
