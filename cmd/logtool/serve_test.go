package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a buffer the serving goroutine writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServe runs logtool serve on a free loopback port over a store the
// demo wrote, fetches the session list and a session's cache chart, and
// stops it with its context: it exits 0, and its log lines hold no path.
func TestServe(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sessions.db")
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"--db", db, "run", "testdata/scenarios/audit.json", "--session", "s1"}, &out, &errs); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errs.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"--db", db, "serve", "--addr", "127.0.0.1:0"}, &stdout, &stderr) }()
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == "" && time.Now().Before(deadline); {
		if s := stdout.String(); strings.HasSuffix(s, "/\n") {
			base = strings.TrimSuffix(strings.TrimSpace(s), "/")
			break
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d early:\n%s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("serve printed %q, want its URL", stdout.String())
	}
	for _, p := range []string{"/", "/s/s1/cache"} {
		res, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(body), "s1") {
			t.Fatalf("GET %s = %d:\n%s", p, res.StatusCode, body)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exited %d:\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop with its context")
	}
	if logs := stderr.String(); strings.Count(logs, "msg=request") != 2 || strings.Contains(logs, "/s/s1") {
		t.Errorf("serve's log lines:\n%s", logs)
	}
}

// TestServeHosts (issue 19, item 9) runs logtool serve on a loopback
// port: a request whose Host is not one of its names (a page whose name
// was rebound to 127.0.0.1) gets 421; --host adds a name; --allow-remote
// on every interface without --host is a usage error.
func TestServeHosts(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sessions.db")
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"--db", db, "run", "testdata/scenarios/audit.json", "--session", "s1"}, &out, &errs); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errs.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--db", db, "serve", "--addr", "127.0.0.1:0", "--host", "audit.test"}, &stdout, &stderr)
	}()
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == "" && time.Now().Before(deadline); {
		if s := stdout.String(); strings.HasSuffix(s, "/\n") {
			base = strings.TrimSuffix(strings.TrimSpace(s), "/")
			break
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d early:\n%s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	port := base[strings.LastIndexByte(base, ':'):]
	for host, want := range map[string]int{"": 200, "localhost" + port: 200, "[::1]" + port: 200, "audit.test" + port: 200,
		"rebound.example" + port: 421, "audit.test.example": 421} {
		req, _ := http.NewRequest(http.MethodGet, base+"/api/sessions/s1", nil)
		if host != "" {
			req.Host = host
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != want || (want == 421 && strings.Contains(string(body), "s1")) {
			t.Errorf("Host %q: %d, want %d\n%s", host, res.StatusCode, want, body)
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, stderr.String())
	}
	for _, args := range [][]string{{"--addr", ":0", "--allow-remote"}, {"--addr", "0.0.0.0:0", "--allow-remote"}, {"--host", "http://x/"}} {
		var o, e bytes.Buffer
		if code := run(context.Background(), append([]string{"--db", db, "serve"}, args...), &o, &e); code != 2 {
			t.Errorf("serve %q: exit %d, want 2\n%s", args, code, e.String())
		}
	}
}
