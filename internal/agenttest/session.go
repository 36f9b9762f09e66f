package agenttest

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/internal/fakemodel"
)

// The scripted session's prompts, the words its tool calls print, and the
// model's last text.
const (
	FirstPrompt  = "Please run the greeting command in this directory"
	ResumePrompt = "What did the command print"
	ToolSays     = "agenttest-ran" // the first call's output; not in any prompt or call
	NoteSays     = "the note in the working directory"
	FinalText    = "Resumed, and all done."

	toolCommand = "printf '%s%s' agenttest- ran"
	noteCommand = "cat note.txt" // note.txt holds NoteSays
)

// Script returns the scripted model of the session every agent test
// runs: the model calls a's shell tool twice, one call a step, then
// answers, and answers FinalText from then on. It writes note.txt, which
// the second call reads, into the working directory.
func Script(t testing.TB, a *Agent) *fakemodel.Server {
	t.Helper()
	writeFile(t, filepath.Join(a.env.Work, "note.txt"), NoteSays+"\n")
	return fakemodel.New(FinalText,
		fakemodel.Reply{Text: "Let me run it.", Calls: []fakemodel.Call{a.Shell(toolCommand)}},
		fakemodel.Reply{Calls: []fakemodel.Call{a.Shell(noteCommand)}},
		fakemodel.Reply{Text: "The command printed its greeting."})
}

// Session is one run of the scripted session.
type Session struct {
	Agent *Agent
	// Model is the scripted model the agent's base URL reaches (directly
	// or through a gateway).
	Model          *fakemodel.Server
	First, Resumed Result
	// Requests are those Model received, in order; the first run made
	// the first N of them.
	Requests []fakemodel.Request
	N        int
}

// RunSession runs the scripted session: a on FirstPrompt, then resumed
// on ResumePrompt, failing t when either run fails. m (made by Script)
// must be what a's base URL reaches.
func RunSession(t testing.TB, a *Agent, m *fakemodel.Server) *Session {
	t.Helper()
	s := &Session{Agent: a, Model: m}
	s.First = a.Start(t, FirstPrompt)
	checkRun(t, "first run", s.First)
	s.N = len(m.Requests())
	s.Resumed = a.Resume(t, ResumePrompt)
	checkRun(t, "resumed run", s.Resumed)
	s.Requests = m.Requests()
	return s
}

func checkRun(t testing.TB, what string, r Result) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("%s: %v after %v\nstdout: %s\nstderr: %s", what, r.Err, r.Took, Tail(r.Stdout, 2000), Tail(r.Stderr, 4000))
	}
}

// Check fails t unless the session was a real one: each tool ran (its
// output is first in the request after its call), the resumed run's
// first request holds the earlier conversation, the resumed run printed
// the model's final text, the agent kept one session id across the
// resume, on every model request (Gemini CLI: in its JSON output), and
// the proxy sink saw no attempt.
func (s *Session) Check(t testing.TB) {
	t.Helper()
	a := s.Agent
	run1, run2 := ModelRequests(s.Requests[:s.N]), ModelRequests(s.Requests[s.N:])
	if len(run1) < 3 || len(run2) < 1 {
		t.Fatalf("model requests: %d in the first run, %d resumed; want at least 3 and 1", len(run1), len(run2))
	}
	for i, says := range []string{ToolSays, NoteSays} {
		holds := func(r fakemodel.Request) bool { return bytes.Contains(r.Body, []byte(says)) }
		if first := slices.IndexFunc(run1, holds); first != i+1 {
			t.Errorf("call %d's output %q is first in request %d of the first run, want %d: the tool did not run", i, says, first, i+1)
		}
	}
	for _, want := range []string{FirstPrompt, "Let me run it.", ToolSays, NoteSays, "The command printed its greeting.", ResumePrompt} {
		if !bytes.Contains(run2[0].Body, []byte(want)) {
			t.Errorf("the resumed run's first request lacks %q of the earlier conversation", want)
		}
	}
	if !bytes.Contains(s.Resumed.Stdout, []byte(FinalText)) {
		t.Errorf("the resumed run's output lacks the model's final text:\n%s", Tail(s.Resumed.Stdout, 2000))
	}
	if _, ok := SessionHeaders[a.Name]; ok {
		ids := map[string]int{}
		for _, r := range append(run1, run2...) {
			ids[a.SessionID(r.Header)]++
		}
		if len(ids) != 1 || ids[" "] > 0 || ids[""] > 0 {
			t.Errorf("session ids across the runs: %v; want one, on every request", ids)
		}
	} else if s1, s2 := outputSession(s.First.Stdout), outputSession(s.Resumed.Stdout); s1 == "" || s1 != s2 {
		t.Errorf("session ids in the output: %q, then %q resumed; want one", s1, s2)
	}
	if got := a.env.Sink.Attempts(); len(got) > 0 {
		t.Errorf("the agent tried to reach, through the proxy: %q", got)
	}
}

// ModelRequests returns rs without those that are no model request.
func ModelRequests(rs []fakemodel.Request) []fakemodel.Request {
	return slices.DeleteFunc(slices.Clone(rs), func(r fakemodel.Request) bool { return r.API == fakemodel.Other })
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

// Report logs what the agent sent: per request its method, path, API,
// size and header names; where the key went.
func (s *Session) Report(t testing.TB) {
	t.Helper()
	a := s.Agent
	t.Logf("%s: first run %v, resumed %v; %d requests then %d", a.Name, s.First.Took.Round(1e6), s.Resumed.Took.Round(1e6), s.N, len(s.Requests)-s.N)
	for i, r := range s.Requests {
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
