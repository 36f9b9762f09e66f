package agenttest

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/internal/fakemodel"
)

// The scripted session's prompts, the words its tool calls print, and the
// model's texts.
const (
	FirstPrompt  = "Please run the greeting command in this directory"
	ResumePrompt = "What did the command print"
	LastPrompt   = "Is there anything else to do"
	ToolSays     = "agenttest-ran"   // the first call's output; not in any prompt or call
	AgainSays    = "agenttest-again" // the resumed run's call's output, likewise
	NoteSays     = "the note in the working directory"
	ResumedText  = "It printed its greeting twice."
	FinalText    = "Resumed, and all done."

	toolCommand  = "printf '%s%s' agenttest- ran"
	againCommand = "printf '%s%s' agenttest- again"
	noteCommand  = "cat note.txt" // note.txt holds NoteSays
)

// Script returns the scripted model of the session every agent test
// runs. In the first run the model calls a's shell tool twice, one call
// a step, then answers; resumed, it calls the tool once more and
// answers ResumedText; from then on (the second resume) it answers
// FinalText. It writes note.txt, which the second call reads, into the
// working directory.
func Script(t testing.TB, a *Agent) *fakemodel.Server {
	t.Helper()
	writeFile(t, filepath.Join(a.env.Work, "note.txt"), NoteSays+"\n")
	return fakemodel.New(FinalText,
		fakemodel.Reply{Text: "Let me run it.", Calls: []fakemodel.Call{a.Shell(toolCommand)}},
		fakemodel.Reply{Calls: []fakemodel.Call{a.Shell(noteCommand)}},
		fakemodel.Reply{Text: "The command printed its greeting."},
		fakemodel.Reply{Text: "Let me run it again.", Calls: []fakemodel.Call{a.Shell(againCommand)}},
		fakemodel.Reply{Text: ResumedText})
}

// The runs of the scripted session, by index into Session.Runs.
const (
	RunFirst   = iota // on FirstPrompt: two tool calls
	RunResumed        // resumed on ResumePrompt: one tool call
	RunLast           // resumed again on LastPrompt: text only
	runs
)

// Session is one run of the scripted session.
type Session struct {
	Agent *Agent
	// Model is the scripted model the agent's base URL reaches (directly
	// or through a gateway).
	Model *fakemodel.Server
	// Runs are the three runs' results (RunFirst, RunResumed, RunLast).
	Runs []Result
	// Requests are those Model received, in order; Starts[i] is the
	// index of run i's first.
	Requests []fakemodel.Request
	Starts   []int
}

// RunSession runs the scripted session: a on FirstPrompt, resumed on
// ResumePrompt, resumed again on LastPrompt, failing t when a run fails.
// m (made by Script) must be what a's base URL reaches.
func RunSession(t testing.TB, a *Agent, m *fakemodel.Server) *Session {
	t.Helper()
	s := &Session{Agent: a, Model: m}
	for i, prompt := range []string{FirstPrompt, ResumePrompt, LastPrompt} {
		s.Starts = append(s.Starts, len(m.Requests()))
		var r Result
		if i == RunFirst {
			r = a.Start(t, prompt)
		} else {
			r = a.Resume(t, prompt)
		}
		checkRun(t, []string{"first run", "resumed run", "second resumed run"}[i], r)
		s.Runs = append(s.Runs, r)
	}
	s.Requests = m.Requests()
	return s
}

func checkRun(t testing.TB, what string, r Result) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("%s: %v after %v\nstdout: %s\nstderr: %s", what, r.Err, r.Took, Tail(r.Stdout, 2000), Tail(r.Stderr, 4000))
	}
}

// Run returns the model requests of run i.
func (s *Session) Run(i int) []fakemodel.Request {
	end := len(s.Requests)
	if i+1 < len(s.Starts) {
		end = s.Starts[i+1]
	}
	return ModelRequests(s.Requests[s.Starts[i]:end])
}

// Check fails t unless the session was a real one: each tool ran (its
// output is first in the request after its call), each resumed run's
// first request holds the earlier conversation, the runs printed the
// model's texts, the agent kept one session id across the resumes, on
// every model request (Gemini CLI: in its JSON output), and the proxy
// sink saw no attempt.
func (s *Session) Check(t testing.TB) {
	t.Helper()
	a := s.Agent
	run1, run2, run3 := s.Run(RunFirst), s.Run(RunResumed), s.Run(RunLast)
	if len(run1) < 3 || len(run2) < 2 || len(run3) < 1 {
		t.Fatalf("model requests: %d in the first run, %d and %d resumed; want at least 3, 2 and 1", len(run1), len(run2), len(run3))
	}
	firstHolding := func(rs []fakemodel.Request, says string) int {
		return slices.IndexFunc(rs, func(r fakemodel.Request) bool { return bytes.Contains(r.Body, []byte(says)) })
	}
	for i, says := range []string{ToolSays, NoteSays} {
		if first := firstHolding(run1, says); first != i+1 {
			t.Errorf("call %d's output %q is first in request %d of the first run, want %d: the tool did not run", i, says, first, i+1)
		}
	}
	if first := firstHolding(run2, AgainSays); first != 1 {
		t.Errorf("the resumed call's output %q is first in request %d of the resumed run, want 1: the tool did not run", AgainSays, first)
	}
	for _, want := range []string{FirstPrompt, "Let me run it.", ToolSays, NoteSays, "The command printed its greeting.", ResumePrompt} {
		if !bytes.Contains(run2[0].Body, []byte(want)) {
			t.Errorf("the resumed run's first request lacks %q of the earlier conversation", want)
		}
	}
	for _, want := range []string{FirstPrompt, ToolSays, ResumePrompt, AgainSays, ResumedText, LastPrompt} {
		if !bytes.Contains(run3[0].Body, []byte(want)) {
			t.Errorf("the second resumed run's first request lacks %q of the earlier conversation", want)
		}
	}
	for i, want := range []string{RunResumed: ResumedText, RunLast: FinalText} {
		if want != "" && !bytes.Contains(s.Runs[i].Stdout, []byte(want)) {
			t.Errorf("run %d's output lacks the model's text %q:\n%s", i, want, Tail(s.Runs[i].Stdout, 2000))
		}
	}
	if _, ok := SessionHeaders[a.Name]; ok {
		ids := map[string]int{}
		for _, r := range ModelRequests(s.Requests) {
			ids[a.SessionID(r.Header)]++
		}
		if len(ids) != 1 || ids[" "] > 0 || ids[""] > 0 {
			t.Errorf("session ids across the runs: %v; want one, on every request", ids)
		}
	} else {
		first := outputSession(s.Runs[RunFirst].Stdout)
		for i, r := range s.Runs {
			if id := outputSession(r.Stdout); first == "" || id != first {
				t.Errorf("session id in run %d's output: %q, the first run's %q; want one", i, id, first)
			}
		}
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
	var took []string
	for i, r := range s.Runs {
		end := len(s.Requests)
		if i+1 < len(s.Starts) {
			end = s.Starts[i+1]
		}
		took = append(took, r.Took.Round(1e6).String()+" ("+strconv.Itoa(end-s.Starts[i])+" requests)")
	}
	t.Logf("%s: runs %s", a.Name, strings.Join(took, ", "))
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
