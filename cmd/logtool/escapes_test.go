package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/internal/printable"
)

// planted are the terminal controls a hostile log plants: a new title, a
// cleared screen, a carriage return that lets a line overwrite itself, and
// CSI as one C1 character.
const planted = "\x1b]0;title\x07\x1b[2J\r\u009b2J\x7f"

// rawControl returns the first control character of out that no human
// output may hold raw (a C0 one but \n and \t, DEL, a C1 one, a byte of
// invalid UTF-8), and whether there is one.
func rawControl(out string) (string, bool) {
	for i := 0; i < len(out); {
		r, n := utf8.DecodeRuneInString(out[i:])
		if r == utf8.RuneError && n == 1 || r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f {
			return out[max(0, i-20):min(len(out), i+20)], true
		}
		i += n
	}
	return "", false
}

// runIn runs a command line with env e, returning its exit code, stdout
// and stderr.
func runIn(e env, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := runEnv(context.Background(), e, args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestTerminalEscapes: a session whose id, model, tool name, call id and
// texts hold terminal controls, and a server whose error message holds
// them, reach no human-readable output raw: every command escapes them.
// The --json and raw forms keep the bytes exact.
func TestTerminalEscapes(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	id := "id" + planted
	sc := map[string]any{
		"config": map[string]any{"provider": "p" + planted, "model": "m" + planted},
		"system": "be brief" + planted + "\nsecond line",
		"tools":  []any{map[string]any{"name": "ls" + planted, "description": "d" + planted, "parameters": map[string]any{"type": "object"}}},
		"turns": []any{map[string]any{
			"prompt": "list" + planted + "\nforged line",
			"replies": []any{
				[]any{map[string]any{"type": "tool-call", "id": "c1" + planted, "name": "ls" + planted, "arguments": `{"a":"` + "\\u001b[31m" + `"}`}},
				[]any{map[string]any{"type": "text", "text": "done" + planted + "\ttab"}},
			},
			"toolResults": map[string]any{"c1" + planted: map[string]any{"content": []any{map[string]any{"type": "text", "text": "r" + planted}}}},
		}},
	}
	scData, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	scFile := filepath.Join(dir, "hostile.json")
	if err := os.WriteFile(scFile, scData, 0o600); err != nil {
		t.Fatal(err)
	}
	e := pgEnv()
	check := func(name string, code int, stdout, stderr string) {
		t.Helper()
		for what, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
			if at, ok := rawControl(out); ok {
				t.Errorf("logtool %s (exit %d): raw control in %s near %q", name, code, what, at)
			}
		}
	}
	// The store refuses control characters in a new id: the refusal is
	// what prints the id, escaped, and a plain id carries the rest.
	code, stdout, stderr := runIn(e, "--db", db, "run", scFile, "--session", id)
	check("run", code, stdout, stderr)
	if code == exitOK || !strings.Contains(stderr, "control character") {
		t.Fatalf("run --session with a control character in the id = exit %d, not refused\n%s%s", code, stdout, stderr)
	}
	id = "hostile-1"
	code, stdout, stderr = runIn(e, "--db", db, "run", scFile, "--session", id)
	check("run", code, stdout, stderr)
	if code != exitOK {
		t.Fatalf("run = exit %d\n%s%s", code, stdout, stderr)
	}
	// A server's error message.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"type":"bad`+"\\u001b[2J"+`","message":"no`+"\\u001b]0;pwned\\u0007\\r\\n\\u009b2J"+`forged"}}`)
	}))
	defer srv.Close()
	code, stdout, stderr = runIn(e, "--db", db, "run", scFile, "--session", "served-1", "--provider", "openai-chat", "--base-url", srv.URL)
	check("run --provider", code, stdout, stderr)
	if code != exitFailure || !strings.Contains(stderr, "forged") {
		t.Errorf("run --provider against an erring server = exit %d\n%s", code, stderr)
	}

	// A Claude Code transcript: its session id, model, tool and call id,
	// text and an unknown line type, in the import report.
	const j = `\u001b]0;title\u0007\u001b[2J\r\u009b2J\u007f`
	// (The session id is plain: the store refuses controls in a new id.)
	cc := `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"cc-hostile","cwd":"/w","timestamp":"2025-01-02T03:04:05.000Z","message":{"role":"user","content":"list` + j + `"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"cc-hostile","timestamp":"2025-01-02T03:04:06.000Z","message":{"id":"msg_1","role":"assistant","model":"claude` + j + `","content":[{"type":"tool_use","id":"tu` + j + `","name":"Bash` + j + `","input":{"command":"ls"}}],"usage":{"input_tokens":3,"output_tokens":12}}}
{"type":"odd` + j + `","uuid":"x1","sessionId":"cc-hostile"}
`
	ccFile := filepath.Join(dir, "cc"+planted+".jsonl")
	if err := os.WriteFile(ccFile, []byte(cc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"auto", "claude-code"} {
		code, stdout, stderr = runIn(e, "--db", filepath.Join(dir, "cc-"+format+".db"), "import", "--format", format, ccFile)
		check("import --format "+format, code, stdout, stderr)
		if testing.Verbose() {
			t.Logf("import --format %s: exit %d\n%s%s", format, code, stdout, stderr)
		}
		if !strings.Contains(stderr, "odd") {
			t.Errorf("import --format %s = exit %d, no report of the odd line\n%s%s", format, code, stdout, stderr)
		}
	}

	export := filepath.Join(dir, "export.jsonl")
	if c, _, errOut := runIn(e, "--db", db, "export", id, "-o", export); c != exitOK {
		t.Fatalf("export = exit %d\n%s", c, errOut)
	}
	human := [][]string{
		{"ls"},
		{"show", id},
		{"show", "served-1"},
		{"show", id + "x"}, // no such session
		{"replay", id},
		{"replay", id, "--new"},
		{"replay", id, "--wire", "openai-chat", "--format", "text"},
		{"replay", id, "--wire", "anthropic-messages", "--format", "text"},
		{"stat"},
		{"stat", id},
		{"diff", id, "1.1", "1.2"},
		{"cache", id},
		{"verify"},
		{"verify", id + "x"},
		{"fork", id, "--at", "99", "--id", "child" + planted},
		{"copy", "--from", db, "--to", filepath.Join(dir, "copy.db")},
		{"copy", "--from", db, "--to", filepath.Join(dir, "copy.db"), "--skip-existing"},
		{"import", export},                     // a conflict
		{"import", "--format", "auto", export}, // a conflict
		{"--db", filepath.Join(dir, "x.db"), "import", export},
		{"salvage", "-o", filepath.Join(dir, "salvaged"+planted+".db")},
		{"show", "--type", "x" + planted, id},
	}
	for _, args := range human {
		if args[0] != "--db" && args[0] != "copy" {
			args = append([]string{"--db", db}, args...)
		}
		code, stdout, stderr := runIn(e, args...)
		check(strings.Join(args, " "), code, stdout, stderr)
		if testing.Verbose() {
			t.Logf("logtool %q: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}

	// Exact output keeps every byte: the JSON forms carry the planted C1
	// character and DEL raw (JSON text escapes only C0), and show --json
	// is export's lines. (ls and stat print ids, which hold no controls.)
	exported, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	_, showJSON, _ := runIn(e, "--db", db, "show", id, "--json")
	if _, events, _ := strings.Cut(string(exported), "\n"); showJSON != events {
		t.Errorf("show --json differs from export's events")
	}
	for _, args := range [][]string{
		{"show", id, "--json"}, {"replay", id, "--format", "json"},
		{"replay", id, "--wire", "openai-chat"}, {"export", id},
	} {
		code, out, errOut := runIn(e, append([]string{"--db", db}, args...)...)
		if code != exitOK || !strings.Contains(out, "\u009b2J\x7f") {
			t.Errorf("logtool %s = exit %d, the planted bytes are not kept exact\n%s", strings.Join(args, " "), code, errOut)
		}
	}
	var ls struct{ Session string }
	_, out, _ := runIn(e, "--db", db, "ls", "--json")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if err := json.Unmarshal([]byte(line), &ls); err != nil {
			t.Fatal(err)
		}
		if ls.Session == id {
			break
		}
	}
	if ls.Session != id {
		t.Errorf("ls --json does not hold the id %q exactly", id)
	}
	_, raw, _ := runIn(e, "--db", db, "replay", id, "--wire", "openai-chat", "--format", "raw", "--step", "1.1")
	if !strings.Contains(raw, "m\u001b]0;title\u0007") && !strings.Contains(raw, `m\u001b]0;title\u0007`) {
		t.Errorf("replay --format raw lost the model name: %q", raw)
	}
}

// TestPrintErrorLines: an error message that holds a server's text (a
// PostgreSQL error, a transport failure) cannot forge a line of logtool's
// own, nor send a control character to the terminal.
func TestPrintErrorLines(t *testing.T) {
	var b bytes.Buffer
	printError(&b, errors.WithHint(errors.New("server said: no\nlogtool: all good"+planted+"\n\talready indented"), "hint one\nhint: forged"))
	want := "logtool: server said: no\n\tlogtool: all good" + printable.Line(planted) + "\n\talready indented\nhint: hint one\n\thint: forged\n"
	if b.String() != want {
		t.Errorf("printError wrote\n%q\nwant\n%q", b.String(), want)
	}
}
