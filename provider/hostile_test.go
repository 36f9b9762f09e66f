package provider_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/provider"
	"github.com/sessionlog/sessionlog/verify"
	"github.com/sessionlog/sessionlog/wire"
)

// hostile returns a provider for url with tight bounds, so that tests of
// the bounds take milliseconds.
func hostile(t testing.TB, name, url string, o provider.Options) *provider.Provider {
	t.Helper()
	o.Wire, o.BaseURL, o.APIKeyEnv = name, url, "KEY"
	o.Getenv = func(k string) string { return map[string]string{"KEY": testKey}[k] }
	p, err := provider.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// throughLoop runs one turn against p into a real store and returns its
// outcome and every stored event's JSON; the session must verify.
func throughLoop(t *testing.T, p *provider.Provider, name string) (loop.Outcome, string) {
	t.Helper()
	store := openStore(t)
	h := &host{spec: loop.StepSpec{Config: config(t, `{"provider":"p","model":"m","wire":"`+name+`"}`)}}
	ctx := context.Background()
	l, err := loop.Create(ctx, store, "s", loop.Options{Provider: p, Host: h})
	if err != nil {
		t.Fatal(err)
	}
	out, err := l.Send(ctx, loop.Text("hi"), loop.User)
	if err != nil {
		t.Fatalf("send: %v (a server's answer must never fail the loop)", err)
	}
	res, err := verify.Session(ctx, store, "s", verify.Options{Strict: true})
	if err != nil || len(res.Findings) > 0 {
		t.Fatalf("verify: %v %v", err, res.Findings)
	}
	it, err := store.Scan(ctx, "s", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var all bytes.Buffer
	last := ""
	for {
		ev, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		js, err := ev.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(js)
		all.WriteByte('\n')
		last = ev.Type
	}
	if last != codec.TypeTurnEnd {
		t.Fatalf("the log ends with %s, not turn/end: the turn was left open", last)
	}
	return out, all.String()
}

// TestRedirectNotFollowed (issue 19 item 1): a 307 or 302 to another
// host is an error HTTP_3xx naming the status and not the Location; the
// other host receives nothing, so the key (x-api-key is not dropped by
// Go's redirect policy) goes nowhere.
func TestRedirectNotFollowed(t *testing.T) {
	for _, name := range wire.Names() {
		for _, status := range []int{301, 302, 307, 308} {
			var other atomic.Int32
			elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { other.Add(1) }))
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("location", elsewhere.URL+"/steal?token=LOCATIONSECRET")
				w.WriteHeader(status)
				io.WriteString(w, `{"error":{"message":"moved to `+elsewhere.URL+`/steal?token=LOCATIONSECRET"}}`)
			}))
			p := hostile(t, name, srv.URL, provider.Options{})
			_, err := p.Stream(context.Background(), request(t, name))
			srv.Close()
			elsewhere.Close()
			var pe *loop.ProviderError
			want := "HTTP_" + strconv.Itoa(status)
			if !errors.As(err, &pe) || pe.Code != want || pe.Status != status {
				t.Fatalf("%s %d: error %v, want code %s", name, status, err, want)
			}
			if strings.Contains(err.Error(), "LOCATIONSECRET") || strings.Contains(err.Error(), "steal") {
				t.Fatalf("%s %d: the error names the Location: %v", name, status, err)
			}
			if other.Load() != 0 {
				t.Fatalf("%s %d: the redirect was followed to the other host", name, status)
			}
		}
	}
}

// wait blocks until the client goes, or 10 s.
func wait(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

// TestServerMessageCut (issue 19 item 2): a server's error message with
// the key straddling the 1 KiB cut, or non-ASCII text cut inside a
// character, or bytes that are not UTF-8, is stored redacted and valid:
// turn/end is appended (the turn never left open), the session verifies,
// and no 8 bytes of the key are anywhere in the log.
func TestServerMessageCut(t *testing.T) {
	for _, name := range wire.Names() {
		for _, tc := range []struct{ what, message string }{
			{"key straddles the cut", strings.Repeat("a", wire.MaxMessage-10) + testKey + " trailing"},
			{"key at the very end", strings.Repeat("a", 2000) + testKey},
			{"multi-byte text over the cut", "x" + strings.Repeat("é", 800)},
			{"three-byte text over the cut", "xy" + strings.Repeat("日本", 300)},
			{"not UTF-8", "bad \xff\xfe bytes " + strings.Repeat("\xc3", 1100)},
		} {
			t.Run(name+"/"+tc.what, func(t *testing.T) {
				body := `{"error":{"message":` + string(codec.AppendJSONString(nil, []byte(tc.message))) + `}}`
				if !utf8.ValidString(tc.message) { // raw bytes in the JSON string, as a broken server sends
					body = `{"error":{"message":"` + tc.message + `"}}`
				}
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.WriteHeader(400)
					io.WriteString(w, body)
				}))
				defer srv.Close()
				out, log := throughLoop(t, hostile(t, name, srv.URL, provider.Options{}), name)
				if out.Reason != "error" || !utf8.ValidString(out.Message) || len(out.Message) > wire.MaxMessage+len("…") {
					t.Fatalf("outcome %+v", out)
				}
				for i := 0; i+8 <= len(testKey); i++ {
					if strings.Contains(log, testKey[i:i+8]) || strings.Contains(out.Message, testKey[i:i+8]) {
						t.Fatalf("8 bytes of the key are in the log: %q", testKey[i:i+8])
					}
				}
			})
		}
	}
}

