package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/internal/corpus"
)

// transcriptsDir is the shared transcript corpus (docs/transcripts.md); it skips t
// when ../shared is absent.
func transcriptsDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(corpus.Shared(t), "testdata", "transcripts")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("../shared is present but has no testdata/transcripts: %v", err)
	}
	return dir
}

// logtoolRun runs logtool against db and returns exit code, stdout and
// stderr.
func logtoolRun(t *testing.T, db string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := env{stdin: strings.NewReader(""), getenv: func(string) string { return "" }, now: func() time.Time { return testNow },
		random: strings.NewReader(strings.Repeat("r", 1024))}
	code := runEnv(context.Background(), e, append([]string{"--db", db}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestImportTranscripts imports a folder tree the way people keep them
// (Claude Code projects with a subagent file, Codex rollouts, a DSH file)
// with --format auto, then exports each transcript back byte for byte,
// verifies the store, and checks conflicts, --skip-existing, --id, a torn
// last line and a third format.
func TestImportTranscripts(t *testing.T) {
	transcripts := transcriptsDir(t)
	tmp := t.TempDir()
	db := filepath.Join(tmp, "s.db")
	tree := filepath.Join(tmp, "tree")
	parentID := "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f"
	files := map[string]string{
		filepath.Join("claude", "proj", parentID+".jsonl"):                                      "claude-code/agent-sessions-parent.jsonl",
		filepath.Join("claude", "proj", parentID, "subagents", "agent-a0ad4f44468bdf20d.jsonl"): "claude-code/agent-sessions-subagent.jsonl",
		filepath.Join("claude", "proj", "sample.jsonl"):                                         "claude-code/claude-code-transcripts-sample.jsonl",
		filepath.Join("codex", "2025", "rollout-small.jsonl"):                                   "codex/agent-sessions-small.jsonl",
		filepath.Join("codex", "2025", "rollout-drift.jsonl"):                                   "codex/agent-sessions-schema-drift.jsonl",
	}
	for to, from := range files {
		copyFile(t, filepath.Join(transcripts, from), filepath.Join(tree, to))
	}
	copyFile(t, filepath.Join("testdata", "import", "basic.jsonl"), filepath.Join(tree, "dsh", "basic.jsonl"))

	code, stdout, stderr := logtoolRun(t, db, "import", "--format", "auto", tree)
	if code != exitOK {
		t.Fatalf("import = exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	ids := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		ids[strings.Fields(l)[0]] = true
	}
	for _, id := range []string{parentID, "agent-a0ad4f44468bdf20d", "test-session-id", "019fc8be-3658-7ca3-9e29-000000000000", "rollout-drift", "basic-1"} {
		if !ids[id] {
			t.Errorf("session %s not imported; stdout:\n%s", id, stdout)
		}
	}
	// Progress and the per-file report are on stderr; the subagent comes
	// last, after its parent, and names it.
	if !strings.Contains(stderr, "[6/6] "+filepath.Join(tree, "claude", "proj", parentID, "subagents")) ||
		!strings.Contains(stderr, "subagent of "+parentID) || !strings.Contains(stderr, "kept     ") {
		t.Errorf("stderr lacks progress, the subagent's parent or the kept kinds:\n%s", stderr)
	}
	_, out, _ := logtoolRun(t, db, "export", "agent-a0ad4f44468bdf20d")
	if first := strings.SplitN(out, "\n", 2)[0]; !strings.Contains(first, `"parentSession":"`+parentID+`"`) {
		t.Errorf("subagent header = %s, want parentSession %s", first, parentID)
	}

	// Every transcript exports back byte for byte.
	for to := range files {
		want, _ := os.ReadFile(filepath.Join(tree, to))
		id := map[string]string{
			"agent-sessions-parent.jsonl": parentID, "agent-sessions-subagent.jsonl": "agent-a0ad4f44468bdf20d",
			"claude-code-transcripts-sample.jsonl": "test-session-id", "agent-sessions-small.jsonl": "019fc8be-3658-7ca3-9e29-000000000000",
			"agent-sessions-schema-drift.jsonl": "rollout-drift",
		}[filepath.Base(files[to])]
		code, got, errOut := logtoolRun(t, db, "export", id, "--format", "source")
		if code != exitOK || got != string(want) {
			t.Errorf("export %s --format source = exit %d, %d bytes (want %d); stderr: %s", id, code, len(got), len(want), errOut)
		}
	}
	if code, _, errOut := logtoolRun(t, db, "export", "basic-1", "--format", "source"); code != exitFailure || !strings.Contains(errOut, "no source lines") {
		t.Errorf("export of a DSH session --format source = exit %d, stderr %q", code, errOut)
	}
	if code, out, errOut := logtoolRun(t, db, "verify", "--strict", parentID, "agent-a0ad4f44468bdf20d", "test-session-id",
		"019fc8be-3658-7ca3-9e29-000000000000", "rollout-drift"); code != exitOK {
		t.Errorf("verify --strict = exit %d\n%s%s", code, out, errOut)
	}

	// The same tree again: conflicts, unless --skip-existing.
	code, _, stderr = logtoolRun(t, db, "import", "--format", "codex", filepath.Join(tree, "codex", "2025", "rollout-small.jsonl"))
	if code != exitFailure || !strings.Contains(stderr, "exists already") || !strings.Contains(stderr, "--skip-existing") {
		t.Errorf("second import = exit %d, stderr %q; want a conflict with a hint", code, stderr)
	}
	code, stdout, stderr = logtoolRun(t, db, "import", "--format", "auto", "--skip-existing", filepath.Join(tree, "claude"), filepath.Join(tree, "codex"))
	if code != exitOK || stdout != "" || strings.Count(stderr, "skipped") != 5 {
		t.Errorf("import --skip-existing = exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	code, stdout, _ = logtoolRun(t, db, "import", "--format", "codex", "--id", "copy-1", filepath.Join(tree, "codex", "2025", "rollout-small.jsonl"))
	if code != exitOK || !strings.HasPrefix(stdout, "copy-1 ") {
		t.Errorf("import --id = exit %d, stdout %q", code, stdout)
	}
	if code, _, _ := logtoolRun(t, db, "import", "--format", "auto", "--id", "x", tree); code != exitUsage {
		t.Errorf("--id with many files = exit %d, want %d", code, exitUsage)
	}

	// A torn last line is kept and reported; a third format is refused.
	torn := filepath.Join(tmp, "torn.jsonl")
	os.WriteFile(torn, []byte(`{"timestamp":"2025-01-02T03:04:05Z","type":"session_meta","payload":{"id":"torn-1"}}`+"\n"+`{"timestamp":"2025-01-0`), 0o644)
	code, _, stderr = logtoolRun(t, db, "import", "--format", "auto", torn)
	if code != exitOK || !strings.Contains(stderr, "the last line (2) is torn") {
		t.Errorf("torn import = exit %d, stderr %q", code, stderr)
	}
	if _, got, _ := logtoolRun(t, db, "export", "torn-1", "--format", "source"); got != string(must(os.ReadFile(torn))) {
		t.Errorf("torn file does not export back: %q", got)
	}
	third := filepath.Join(tmp, "third.jsonl")
	os.WriteFile(third, []byte("{\"hello\":\"world\"}\n"), 0o644)
	code, _, stderr = logtoolRun(t, db, "import", "--format", "auto", third)
	if code != exitFailure || !strings.Contains(stderr, "not a DSH session file, a Codex rollout, a Claude Code transcript or a Gemini CLI session") ||
		!strings.Contains(stderr, third) {
		t.Errorf("third format = exit %d, stderr %q", code, stderr)
	}
	// Auto never guesses: lines of two formats are refused, naming the
	// file; --format imports it as the format named.
	mixed := filepath.Join(tmp, "mixed.jsonl")
	os.WriteFile(mixed, []byte(`{"sessionId":"g-mixed","projectHash":"h","startTime":"2026-01-02T03:04:05Z"}`+"\n"+
		`{"type":"queue-operation","operation":"enqueue","sessionId":"g-mixed"}`+"\n"), 0o644)
	code, _, stderr = logtoolRun(t, db, "import", "--format", "auto", mixed)
	if code != exitFailure || !strings.Contains(stderr, "line 1 reads as gemini-cli, line 2 as claude-code") || !strings.Contains(stderr, mixed) {
		t.Errorf("mixed formats = exit %d, stderr %q", code, stderr)
	}
	code, stdout, stderr = logtoolRun(t, db, "import", "--format", "gemini-cli", mixed)
	if code != exitOK || !strings.HasPrefix(stdout, "g-mixed ") || !strings.Contains(stderr, "gemini-cli, 2 lines: 1 mapped, 0 kept unmapped, 1 unknown") {
		t.Errorf("--format gemini-cli = exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if code, _, _ := logtoolRun(t, db, "import", "--format", "yaml", third); code != exitUsage {
		t.Errorf("--format yaml = exit %d, want %d", code, exitUsage)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestImportMissingPath imports a folder and a path that does not exist,
// as README's `import --format auto ~/.codex/sessions ~/.claude/projects`
// does for a user of only one of the tools: the folder's files are
// imported, the missing path is reported by name, and the exit is 1.
func TestImportMissingPath(t *testing.T) {
	tmp := t.TempDir()
	db := filepath.Join(tmp, "s.db")
	dir := filepath.Join(tmp, "projects")
	copyFile(t, filepath.Join("testdata", "import", "basic.jsonl"), filepath.Join(dir, "basic.jsonl"))
	missing := filepath.Join(tmp, "no-such-dir")
	code, stdout, stderr := logtoolRun(t, db, "import", "--format", "auto", missing, dir)
	if code != exitFailure || !strings.HasPrefix(stdout, "basic-1 ") ||
		!strings.Contains(stderr, missing+": no such file or directory") || !strings.Contains(stderr, "1 of 2 files not imported") {
		t.Errorf("import of a missing path and a folder = exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	if _, out, _ := logtoolRun(t, db, "ls"); !strings.Contains(out, "basic-1") {
		t.Errorf("ls after the import lacks basic-1:\n%s", out)
	}
}

// TestImportGeminiFiles: Gemini CLI starts a new file when a resumed
// run begins in another minute, with the session's id, its header line
// and the history it reloads; imported from a directory (in path order,
// which is time order), the later file is a session of its own named
// after the file, whose parent is the first, and maps the reloaded
// history; run again with --skip-existing, nothing is imported twice.
func TestImportGeminiFiles(t *testing.T) {
	dir := t.TempDir()
	chats := filepath.Join(dir, "chats")
	if err := os.MkdirAll(chats, 0o700); err != nil {
		t.Fatal(err)
	}
	head := func(at string) string {
		return `{"sessionId":"g-1","projectHash":"h","startTime":"2026-01-02T03:` + at + `:00.000Z","lastUpdated":"2026-01-02T03:` + at + `:00.000Z","kind":"main"}` + "\n"
	}
	first := head("04") + `{"id":"u1","timestamp":"2026-01-02T03:04:01.000Z","type":"user","content":[{"text":"hi"}]}
{"id":"g1","timestamp":"2026-01-02T03:04:02.000Z","type":"gemini","content":"hello","tokens":{"input":5,"output":1},"model":"gemini-3"}
`
	later := head("05") + `{"$set":{"messages":[{"id":"u1","timestamp":"2026-01-02T03:05:00.000Z","type":"user","content":[{"text":"hi"}]},{"id":"g1","timestamp":"2026-01-02T03:05:00.000Z","type":"gemini","content":[{"text":"hello"}]}]}}
{"id":"u2","timestamp":"2026-01-02T03:05:01.000Z","type":"user","content":[{"text":"again"}]}
{"id":"g2","timestamp":"2026-01-02T03:05:02.000Z","type":"gemini","content":"hello again","tokens":{"input":9,"output":2},"model":"gemini-3"}
`
	os.WriteFile(filepath.Join(chats, "session-2026-01-02T03-04-g1.jsonl"), []byte(first), 0o600)
	os.WriteFile(filepath.Join(chats, "session-2026-01-02T03-05-g1.jsonl"), []byte(later), 0o600)
	db := filepath.Join(dir, "g.db")
	code, stdout, stderr := logtoolRun(t, db, "import", "--format", "auto", dir)
	if code != exitOK || stdout != "g-1 9\ng-1/session-2026-01-02T03-05-g1 16\n" ||
		!strings.Contains(stderr, "session-2026-01-02T03-05-g1.jsonl: gemini-cli, 4 lines: 4 mapped, 0 kept unmapped, 0 unknown; 2 turns, 2 steps, 2 prompts, 0 tool calls, 0 tool results, 0 compactions; a later file of session g-1") {
		t.Fatalf("import: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if _, got, _ := logtoolRun(t, db, "export", "g-1/session-2026-01-02T03-05-g1", "--format", "source"); got != later {
		t.Errorf("the later file does not export back: %q", got)
	}
	if code, stdout, stderr := logtoolRun(t, db, "import", "--format", "auto", "--skip-existing", dir); code != exitOK || stdout != "" {
		t.Errorf("again with --skip-existing: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
}
