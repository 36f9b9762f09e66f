package provider_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/provider"
	"github.com/sessionlog/sessionlog/verify"
	"github.com/sessionlog/sessionlog/wire"
)

const testKey = "sk-secret-0123456789"

// request is a small request under a header that names wire.
func request(t testing.TB, wireName string) *loop.Request {
	cfg := `{"provider":"p","model":"m"}`
	if wireName != "" {
		cfg = `{"provider":"p","model":"m","wire":"` + wireName + `"}`
	}
	return &loop.Request{Turn: 1, Step: 1, Header: header.Snapshot{Config: config(t, cfg)},
		JSON: []byte(`{"provider":"p","model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"sessionId":"s"}`)}
}

func newProvider(t testing.TB, name, url string, log *slog.Logger) *provider.Provider {
	t.Helper()
	p, err := provider.New(provider.Options{Wire: name, BaseURL: url, APIKeyEnv: "KEY", Logger: log,
		Getenv: func(k string) string { return map[string]string{"KEY": testKey}[k] }})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// drain reads a stream to its end and returns its chunks and error.
func drain(st loop.Stream) ([]loop.Chunk, error) {
	defer st.Close()
	var out []loop.Chunk
	for {
		c, err := st.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
}

// TestHTTPErrors is the HTTP error table of docs/wire.md, row by row, for
// both renderers: the code, the message, the status and Retry-After, and
// the key in no error and no log line.
func TestHTTPErrors(t *testing.T) {
	type row struct {
		status int
		body   string
		retry  string
		code   string
		msg    string
	}
	common := []row{
		{401, `{"error":{"message":"Incorrect API key provided: ` + testKey + `","type":"invalid_request_error"}}`, "", "AUTH", "Incorrect API key provided: [redacted]"},
		{403, `{"error":{"message":"forbidden"}}`, "", "AUTH", "forbidden"},
		{429, `{"error":{"message":"slow down"}}`, "7", "RATE_LIMIT", "slow down"},
		{429, ``, "Wed, 21 Oct 2099 07:28:00 GMT", "RATE_LIMIT", "HTTP 429"},
		{500, `{"error":{"message":"boom"}}`, "", "SERVER", "boom"},
		{503, `<html>unavailable</html>`, "", "SERVER", "HTTP 503"},
		{404, `{"error":{"message":"no such model"}}`, "", "HTTP_404", "no such model"},
		{409, ``, "", "HTTP_409", "HTTP 409"},
		{400, `{"error":{"message":"bad field"}}`, "", "INVALID_REQUEST", "bad field"},
		{400, `{"error":{"message":"This model's maximum context length is 128000 tokens"}}`, "", "CONTEXT_WINDOW_EXCEEDED", "This model's maximum context length is 128000 tokens"},
		{400, `{"error":{"message":"x","code":"context_length_exceeded"}}`, "", "CONTEXT_WINDOW_EXCEEDED", "x"},
		{400, `{"error":{"message":"Too many tokens in the prompt"}}`, "", "CONTEXT_WINDOW_EXCEEDED", "Too many tokens in the prompt"},
	}
	table := map[string][]row{
		wire.OpenAIChat: append(append([]row(nil), common...),
			row{529, ``, "", "SERVER", "HTTP 529"},
			row{400, `{"error":{"message":"prompt is too long"}}`, "", "INVALID_REQUEST", "prompt is too long"}),
		wire.AnthropicMessages: append(append([]row(nil), common...),
			row{529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "", "OVERLOADED", "Overloaded"},
			row{400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`, "", "CONTEXT_WINDOW_EXCEEDED", "prompt is too long: 210000 tokens > 200000 maximum"}),
	}
	for name, rows := range table {
		for _, r := range rows {
			t.Run(name+"/"+r.code+"/"+r.msg, func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					if r.retry != "" {
						w.Header().Set("Retry-After", r.retry)
					}
					w.WriteHeader(r.status)
					io.WriteString(w, r.body)
				}))
				defer srv.Close()
				var logs bytes.Buffer
				p := newProvider(t, name, srv.URL, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
				_, err := p.Stream(context.Background(), request(t, name))
				var pe *loop.ProviderError
				if !errors.As(err, &pe) {
					t.Fatalf("error %v is not a ProviderError", err)
				}
				if pe.Code != r.code || pe.Message != r.msg || pe.Status != r.status {
					t.Fatalf("got %q %q %d, want %q %q %d", pe.Code, pe.Message, pe.Status, r.code, r.msg, r.status)
				}
				switch {
				case r.retry == "7" && pe.RetryAfter != 7*time.Second:
					t.Fatalf("RetryAfter %v, want 7s", pe.RetryAfter)
				case strings.HasSuffix(r.retry, "GMT") && pe.RetryAfter < time.Hour:
					t.Fatalf("RetryAfter %v from an HTTP date", pe.RetryAfter)
				case r.retry == "" && pe.RetryAfter != 0:
					t.Fatalf("RetryAfter %v without the header", pe.RetryAfter)
				}
				if strings.Contains(err.Error(), testKey) || strings.Contains(logs.String(), testKey) {
					t.Fatal("the key leaked into an error or a log line")
				}
				if !strings.Contains(logs.String(), "code="+r.code) {
					t.Fatalf("the log does not say the code:\n%s", logs.String())
				}
			})
		}
	}
}

// TestWireMismatch: a header naming another renderer, or none, is refused
// before anything is sent.
func TestWireMismatch(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	p := newProvider(t, wire.OpenAIChat, srv.URL, nil)
	for _, named := range []string{"", wire.AnthropicMessages} {
		_, err := p.Stream(context.Background(), request(t, named))
		var pe *loop.ProviderError
		if !errors.As(err, &pe) || pe.Code != "WIRE_MISMATCH" {
			t.Fatalf("header wire %q: %v", named, err)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the server got %d requests", hits.Load())
	}
}

// TestStreamFailures: a 200 without a body, a server that closes
// mid-stream, one that ends without its end marker, a payload that is not
// JSON and an error event each fail with their code, after the chunks
// that did arrive.
func TestStreamFailures(t *testing.T) {
	for _, tc := range []struct {
		wire, body, code string
		chunks           int
		hijack           bool // close the connection abruptly after body
	}{
		{wire.OpenAIChat, ``, "EMPTY_RESPONSE", 0, false},
		{wire.AnthropicMessages, ``, "EMPTY_RESPONSE", 0, false},
		{wire.OpenAIChat, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n", "STREAM_CLOSED", 2, false},
		{wire.OpenAIChat, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n", "STREAM_CLOSED", 2, true},
		{wire.AnthropicMessages, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n", "STREAM_CLOSED", 1, true},
		{wire.OpenAIChat, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\ndata: {not json\n\n", "MALFORMED_RESPONSE", 2, false},
		{wire.AnthropicMessages, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", "OVERLOADED_ERROR", 0, false},
	} {
		t.Run(tc.wire+"/"+tc.code, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if tc.hijack {
					w.Header().Set("content-length", "100000") // promise more than comes
				}
				w.WriteHeader(200)
				io.WriteString(w, tc.body)
				w.(http.Flusher).Flush()
				if tc.hijack {
					conn, _, err := w.(http.Hijacker).Hijack()
					if err == nil {
						conn.Close()
					}
				}
			}))
			defer srv.Close()
			p := newProvider(t, tc.wire, srv.URL, nil)
			st, err := p.Stream(context.Background(), request(t, tc.wire))
			if err != nil {
				t.Fatal(err)
			}
			chunks, err := drain(st)
			var pe *loop.ProviderError
			if !errors.As(err, &pe) || pe.Code != tc.code {
				t.Fatalf("error %v, want code %s", err, tc.code)
			}
			if len(chunks) != tc.chunks {
				t.Fatalf("%d chunks before the failure, want %d", len(chunks), tc.chunks)
			}
		})
	}
}

// TestCancelMidAnswer: a slow server is cancelled mid-answer; Next
// returns the context's error promptly, the chunks so far arrived as they
// were sent, and the connection is released.
func TestCancelMidAnswer(t *testing.T) {
	for _, name := range wire.Names() {
		t.Run(name, func(t *testing.T) {
			released := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer close(released)
				w.WriteHeader(200)
				first := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"
				if name == wire.AnthropicMessages {
					first = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"Hel\"}}\n\n"
				}
				io.WriteString(w, first)
				w.(http.Flusher).Flush()
				select { // the rest never comes
				case <-r.Context().Done():
				case <-time.After(30 * time.Second):
				}
			}))
			defer srv.Close()
			p := newProvider(t, name, srv.URL, nil)
			ctx, cancel := context.WithCancel(context.Background())
			st, err := p.Stream(ctx, request(t, name))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for i := 0; i < 2; i++ { // block-start, text-delta: streamed before the end
				if _, err := st.Next(); err != nil {
					t.Fatalf("chunk %d: %v", i, err)
				}
			}
			start := time.Now()
			time.AfterFunc(50*time.Millisecond, cancel)
			_, err = st.Next()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Next after cancel = %v", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("cancellation took %v", d)
			}
			select {
			case <-released:
			case <-time.After(5 * time.Second):
				t.Fatal("the server's handler still runs after the cancellation")
			}
		})
	}
}

// TestNetworkError: no server is a NETWORK error naming no key.
func TestNetworkError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	p := newProvider(t, wire.OpenAIChat, url, nil)
	_, err = p.Stream(context.Background(), request(t, wire.OpenAIChat))
	var pe *loop.ProviderError
	if !errors.As(err, &pe) || pe.Code != provider.CodeNetwork || strings.Contains(err.Error(), testKey) {
		t.Fatalf("error %v", err)
	}
}

// TestNew: options New refuses.
func TestNew(t *testing.T) {
	for _, o := range []provider.Options{
		{Wire: "nope", BaseURL: "http://x"},
		{Wire: wire.OpenAIChat},
		{Wire: wire.OpenAIChat, BaseURL: "http://x", APIKeyEnv: "UNSET", Getenv: func(string) string { return "" }},
	} {
		if _, err := provider.New(o); !errors.Is(err, provider.ErrInvalid) {
			t.Errorf("New(%+v) = %v, want ErrInvalid", o, err)
		}
	}
}

// TestMismatchThroughLoop: a header naming another renderer ends the turn
// with WIRE_MISMATCH; the server receives nothing and the log verifies.
func TestMismatchThroughLoop(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	p := newProvider(t, wire.OpenAIChat, srv.URL, nil)
	store := openStore(t)
	h := &host{spec: loop.StepSpec{Config: config(t, `{"provider":"p","model":"m","wire":"anthropic-messages"}`)}}
	ctx := context.Background()
	l, err := loop.Create(ctx, store, "s", loop.Options{Provider: p, Host: h})
	if err != nil {
		t.Fatal(err)
	}
	out, err := l.Send(ctx, loop.Text("hi"), loop.User)
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != "error" || out.Code != "WIRE_MISMATCH" || hits.Load() != 0 {
		t.Fatalf("outcome %+v, %d requests sent", out, hits.Load())
	}
	res, err := verify.Session(ctx, store, "s", verify.Options{Strict: true})
	if err != nil || len(res.Findings) > 0 {
		t.Fatalf("verify: %v %v", err, res.Findings)
	}
}
