package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/verify"
	"github.com/sessionlog/sessionlog/wire"
)

// fakeOpenAI is an OpenAI-compatible server: the first request is
// answered with a list_folder call, the second with a read_file call of
// the file it listed, the third with text. It keeps every body.
type fakeOpenAI struct {
	mu     sync.Mutex
	bodies [][]byte
	auth   []string
}

func sse(w io.Writer, events ...string) {
	for _, e := range events {
		fmt.Fprintf(w, "data: %s\n\n", e)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func toolCall(id, name, args string) string {
	return fmt.Sprintf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":%q,"type":"function","function":{"name":%q,"arguments":%q}}]}}]}`, id, name, args)
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	n := len(f.bodies)
	f.mu.Unlock()
	if r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "no such path", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	stop := `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`
	switch n {
	case 1:
		sse(w, toolCall("call_1", "list_folder", `{"path":"."}`), stop)
	case 2:
		sse(w, toolCall("call_2", "read_file", `{"path":"notes.txt"}`), stop)
	case 3:
		sse(w, toolCall("call_3", "read_file", `{"path":"../outside.txt"}`), stop)
	default:
		sse(w, `{"choices":[{"index":0,"delta":{"content":"The folder holds notes.txt: remember the milk."}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":50,"completion_tokens":9}}`)
	}
}

// TestSmoke runs the agent against a fake OpenAI-compatible server: it
// streams the answer, the tools read the folder (and refuse to leave it),
// every request the server got is the one the log rebuilds (verify), and
// the closing lines tell how to audit the session.
func TestSmoke(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "folder")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "notes.txt"), []byte("remember the milk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "outside.txt"), []byte("SECRET-OUTSIDE"), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := &fakeOpenAI{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	db := filepath.Join(dir, "sessions.db")
	env := map[string]string{"OPENAI_API_KEY": "sk-test-key"}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--provider", wire.OpenAIChat, "--base-url", srv.URL + "/v1",
		"--model", "gpt-test", "--db", db, "--root", folder, "What is in the folder?"},
		strings.NewReader(""), &stdout, &stderr, func(k string) string { return env[k] })
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"remember the milk.", "Audit it with:", "replay", "verify", "--strict"} {
		if !strings.Contains(out, want) {
			t.Fatalf("stdout lacks %q:\n%s", want, out)
		}
	}
	if len(fake.bodies) != 4 {
		t.Fatalf("the server got %d requests, want 4", len(fake.bodies))
	}
	if !bytes.Contains(fake.bodies[1], []byte(`notes.txt`)) || !bytes.Contains(fake.bodies[2], []byte(`remember the milk`)) {
		t.Fatalf("the tool results did not reach the model:\n%s\n%s", fake.bodies[1], fake.bodies[2])
	}
	if bytes.Contains(fake.bodies[3], []byte("SECRET-OUTSIDE")) {
		t.Fatal("read_file read outside its folder")
	}
	if fake.auth[0] != "Bearer sk-test-key" {
		t.Fatalf("Authorization %q", fake.auth[0])
	}
	if strings.Contains(stderr.String(), "sk-test-key") || strings.Contains(stderr.String(), "milk") {
		t.Fatalf("a key or content reached the log:\n%s", stderr.String())
	}

	// The log explains every request: verify it, strictly.
	l, err := boltlog.Open(db, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	heads, err := l.Sessions(context.Background())
	if err != nil || len(heads) != 1 {
		t.Fatalf("sessions %v, %v", heads, err)
	}
	id := heads[0].Header.ID
	if !strings.Contains(out, "--session "+id) {
		t.Fatalf("stdout does not name session %s:\n%s", id, out)
	}
	res, err := verify.Session(context.Background(), l, id, verify.Options{Strict: true})
	if err != nil || res.Failed() || res.Digests != 4 {
		t.Fatalf("verify: %+v, %v", res, err)
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--provider", wire.OpenAIChat, "--base-url", "http://127.0.0.1:1"},
		{"--nope"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, strings.NewReader("hi"), &stdout, &stderr, func(string) string { return "" }); code != 2 {
			t.Errorf("%q: exit %d, want 2 (stderr %s)", args, code, stderr.String())
		}
		if stdout.Len() != 0 {
			t.Errorf("%q: stdout %q on a usage error", args, stdout.String())
		}
	}
}

// TestSmokeAnthropic: the same host against a fake Messages API, text only.
func TestSmokeAnthropic(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("x-api-key"))
		mu.Unlock()
		if r.URL.Path != "/v1/messages" {
			http.Error(w, "no such path", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range []string{
			`{"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","content":[],"model":"claude-test","usage":{"input_tokens":20,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Nothing to read."}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}`,
			`{"type":"message_stop"}`,
		} {
			typ := strings.SplitN(strings.TrimPrefix(e, `{"type":"`), `"`, 2)[0]
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, e)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "sessions.db")
	env := map[string]string{"ANTHROPIC_API_KEY": "ak-test"}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--provider", wire.AnthropicMessages, "--base-url", srv.URL,
		"--model", "claude-test", "--db", db, "--root", dir, "--verbose", "hello"},
		strings.NewReader(""), &stdout, &stderr, func(k string) string { return env[k] })
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "Nothing to read.") || len(keys) != 1 || keys[0] != "ak-test" {
		t.Fatalf("stdout %q, keys %q", stdout.String(), keys)
	}
	if strings.Contains(stderr.String(), "ak-test") {
		t.Fatalf("the key reached the log:\n%s", stderr.String())
	}
}