// TestBounds (issue 19 item 7): a server that never sends headers, one
// that sends headers then nothing, one that drips a line a byte at a
// time, and one whose answer never ends each end the turn with a coded
// error, after the chunks that did arrive; the session verifies.
func TestBounds(t *testing.T) {
	const tick = 100 * time.Millisecond
	for _, name := range wire.Names() {
		first := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"
		if name == wire.AnthropicMessages {
			first = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n"
		}
		for _, tc := range []struct {
			what  string
			opts  provider.Options
			serve func(w http.ResponseWriter, r *http.Request)
			code  string
		}{
			{"no headers", provider.Options{FirstByteTimeout: tick}, func(w http.ResponseWriter, r *http.Request) {
				wait(r)
			}, provider.CodeTimeout},
			{"headers then nothing", provider.Options{IdleTimeout: tick}, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(200)
				w.(http.Flusher).Flush()
				wait(r)
			}, provider.CodeTimeout},
			{"a chunk then a drip", provider.Options{IdleTimeout: 3 * tick}, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(200)
				io.WriteString(w, first)
				for {
					io.WriteString(w, "x") // one endless line: no chunk ever completes
					w.(http.Flusher).Flush()
					select {
					case <-r.Context().Done():
						return
					case <-time.After(tick / 4):
					}
				}
			}, provider.CodeTimeout},
			{"endless answer", provider.Options{MaxResponseBytes: 1 << 20}, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(200)
				io.WriteString(w, first)
				for r.Context().Err() == nil {
					if _, err := io.WriteString(w, strings.Repeat(first[strings.Index(first, "event: content_block_delta"):], 100)); err != nil {
						return
					}
				}
			}, provider.CodeTooLarge},
		} {
			t.Run(name+"/"+tc.what, func(t *testing.T) {
				if tc.code == provider.CodeTooLarge && name == wire.OpenAIChat {
					tc.serve = func(w http.ResponseWriter, r *http.Request) {
						w.WriteHeader(200)
						for r.Context().Err() == nil {
							if _, err := io.WriteString(w, strings.Repeat(first, 100)); err != nil {
								return
							}
						}
					}
				}
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.Copy(io.Discard, r.Body) // so that the server sees the client go
					tc.serve(w, r)
				}))
				defer srv.Close()
				start := time.Now()
				out, _ := throughLoop(t, hostile(t, name, srv.URL, tc.opts), name)
				if out.Reason != "error" || out.Code != tc.code {
					t.Fatalf("outcome %+v, want error %s", out, tc.code)
				}
				if d := time.Since(start); d > 20*tick && tc.code == provider.CodeTimeout {
					t.Fatalf("took %v", d)
				}
			})
		}
	}
}

// TestBaseURL (issue 19 item 3): a base URL with user info, a query or a
// fragment is refused without repeating it; a path is kept and the
// renderer's path appended to it; a NETWORK error names no part of the
// URL's path.
func TestBaseURL(t *testing.T) {
	for _, bad := range []string{
		"http://user:SECRETPW@127.0.0.1/v1",
		"http://127.0.0.1/v1?api-key=SECRETQ",
		"http://127.0.0.1/v1?",
		"http://127.0.0.1/v1#SECRETF",
		"ftp://127.0.0.1/v1",
		"127.0.0.1/v1",
		"http:///v1",
		"http://[::1/SECRET",
	} {
		_, err := provider.New(provider.Options{Wire: wire.OpenAIChat, BaseURL: bad})
		if !errors.Is(err, provider.ErrBaseURL) || !errors.Is(err, provider.ErrInvalid) {
			t.Fatalf("New(%q) = %v, want ErrBaseURL", bad, err)
		}
		if msg := err.Error() + errors.FlattenDetails(err); strings.Contains(msg, "SECRET") || strings.Contains(msg, "127.0.0.1") {
			t.Fatalf("New(%q): the error repeats the URL: %s", bad, msg)
		}
	}
	var path atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path.Store(r.URL.RequestURI())
		w.WriteHeader(500)
	}))
	defer srv.Close()
	p := hostile(t, wire.OpenAIChat, srv.URL+"/proxy/v1/", provider.Options{})
	if _, err := p.Stream(context.Background(), request(t, wire.OpenAIChat)); err == nil {
		t.Fatal("no error from a 500")
	}
	if got := path.Load(); got != "/proxy/v1/chat/completions" {
		t.Fatalf("the request went to %v", got)
	}
	srv.Close()
	_, err := hostile(t, wire.OpenAIChat, srv.URL+"/SECRETPATH", provider.Options{}).Stream(context.Background(), request(t, wire.OpenAIChat))
	var pe *loop.ProviderError
	if !errors.As(err, &pe) || pe.Code != provider.CodeNetwork || strings.Contains(err.Error(), "SECRETPATH") {
		t.Fatalf("error %v, want NETWORK without the path", err)
	}
}
