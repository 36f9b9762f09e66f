package loop_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/internal/fakemodel"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/provider"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/redact"
	"github.com/sessionlog/sessionlog/wire"
)

// plantedSecrets are generated (never real) secrets of the shapes the
// ready redactor knows, one per way content enters the loop.
func plantedSecrets() map[string]string {
	r := rand.New(rand.NewPCG(22, 7))
	of := func(set string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = set[r.IntN(len(set))]
		}
		return string(b)
	}
	const b62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	key := make([]byte, 96)
	for i := range key {
		key[i] = byte(r.UintN(256))
	}
	return map[string]string{
		"context":   "sk-proj-" + of(b62+"_-", 120),
		"steering":  "ghp_" + of(b62, 36),
		"prompt":    "sk-ant-api03-" + of(b62+"_-", 93) + "AA",
		"tool":      "AKIA" + of("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
		"pem":       "-----BEGIN RSA PRIVATE KEY-----\n" + base64.StdEncoding.EncodeToString(key) + "\n-----END RSA PRIVATE KEY-----",
		"injection": "xoxb-" + of("0123456789", 12) + "-" + of("0123456789", 13) + "-" + of(b62, 24),
	}
}

// holds reports whether b holds the secret s, or a line of it, or its
// first 20 bytes.
func holds(b []byte, s string) bool {
	for _, part := range append(strings.Split(s, "\n"), s[:20]) {
		if len(part) >= 20 && bytes.Contains(b, []byte(part)) {
			return true
		}
	}
	return false
}

type redactHost struct{ tools []loop.Tool }

func (h redactHost) Step(context.Context, int64, int64) (loop.StepSpec, error) {
	return loop.StepSpec{System: "You are terse.", Tools: h.tools,
		Config: header.Config{Provider: "fake", HasProvider: true, Model: "m1", Wire: wire.OpenAIChat, HasWire: true}}, nil
}

// TestRedactorAtTheSource: with Options.Redactor, the secrets a user, a
// context contributor, a steering message, an injection and a tool hand
// the loop reach neither the model (the HTTP bodies a fake model
// received) nor the store (its events, and every byte of its files); and
// the requests rebuilt from the log, rendered, are the bodies sent.
func TestRedactorAtTheSource(t *testing.T) {
	ctx := context.Background()
	secrets := plantedSecrets()
	fm := fakemodel.New("Done.", fakemodel.Reply{Text: "Reading it.", Calls: []fakemodel.Call{{Name: "env", Arguments: `{}`}}})
	srv := httptest.NewServer(fm)
	defer srv.Close()
	p, err := provider.New(provider.Options{Wire: wire.OpenAIChat, BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	store, err := boltlog.Open(filepath.Join(dir, "s.db"), &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := []loop.Tool{{Name: "env", Description: "Prints the environment.", Parameters: []byte(`{"type":"object"}`),
		Run: func(context.Context, loop.Call) (loop.Result, error) {
			return loop.Result{Content: loop.Text("AWS_ACCESS_KEY_ID=" + secrets["tool"] + "\n" + secrets["pem"] + "\n")}, nil
		}}}
	contributor := func(ctx context.Context, c *loop.Composer, next func() ([][]byte, error)) ([][]byte, error) {
		if err := c.Append(loop.Text("deploy key: "+secrets["context"]), loop.Plugin("env")); err != nil {
			return nil, err
		}
		return next()
	}
	opts := loop.Options{Provider: p, Host: redactHost{tools}, Prefix: []loop.Contributor{contributor}, Redactor: redact.Secrets()}
	l, err := loop.Create(ctx, store, "redacted", opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Steer(loop.Text("also use "+secrets["steering"]), loop.User); err != nil {
		t.Fatal(err)
	}
	for _, prompt := range []string{"my key is " + secrets["prompt"] + ", list the env", "and now?"} {
		out, err := l.Send(ctx, loop.Text(prompt), loop.User)
		if err != nil || out.Reason != "completed" {
			t.Fatalf("turn: %+v %v", out, err)
		}
		if err := l.Inject(ctx, loop.Text("token "+secrets["injection"]), loop.User); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Dispose(ctx); err != nil {
		t.Fatal(err)
	}

	// The model never saw a secret; it saw a marker for each.
	reqs := fm.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	markers := 0
	for i, r := range reqs {
		for what, s := range secrets {
			if holds(r.Body, s) {
				t.Errorf("request %d holds (part of) the %s secret", i+1, what)
			}
		}
		markers = max(markers, bytes.Count(r.Body, []byte(redact.Marker)))
	}
	if markers != len(secrets) { // the last request holds them all
		t.Errorf("the last request holds %d markers, want %d", markers, len(secrets))
	}

	// The log holds what was sent: each step's request, rebuilt from the
	// store and rendered, is the body the model received.
	h, evs := readSession(t, store, "redacted")
	steps, err := rebuild.Steps(h, evs)
	if err != nil {
		t.Fatal(err)
	}
	rend, err := wire.Lookup(wire.OpenAIChat)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != len(reqs) {
		t.Fatalf("%d steps, %d requests", len(steps), len(reqs))
	}
	for i, s := range steps {
		body, err := rend.AppendBody(nil, s.Request, &s.Header)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(body, reqs[i].Body) {
			t.Errorf("step %d.%d: the rebuilt request is not the body sent\nrebuilt %s\nsent    %s", s.Turn, s.Step, body, reqs[i].Body)
		}
	}
	for _, ev := range evs {
		for what, s := range secrets {
			if holds(ev.Raw, s) {
				t.Errorf("seq %d (%s) holds (part of) the %s secret", ev.Seq, ev.Type, what)
			}
		}
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	// Nor is a secret anywhere in the store's files (the secrets are
	// random: compression keeps such text as literals, where it would be
	// found).
	err = filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for what, s := range secrets {
			if holds(b, s) {
				t.Errorf("%s holds (part of) the %s secret", filepath.Base(path), what)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRedactorLeavesContentAlone: without a match the loop's events are
// those of a loop without a redactor, byte for byte.
func TestRedactorLeavesContentAlone(t *testing.T) {
	ctx := context.Background()
	run := func(r *redact.Redactor) [][]byte {
		fm := fakemodel.New("Done.", fakemodel.Reply{Calls: []fakemodel.Call{{Name: "env", Arguments: `{}`}}})
		srv := httptest.NewServer(fm)
		defer srv.Close()
		p, err := provider.New(provider.Options{Wire: wire.OpenAIChat, BaseURL: srv.URL + "/v1"})
		if err != nil {
			t.Fatal(err)
		}
		store := openStore(t)
		tools := []loop.Tool{{Name: "env", Parameters: []byte(`{"type":"object"}`),
			Run: func(context.Context, loop.Call) (loop.Result, error) {
				return loop.Result{Content: loop.Text("HOME=/home/dev")}, nil
			}}}
		l, err := loop.Create(ctx, store, "plain", loop.Options{Provider: p, Host: redactHost{tools}, Redactor: r,
			Now: func() float64 { return 1 }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Send(ctx, loop.Text("the task-list, please"), loop.User); err != nil {
			t.Fatal(err)
		}
		if err := l.Dispose(ctx); err != nil {
			t.Fatal(err)
		}
		_, evs := readSession(t, store, "plain")
		var out [][]byte
		for _, ev := range evs {
			out = append(out, ev.Raw)
		}
		return out
	}
	with, without := run(redact.Secrets()), run(nil)
	if fmt.Sprint(with) != fmt.Sprint(without) {
		t.Error("a redactor that matches nothing changed the log")
	}
}
