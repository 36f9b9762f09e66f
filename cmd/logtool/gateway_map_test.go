package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/internal/fakemodel"
)

// gatewayBodies are the requests of a two-turn Anthropic conversation
// with a tool call between (the call id is fakemodel's first).
var gatewayBodies = []string{
	`{"model":"claude-x","stream":true,"max_tokens":100,"system":"be brief","tools":[{"name":"ls","input_schema":{"type":"object"}}],` +
		`"messages":[{"role":"user","content":"list the files"}]}`,
	`{"model":"claude-x","stream":true,"max_tokens":100,"system":"be brief","tools":[{"name":"ls","input_schema":{"type":"object"}}],` +
		`"messages":[{"role":"user","content":"list the files"},{"role":"assistant","content":[{"type":"text","text":"Looking."},` +
		`{"type":"tool_use","id":"toolu_fake0003","name":"ls","input":{"path":"."}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_fake0003","content":"a.txt"}]}]}`,
	`{"model":"claude-x","stream":true,"max_tokens":100,"system":"be brief","tools":[{"name":"ls","input_schema":{"type":"object"}}],` +
		`"messages":[{"role":"user","content":"list the files"},{"role":"assistant","content":[{"type":"text","text":"Looking."},` +
		`{"type":"tool_use","id":"toolu_fake0003","name":"ls","input":{"path":"."}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_fake0003","content":"a.txt"}]},` +
		`{"role":"assistant","content":"Done."},{"role":"user","content":"thanks"}]}`,
}

// TestGatewayUI: logtool gateway --ui serves the audit UI over the store
// it holds while it runs (its URL the second line on stdout); the mapped
// session reads with show, stat, diff, replay (rebuild) and replay --wire
// --recorded --step, and verifies strictly.
func TestGatewayUI(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sessions.db")
	fm := fakemodel.New("Done.", fakemodel.Reply{Text: "Looking.", Calls: []fakemodel.Call{{Name: "ls", Arguments: `{"path":"."}`}}})
	model := httptest.NewServer(fm)
	defer model.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var mu sync.Mutex
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- runEnv(ctx, testEnv(), []string{"--db", db, "gateway", "--listen", "127.0.0.1:0", "--ui", "127.0.0.1:0", "--upstream", model.URL},
			pw, lockedWriter{&mu, &stderr})
		pw.Close()
	}()
	br := bufio.NewReader(pr)
	gw, err1 := br.ReadString('\n')
	uiURL, err2 := br.ReadString('\n')
	if err1 != nil || err2 != nil || !strings.HasSuffix(uiURL, "/\n") {
		cancel()
		<-code
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("gateway --ui: %q %q %v %v\n%s", gw, uiURL, err1, err2, stderr.String())
	}
	go io.Copy(io.Discard, pr)
	gw, uiURL = strings.TrimSpace(gw), strings.TrimSpace(uiURL)
	for _, b := range gatewayBodies {
		postTo(t, gw+"/v1/messages", map[string]string{"X-Claude-Code-Session-Id": "ui-1"}, []byte(b))
	}
	res, err := http.Get(uiURL + "api/sessions")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(page), `"gw-`) {
		t.Fatalf("the UI while the gateway runs: %d %s", res.StatusCode, page)
	}
	live := regexp.MustCompile(`gw-[0-9a-f]{16}`).FindString(string(page))
	for _, path := range []string{"s/" + live, "s/" + live + "/step/1.2", "s/" + live + "/step/2.1"} {
		res, err := http.Get(uiURL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || (strings.Contains(path, "2.1") && !strings.Contains(string(b), "thanks")) {
			t.Errorf("GET %s while the gateway runs: %d", path, res.StatusCode)
		}
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("gateway exited %d: %s", c, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the gateway did not stop")
	}
	mu.Lock()
	for i, step := range []string{"step=1.1", "step=1.2", "step=2.1"} {
		if !strings.Contains(stderr.String(), step) {
			t.Errorf("no status line names %s (exchange %d):\n%s", step, i+1, stderr.String())
		}
	}
	mu.Unlock()

	c, out, errs := logtoolOut("--db", db, "ls")
	id := ""
	for _, f := range strings.Fields(string(out)) {
		if strings.HasPrefix(f, "gw-") {
			id = f
		}
	}
	if c != 0 || id == "" {
		t.Fatalf("ls: %d %s %s", c, out, errs)
	}
	if c, out, errs := logtoolOut("--db", db, "verify", "--strict", id); c != 0 || !strings.Contains(string(out), ": 0 findings") {
		t.Fatalf("verify --strict: %d\n%s%s", c, out, errs)
	}
	for _, args := range [][]string{{"show", id}, {"stat", id}, {"replay", id}, {"diff", id, "1.1", "2.1"}} {
		c, out, errs := logtoolOut(append([]string{"--db", db}, args...)...)
		if c != 0 || len(out) == 0 {
			t.Errorf("%s: exit %d\n%s%s", args[0], c, out, errs)
		}
		if args[0] == "replay" && (!strings.Contains(string(out), "thanks") || !strings.Contains(string(out), "a.txt")) {
			t.Errorf("replay does not rebuild the last step's conversation:\n%s", out)
		}
	}
	for i, step := range []string{"1.1", "1.2", "2.1"} {
		c, got, errs := logtoolOut("--db", db, "replay", id, "--wire", "--recorded", "--step", step, "--format", "raw")
		if c != 0 || string(got) != gatewayBodies[i] {
			t.Errorf("replay --recorded --step %s: exit %d, %q %s", step, c, got, errs)
		}
	}
	if c, _, errs := logtoolOut("--db", db, "replay", id, "--wire", "--recorded", "--step", "3.1"); c == 0 || !strings.Contains(errs, "step 3.1") {
		t.Errorf("replay --recorded --step 3.1 (no such step): exit %d %s", c, errs)
	}
}
