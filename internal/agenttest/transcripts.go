package agenttest

import (
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Where each agent writes its own transcripts, under its home: the
// directory and a test of a file's base name.
var transcriptDirs = map[string]struct {
	dir  string
	name func(string) bool
}{
	// ~/.claude/projects/<working directory, mangled>/<session>.jsonl, and
	// a subagent's <session>/subagents/agent-*.jsonl.
	Claude: {".claude/projects", func(n string) bool { return strings.HasSuffix(n, ".jsonl") }},
	// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl.
	Codex: {".codex/sessions", func(n string) bool { return strings.HasPrefix(n, "rollout-") && strings.HasSuffix(n, ".jsonl") }},
	// ~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl.
	Gemini: {".gemini/tmp", func(n string) bool {
		return strings.HasPrefix(n, "session-") && (strings.HasSuffix(n, ".jsonl") || strings.HasSuffix(n, ".json"))
	}},
}

// Transcripts returns the transcript files a wrote in its Env so far
// (the agent's own record of its sessions), sorted by path, failing t
// when there is none.
func (a *Agent) Transcripts(t testing.TB) []string {
	t.Helper()
	where := transcriptDirs[a.Name]
	root := filepath.Join(a.env.Home, filepath.FromSlash(where.dir))
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && where.name(d.Name()) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatalf("agenttest: finding %s's transcripts: %v", a.Name, err)
	}
	if len(out) == 0 {
		t.Fatalf("agenttest: %s wrote no transcript under %s", a.Name, root)
	}
	sort.Strings(out)
	return out
}

// Capture runs the scripted session of the agent name against a
// scripted model of its own (RunSession, Check) and returns it with the
// transcript files the agent wrote of it: a fresh capture of the agent's
// own record, in t's temporary directory. It skips or fails t as Binary
// does when the agent is not installed.
func Capture(t testing.TB, name string) (*Session, []string) {
	t.Helper()
	env := NewEnv(t)
	srv := httptest.NewUnstartedServer(nil)
	t.Cleanup(srv.Close)
	a := NewAgent(t, env, name, "http://"+srv.Listener.Addr().String())
	m := Script(t, a)
	srv.Config.Handler = m
	srv.Start()
	s := RunSession(t, a, m)
	s.Check(t)
	return s, a.Transcripts(t)
}
