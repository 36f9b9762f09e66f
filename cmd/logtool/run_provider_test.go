package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// liveAnswers are a live model's two answers, in each API's SSE: first a
// tool call whose id the scenario cannot know, then text.
var liveAnswers = map[string][2]string{
	"openai-chat": {
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_live_1\",\"type\":\"function\",\"function\":{\"name\":\"ls\",\"arguments\":\"{\\\"dir\\\"\"}}]}}]}\n\n" +
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":\\\".\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n" +
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":9,\"prompt_tokens_details\":{\"cached_tokens\":32}}}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"one file: a.go\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
	},
	"anthropic-messages": {
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":18,\"cache_read_input_tokens\":32,\"output_tokens\":1}}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_live_1\",\"name\":\"ls\",\"input\":{}}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"dir\\\":\\\".\\\"}\"}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":9}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"one file: a.go\"}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
	},
}

// TestRunProvider: logtool run --provider against a local fake server
// records a session whose replay --wire bodies are, byte for byte, the
// bodies the server received; the key went only into the key header, and
// the scenario's tool results answered the live call ids by tool name.
func TestRunProvider(t *testing.T) {
	for name, answers := range liveAnswers {
		t.Run(name, func(t *testing.T) {
			const key = "sk-live-secret"
			var mu sync.Mutex
			var bodies [][]byte
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				n := len(bodies)
				bodies = append(bodies, b)
				mu.Unlock()
				if got := r.Header.Get("authorization") + r.Header.Get("x-api-key"); !strings.Contains(got, key) {
					t.Errorf("request %d: the key is not in its header", n)
				}
				w.WriteHeader(200)
				io.WriteString(w, answers[n%2])
			}))
			defer srv.Close()
			db := filepath.Join(t.TempDir(), "s.db")
			e := env{
				stdin: strings.NewReader(`{"config":{"provider":"live","model":"m1"},"system":"Be brief.",
				  "tools":[{"name":"ls","description":"List files.","parameters":{"type":"object"}}],
				  "turns":[{"prompt":"what is here?","replies":[[{"type":"text","text":"ignored"}]],
				            "toolResults":{"ls":{"content":[{"type":"text","text":"a.go"}]}}}]}`),
				getenv: func(k string) string { return map[string]string{"MY_KEY": key}[k] },
				now:    func() time.Time { return testNow },
				random: strings.NewReader(strings.Repeat("r", 64)),
			}
			ctx := context.Background()
			var stdout, stderr bytes.Buffer
			code := runEnv(ctx, e, []string{"--db", db, "run", "-", "--session", "live", "--provider", name,
				"--base-url", srv.URL, "--api-key-env", "MY_KEY"}, &stdout, &stderr)
			if code != exitOK || stderr.Len() != 0 {
				t.Fatalf("run = exit %d\n%s%s", code, stdout.String(), stderr.String())
			}
			if len(bodies) != 2 {
				t.Fatalf("the server received %d requests, want 2", len(bodies))
			}
			if !bytes.Contains(bodies[1], []byte(`a.go`)) {
				t.Fatalf("the tool result by name did not reach the model:\n%s", bodies[1])
			}
			stdout.Reset()
			if code := runEnv(ctx, e, []string{"--db", db, "replay", "live", "--wire"}, &stdout, &stderr); code != exitOK {
				t.Fatalf("replay --wire = exit %d\n%s", code, stderr.String())
			}
			lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
			if len(lines) != 2 {
				t.Fatalf("replay --wire printed %d lines, want 2", len(lines))
			}
			for i, line := range lines {
				var l struct{ Body string }
				if err := json.Unmarshal([]byte(line), &l); err != nil {
					t.Fatal(err)
				}
				if l.Body != string(bodies[i]) {
					t.Fatalf("step %d: replay --wire differs from the body the server received:\n%s\n%s", i+1, l.Body, bodies[i])
				}
			}
			stdout.Reset()
			for _, args := range [][]string{{"export", "live"}, {"verify", "--strict", "live"}} {
				stdout.Reset()
				if code := runEnv(ctx, e, append([]string{"--db", db}, args...), &stdout, &stderr); code != exitOK {
					t.Fatalf("%s = exit %d\n%s%s", args[0], code, stdout.String(), stderr.String())
				}
				if strings.Contains(stdout.String(), key) {
					t.Fatalf("%s shows the key", args[0])
				}
			}
		})
	}
}

// TestRunProviderErrorExits: a turn the provider ends with an error is
// logged (the session verifies, its turn ended "error") and run exits 1
// saying so, so that a script sees the failure.
func TestRunProviderErrorExits(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(400)
		io.WriteString(w, `{"error":{"message":"bad request","type":"invalid_request_error","code":"invalid_value"}}`)
	}))
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "s.db")
	e := env{
		stdin:  strings.NewReader(`{"config":{"provider":"live","model":"m1"},"turns":[{"prompt":"hi","replies":[[{"type":"text","text":"ignored"}]]}]}`),
		getenv: func(k string) string { return map[string]string{"MY_KEY": "k"}[k] },
		now:    func() time.Time { return testNow },
		random: strings.NewReader(strings.Repeat("r", 64)),
	}
	ctx := context.Background()
	var stdout, stderr bytes.Buffer
	code := runEnv(ctx, e, []string{"--db", db, "run", "-", "--session", "bad", "--provider", "openai-chat",
		"--base-url", srv.URL, "--api-key-env", "MY_KEY"}, &stdout, &stderr)
	if calls == 0 {
		t.Fatal("the provider was never called")
	}
	if code != exitFailure {
		t.Fatalf("run = exit %d, want %d\n%s%s", code, exitFailure, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "1 turn ended with an error") || !strings.Contains(stderr.String(), "ended with an error in step") {
		t.Fatalf("stderr does not name the failed turn:\n%s", stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := runEnv(ctx, e, []string{"--db", db, "verify", "bad"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("verify of the failed run's session = exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
}
