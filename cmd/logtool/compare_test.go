package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rollout is a Codex rollout of one turn: a prompt, a tool call and its
// output, and an answer whose text is the one given.
func rollout(id, answer, tool string, aside bool) string {
	l := `{"timestamp":"2026-01-02T03:04:05.000Z","type":"session_meta","payload":{"id":"` + id + `","timestamp":"2026-01-02T03:04:05.000Z"}}
{"timestamp":"2026-01-02T03:04:05.100Z","type":"turn_context","payload":{"model":"gpt-6"}}
{"timestamp":"2026-01-02T03:04:05.150Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t1"}}
{"timestamp":"2026-01-02T03:04:05.200Z","type":"response_item","payload":{"type":"additional_tools","tools":[{"type":"function","name":"exec","parameters":{}}` + tool + `]}}
{"timestamp":"2026-01-02T03:04:05.300Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"list"}]}}
`
	if aside {
		l += `{"timestamp":"2026-01-02T03:04:05.350Z","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"an aside"}]}}
`
	}
	return l + `{"timestamp":"2026-01-02T03:04:05.400Z","type":"response_item","payload":{"type":"function_call","name":"exec","arguments":"{\"cmd\":\"ls\"}","call_id":"c1"}}
{"timestamp":"2026-01-02T03:04:05.500Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"a.go"}}
{"timestamp":"2026-01-02T03:04:05.600Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":` + answer + `}]}}
{"timestamp":"2026-01-02T03:04:05.700Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t1"}}
{"timestamp":"2026-01-02T03:04:06.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"thanks"}]}}
{"timestamp":"2026-01-02T03:04:06.100Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"welcome"}]}}
`
}

// TestCompare runs logtool compare on two imported rollouts of one
// conversation that differ (the second stands for the recorded session:
// compare warns that it is not one): the message the transcript lacks
// shows as missing by its index in every step, the answer it altered
// where it differs, its extra tool (named with a control character,
// printed escaped) as the tools' difference; --json says the same, and
// the exit code is 0. replay, replay --wire, cache and diff
// say, for an imported session, that what they show is reconstructed
// from the transcript and what it does not record.
func TestCompare(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	if err := os.WriteFile(a, []byte(rollout("cx-a", `"one file\u001b[2J"`, `,{"type":"function","name":"clear\u001b[2J","parameters":{}}`, false)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte(rollout("cx-b", `"one file"`, "", true)), 0o600); err != nil {
		t.Fatal(err)
	}
	evil := `wire "b"`
	if code, _, stderr := logtoolRun(t, db, "import", "--format", "codex", a); code != exitOK {
		t.Fatalf("import: %d %s", code, stderr)
	}
	if code, _, stderr := logtoolRun(t, db, "import", "--format", "codex", "--id", evil, b); code != exitOK {
		t.Fatalf("import: %d %s", code, stderr)
	}
	code, stdout, stderr := logtoolRun(t, db, "compare", "cx-a", evil)
	if code != exitOK {
		t.Fatalf("compare: exit %d, stderr %s", code, stderr)
	}
	for _, s := range []string{
		`compare cx-a (codex transcript) with wire "b" (recorded)`,
		"steps: 3 in the transcript, 3 recorded, 3 paired",
		"step 1.1 | 1.1: messages 1 | 2; system identical; tools altered (added clear\\x1b[2J)\n  [1] missing from the transcript\n",
		`[4] altered at content[0].text (byte 62; transcript [3])`,
		`"text":"one file\u001b[2J"`,
		"messages: 12 in the recorded requests: 8 identical, 1 altered, 3 missing from the transcript; 0 extra in it\n",
		"tools: compared in 3 of 3 paired steps (not recorded by the transcript in the others), differ in 3\n",
	} {
		if !strings.Contains(stdout, s) {
			t.Errorf("compare lacks %q:\n%s", s, stdout)
		}
	}
	if strings.ContainsAny(stdout, "\x1b\a") {
		t.Errorf("compare printed a control character: %q", stdout)
	}
	if !strings.Contains(stderr, `logtool: warning: "wire \"b\"" is not a session the gateway recorded`) {
		t.Errorf("compare's stderr: %q", stderr)
	}
	code, stdout, _ = logtoolRun(t, db, "compare", "cx-a", evil, "--json")
	var js struct {
		Format string
		Totals map[string]int
		Steps  []struct{ Diffs []struct{ Kind string } }
	}
	if err := json.Unmarshal([]byte(stdout), &js); err != nil || code != exitOK {
		t.Fatalf("compare --json: exit %d, %v: %s", code, err, stdout)
	}
	if js.Format != "codex" || js.Totals["missing"] != 3 || js.Totals["altered"] != 1 || len(js.Steps) != 3 || len(js.Steps[0].Diffs) != 1 {
		t.Errorf("compare --json: %+v", js)
	}
	if code, _, stderr := logtoolRun(t, db, "compare", "cx-a", "nope"); code != exitFailure || !strings.Contains(stderr, "no session nope") {
		t.Errorf("compare with a missing session: exit %d, %s", code, stderr)
	}
	note := "logtool: note: %s of cx-a are %sreconstructed from the codex transcript, not what the agent sent: the transcript does not record the request's fields outside the conversation"
	for _, c := range []struct {
		args []string
		what string
	}{
		{[]string{"replay", "cx-a"}, "the requests"},
		{[]string{"replay", "cx-a", "--format", "json"}, "the requests"},
		{[]string{"replay", "cx-a", "--wire", "openai-chat"}, "the wire bodies"},
		{[]string{"cache", "cx-a", "--json"}, "the cache figures"},
		{[]string{"diff", "cx-a", "1.1", "1.2"}, "the requests"},
	} {
		code, stdout, stderr := logtoolRun(t, db, c.args...)
		verb := ""
		switch c.what {
		case "the wire bodies":
			verb = "rendered from requests "
		case "the cache figures":
			verb = "measured on requests "
		}
		want := strings.Replace(strings.Replace(note, "%s", c.what, 1), "%s", verb, 1)
		if code != exitOK || !strings.Contains(stderr, want) || strings.Contains(stdout, "logtool: note") {
			t.Errorf("%v: exit %d, stderr %q; want the note %q on stderr", c.args, code, stderr, want)
		}
	}
}
