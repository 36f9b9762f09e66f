package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/wire"
)

// victimKey is the API key hostile servers try to make logtool leak.
const victimKey = "sk-victim-7f3a9c1e5b2d4f60a8"

// hostileAnswers are, per renderer, servers that echo the key where a
// server's text goes: an error body whose message straddles the 1 KiB cut,
// a 401 quoting it, an error event mid-stream, a stop reason.
func hostileAnswers(name string) map[string]func(w http.ResponseWriter) {
	quoted := func(s string) string { return strings.ReplaceAll(s, `"`, `\"`) }
	straddle := strings.Repeat("a", wire.MaxMessage-12) + victimKey + " more"
	out := map[string]func(w http.ResponseWriter){
		"straddled cut": func(w http.ResponseWriter) {
			w.WriteHeader(400)
			io.WriteString(w, `{"error":{"message":"`+straddle+`","type":"invalid_request_error"}}`)
		},
		"401 echo": func(w http.ResponseWriter) {
			w.WriteHeader(401)
			io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+victimKey+`"}}`)
		},
		"non-ASCII cut": func(w http.ResponseWriter) {
			w.WriteHeader(500)
			io.WriteString(w, `{"error":{"message":"`+"é"+strings.Repeat("日本", 300)+victimKey+`"}}`)
		},
	}
	if name == wire.OpenAIChat {
		out["error event"] = func(w http.ResponseWriter) {
			w.WriteHeader(200)
			io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"+
				`data: {"error":{"message":"`+quoted("key "+victimKey)+`","code":"`+victimKey+`"}}`+"\n\n")
		}
		out["stop reason"] = func(w http.ResponseWriter) {
			w.WriteHeader(200)
			io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},\"finish_reason\":\""+victimKey+"\"}]}\n\ndata: [DONE]\n\n")
		}
	} else {
		out["error event"] = func(w http.ResponseWriter) {
			w.WriteHeader(200)
			io.WriteString(w, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\""+victimKey+"\",\"message\":\"key "+victimKey+"\"}}\n\n")
		}
		out["stop reason"] = func(w http.ResponseWriter) {
			w.WriteHeader(200)
			io.WriteString(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\""+victimKey+"\"}}\n\n"+
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
		}
	}
	return out
}

// TestRunProviderHostile (issue 19, done when): the key of logtool run's
// victim is found nowhere — stdout, stderr, the store file, what export
// and show print, another host — when servers of both renderers redirect
// to another host, echo the key in error messages (straddling the 1 KiB
// cut, cut inside characters), in error events and stop reasons, and when
// the base URL holds it in a query or user info. Every run that got an
// answer leaves a session that verifies.
func TestRunProviderHostile(t *testing.T) {
	var mu sync.Mutex
	var elsewhere bytes.Buffer // everything the other host received
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		r.Header.Write(&elsewhere)
		elsewhere.WriteString(r.URL.String())
		elsewhere.Write(body)
		mu.Unlock()
		w.WriteHeader(200)
	}))
	defer other.Close()
	leaks := func(t *testing.T, where string, b []byte) {
		t.Helper()
		for i := 0; i+8 <= len(victimKey); i++ {
			if bytes.Contains(b, []byte(victimKey[i:i+8])) || bytes.Contains(bytes.ToUpper(b), []byte(strings.ToUpper(victimKey[i:i+8]))) {
				t.Fatalf("%s holds 8 bytes of the key (%q):\n%s", where, victimKey[i:i+8], b)
			}
		}
	}
	type run struct {
		name, what string
		serve      func(w http.ResponseWriter, r *http.Request)
		baseURL    func(srv string) string
		exit       int
	}
	var runs []run
	for _, name := range wire.Names() {
		for what, answer := range hostileAnswers(name) {
			// Every hostile answer ends the turn with an error, an odd stop
			// reason too: its finish is of kind error (docs/wire.md#openai-chat), which
			// ends the turn as a provider error does (docs/loop.md#how-turns-end).
			runs = append(runs, run{name, what, func(w http.ResponseWriter, r *http.Request) { answer(w) }, nil, exitFailure})
		}
		for _, status := range []int{302, 307} {
			runs = append(runs, run{name, "redirect " + http.StatusText(status), func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("location", other.URL+"/v1/messages?key="+victimKey)
				w.WriteHeader(status)
			}, nil, exitFailure})
		}
		runs = append(runs,
			run{name, "query", nil, func(srv string) string { return srv + "/v1?api-key=" + victimKey }, exitUsage},
			run{name, "user info", nil, func(srv string) string { return strings.Replace(srv, "://", "://u:"+victimKey+"@", 1) }, exitUsage})
	}
	for _, rc := range runs {
		t.Run(rc.name+"/"+rc.what, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				if rc.serve == nil {
					t.Error("the server was called")
					return
				}
				rc.serve(w, r)
			}))
			defer srv.Close()
			base := srv.URL
			if rc.baseURL != nil {
				base = rc.baseURL(srv.URL)
			}
			db := filepath.Join(t.TempDir(), "s.db")
			e := env{
				stdin:  strings.NewReader(`{"config":{"provider":"live","model":"m1"},"turns":[{"prompt":"hi"}]}`),
				getenv: func(k string) string { return map[string]string{"MY_KEY": victimKey}[k] },
				now:    func() time.Time { return testNow },
				random: strings.NewReader(strings.Repeat("r", 64)),
			}
			ctx := context.Background()
			var stdout, stderr bytes.Buffer
			code := runEnv(ctx, e, []string{"--db", db, "run", "-", "--session", "v", "--provider", rc.name,
				"--base-url", base, "--api-key-env", "MY_KEY"}, &stdout, &stderr)
			if code != rc.exit {
				t.Fatalf("run = exit %d, want %d\n%s%s", code, rc.exit, stdout.String(), stderr.String())
			}
			leaks(t, "run's stdout", stdout.Bytes())
			leaks(t, "run's stderr", stderr.Bytes())
			if rc.exit == exitUsage {
				return
			}
			file, err := os.ReadFile(db)
			if err != nil {
				t.Fatal(err)
			}
			leaks(t, "the store file", file)
			for _, args := range [][]string{{"export", "v"}, {"show", "v"}, {"verify", "--strict", "v"}} {
				stdout.Reset()
				stderr.Reset()
				if code := runEnv(ctx, e, append([]string{"--db", db}, args...), &stdout, &stderr); code != exitOK {
					t.Fatalf("%s = exit %d\n%s%s", args[0], code, stdout.String(), stderr.String())
				}
				leaks(t, args[0]+"'s output", append(stdout.Bytes(), stderr.Bytes()...))
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if elsewhere.Len() > 0 {
		leaks(t, "what the other host received", elsewhere.Bytes())
		t.Fatalf("the other host received a request:\n%s", elsewhere.String())
	}
}
