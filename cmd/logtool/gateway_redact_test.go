package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/internal/ssegen"
)

// TestGatewayRedact: logtool gateway --redact --redact-pattern forwards
// the bytes sent and records them redacted; verify reports each redacted
// request (class redacted: exit 0, 1 with --strict); replay --wire
// --recorded prints the recorded bytes and says on stderr that they are
// not the bytes sent; no output holds a secret.
func TestGatewayRedact(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sessions.db")
	model := newFakeModel(t, ssegen.Anthropic(4<<10))
	url, stop := startGateway(t, db, "--upstream", "anthropic="+model.URL, "--redact", "--redact-pattern", `codename (?P<secret>\w+)`)
	key := "sk-ant-api03-" + strings.Repeat("Zq8-", 23) + "xAA"
	var sent [][]byte
	for i := range 2 {
		b := []byte(fmt.Sprintf(`{"model":"claude","messages":[{"role":"user","content":"use %s for codename BLUEJAY"}],"max_tokens":%d}`, key, 100+i))
		sent = append(sent, b)
		postTo(t, url+"/v1/messages", map[string]string{"X-Claude-Code-Session-Id": "cc", "Anthropic-Version": "2023-06-01"}, b)
	}
	code, stderr := stop()
	if code != 0 || !strings.Contains(stderr, "redacted=2") || !strings.Contains(stderr, ", 4 spans redacted") {
		t.Fatalf("gateway exit %d:\n%s", code, stderr)
	}
	for i, b := range model.bodies {
		if !bytes.Equal(b, sent[i]) {
			t.Errorf("request %d reached the upstream changed", i+1)
		}
	}
	_, out, _ := logtoolOut("--db", db, "ls")
	var id string
	for _, f := range strings.Fields(string(out)) {
		if strings.HasPrefix(f, "gw-") {
			id = f
		}
	}
	c, out, errs := logtoolOut("--db", db, "replay", id, "--wire", "--recorded", "--format", "raw", "--exchange", "2")
	want := strings.ReplaceAll(strings.ReplaceAll(string(sent[1]), key, "[REDACTED]"), "BLUEJAY", "[REDACTED]")
	if c != 0 || string(out) != want || !strings.Contains(errs, "exchange 2: the request was recorded redacted (2 spans replaced by [REDACTED]); these are not the bytes the upstream was sent") {
		t.Errorf("replay: %d %s\n%s", c, out, errs)
	}
	c, out, _ = logtoolOut("--db", db, "replay", id, "--wire", "--recorded", "--format", "text", "--exchange", "1")
	if c != 0 || !strings.Contains(string(out), "redacted: 2 spans, not the bytes sent") {
		t.Errorf("replay text: %d %s", c, out)
	}
	c, out, errs = logtoolOut("--db", db, "verify")
	if c != 0 || strings.Count(string(out), "warning redacted: digest not checkable (redacted content)") != 2 || !strings.Contains(string(out), ": 0 findings, 2 warnings") {
		t.Errorf("verify: %d %s %s", c, out, errs)
	}
	c, out, _ = logtoolOut("--db", db, "verify", "--strict")
	if c != 1 || strings.Count(string(out), "finding redacted: digest not checkable (redacted content)") != 2 {
		t.Errorf("verify --strict: %d %s", c, out)
	}
	_, js, _ := logtoolOut("--db", db, "export", id)
	if bytes.Contains(js, []byte(key)) || bytes.Contains(js, []byte("BLUEJAY")) || strings.Contains(stderr, "BLUEJAY") {
		t.Error("a secret was stored or printed")
	}
	c, _, errs = logtoolOut("--db", filepath.Join(t.TempDir(), "x.db"), "gateway", "--upstream", model.URL, "--redact-pattern", `(BLUEJAY`)
	if c != 2 || !strings.Contains(errs, "--redact-pattern 1: missing closing )") || strings.Contains(errs, "BLUEJAY") {
		t.Errorf("a bad pattern: %d %s", c, errs)
	}
}
