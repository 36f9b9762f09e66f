package agenttest

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/internal/fakemodel"
)

const (
	firstPrompt  = "Please run the greeting command in this directory"
	resumePrompt = "What did the command print"
	toolSays     = "agenttest-ran" // the tool's output; not in any prompt or call
	toolCommand  = "printf '%s%s' agenttest- ran"
	noteSays     = "the note in the working directory" // note.txt's text
	noteCommand  = "cat note.txt"
	finalText    = "Resumed, and all done."
)

// TestAgents runs each installed agent against the scripted model: a
// first run in which the model calls the agent's shell tool twice, one
// call a step, then answers, and a resumed run. The agent must exit 0 both times,
// run the tool (its output comes back in a later request), send the
// earlier conversation when resumed, keep its session id across the
// resume, and send nothing anywhere but the model (the proxy sink sees
// no attempt).
func TestAgents(t *testing.T) {
	for _, name := range []string{Claude, Codex, Gemini} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testAgent(t, name)
		})
	}
}

func testAgent(t *testing.T, name string) {
	env := NewEnv(t)
	srv := httptest.NewUnstartedServer(nil)
	t.Cleanup(srv.Close)
	a := NewAgent(t, env, name, "http://"+srv.Listener.Addr().String())
	writeFile(t, filepath.Join(env.Work, "note.txt"), noteSays+"\n")
	fm := fakemodel.New(finalText,
		fakemodel.Reply{Text: "Let me run it.", Calls: []fakemodel.Call{a.Shell(toolCommand)}},
		fakemodel.Reply{Calls: []fakemodel.Call{a.Shell(noteCommand)}},
		fakemodel.Reply{Text: "The command printed its greeting."})
	srv.Config.Handler = fm
	srv.Start()

	first := a.Start(t, firstPrompt)
	checkRun(t, "first run", first)
	n := len(fm.Requests())
	resumed := a.Resume(t, resumePrompt)
	checkRun(t, "resumed run", resumed)
	all := fm.Requests()
	report(t, a, all, n, first, resumed)

	model := func(rs []fakemodel.Request) []fakemodel.Request {
		return slices.DeleteFunc(slices.Clone(rs), func(r fakemodel.Request) bool { return r.API == fakemodel.Other })
	}
	run1, run2 := model(all[:n]), model(all[n:])
	if len(run1) < 3 || len(run2) < 1 {
		t.Fatalf("model requests: %d in the first run, %d resumed; want at least 3 and 1", len(run1), len(run2))
	}
	// The tools ran: each output is first in the request after its call.
	for i, says := range []string{toolSays, noteSays} {
		holds := func(r fakemodel.Request) bool { return bytes.Contains(r.Body, []byte(says)) }
		if first := slices.IndexFunc(run1, holds); first != i+1 {
			t.Errorf("call %d's output %q is first in request %d of the first run, want %d: the tool did not run", i, says, first, i+1)
		}
	}
	for _, want := range []string{firstPrompt, "Let me run it.", toolSays, noteSays, "The command printed its greeting.", resumePrompt} {
		if !bytes.Contains(run2[0].Body, []byte(want)) {
			t.Errorf("the resumed run's first request lacks %q of the earlier conversation", want)
		}
	}
	if !bytes.Contains(resumed.Stdout, []byte(finalText)) {
		t.Errorf("the resumed run's output lacks the model's final text:\n%s", Tail(resumed.Stdout, 2000))
	}

	// The session id: on every model request, the same, when the agent
	// sends one; otherwise in Gemini CLI's JSON output.
	if _, ok := SessionHeaders[name]; ok {
		ids := map[string]int{}
		for _, r := range append(run1, run2...) {
			ids[a.SessionID(r.Header)]++
		}
		if len(ids) != 1 || ids[" "] > 0 || ids[""] > 0 {
			t.Errorf("session ids across the runs: %v; want one, on every request", ids)
		}
	} else if s1, s2 := outputSession(first.Stdout), outputSession(resumed.Stdout); s1 == "" || s1 != s2 {
		t.Errorf("session ids in the output: %q, then %q resumed; want one", s1, s2)
	}
	if got := env.Sink.Attempts(); len(got) > 0 {
		t.Errorf("the agent tried to reach, through the proxy: %q", got)
	}
}

func checkRun(t *testing.T, what string, r Result) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("%s: %v after %v\nstdout: %s\nstderr: %s", what, r.Err, r.Took, Tail(r.Stdout, 2000), Tail(r.Stderr, 4000))
	}
}

// outputSession is the session_id of an agent's JSON output.
func outputSession(stdout []byte) string {
	var out struct {
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal(stdout, &out) != nil {
		return ""
	}
	return out.SessionID
}

// report logs what the agent sent, for the gateway's tests to rely on:
// per request its method, path, API, size and header names; where the
// key went.
func report(t *testing.T, a *Agent, all []fakemodel.Request, n int, first, resumed Result) {
	t.Helper()
	t.Logf("%s: first run %v, resumed %v; %d requests then %d", a.Name, first.Took.Round(1e6), resumed.Took.Round(1e6), n, len(all)-n)
	for i, r := range all {
		var names, keyIn []string
		for k, v := range r.Header {
			names = append(names, k)
			if slices.ContainsFunc(v, func(s string) bool { return strings.Contains(s, Key) }) {
				keyIn = append(keyIn, k)
			}
		}
		sort.Strings(names)
		q := ""
		if r.Query != "" {
			q = "?" + r.Query
		}
		t.Logf("  %d %s %s%s api=%q stream=%v reply=%d body=%d key in %v session=%q\n     headers: %s",
			i, r.Method, r.Path, q, r.API, r.Stream, r.Reply, len(r.Body), keyIn, a.SessionID(r.Header), strings.Join(names, " "))
	}
}
