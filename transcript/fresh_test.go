package transcript_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/agenttest"
	"github.com/sessionlog/sessionlog/transcript"
	"github.com/sessionlog/sessionlog/verify"
)

// freshCase is what a fresh capture of one agent must import to.
type freshCase struct {
	agent  string
	format transcript.Format
	// system and tools: the header holds them (the source records them).
	system, tools bool
	// requests: the source records its requests, each rebuilt and its
	// digest verified.
	requests bool
	// mapped are the line kinds every line of which must be mapped: the
	// conversation's.
	mapped []string
}

var freshCases = []freshCase{
	{agent: agenttest.Claude, format: transcript.ClaudeCode, system: true, tools: true, requests: true,
		mapped: []string{"api-request", "api-request-shape", "api-request-blob", "assistant"}},
	{agent: agenttest.Codex, format: transcript.Codex, tools: true,
		mapped: []string{"session_meta", "turn_context", "event_msg/task_started", "event_msg/task_complete",
			"response_item/additional_tools", "response_item/message", "response_item/function_call",
			"response_item/function_call_output", "token_usage_record"}},
	{agent: agenttest.Gemini, format: transcript.GeminiCLI, mapped: []string{"user", "gemini"}},
}

// TestFreshTranscripts runs each pinned agent (internal/agenttest:
// Claude Code, Codex, Gemini CLI, as .ci/agents.sh installs them) on the
// scripted session against the scripted model: three runs, three tool
// calls, two resumes. Each agent's own transcript of it, written at test
// time (the repository keeps none), must be detected as its format and
// import with no unknown line, every conversation line mapped, a step
// per model request the agent made with usage on each, three turns,
// three tool calls and their results, the header's system prompt and
// tools where the source records them (Claude Code's requests each
// rebuilt with the digest it recorded), export back byte for byte and
// verify strictly. It logs per line kind what became of the lines.
func TestFreshTranscripts(t *testing.T) {
	for _, c := range freshCases {
		t.Run(c.agent, func(t *testing.T) {
			t.Parallel()
			s, files := agenttest.Capture(t, c.agent)
			switch {
			case len(files) == 1:
				checkFresh(t, c, files[0], len(agenttest.ModelRequests(s.Requests)))
			case c.agent == agenttest.Gemini:
				// A resumed run that begins in another minute than the
				// session's file writes a file of its own (with the history
				// it reloads): each imports whole, the later ones under
				// their own ids, as logtool import names them.
				t.Logf("%s wrote %d files of the session (a resumed run began in another minute): each is checked alone", c.agent, len(files))
				st := openStore(t)
				var first string
				for _, f := range files {
					s := importFile(t, st, c.format, f, transcript.Options{Parent: first})
					if first == "" {
						first = s.Header.ID
					}
					checkWhole(t, st, s, f)
				}
			default:
				t.Fatalf("%s wrote %d transcripts of one session: %q", c.agent, len(files), files)
			}
		})
	}
}

func checkFresh(t *testing.T, c freshCase, path string, requests int) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if f, err := transcript.Detect(data[:min(len(data), 1<<20)]); err != nil || f != c.format {
		t.Errorf("auto reads %s as %q (%v), want %s", filepath.Base(path), f, err, c.format)
	}
	st := openStore(t)
	s := importFile(t, st, c.format, path, transcript.Options{})
	stats := s.Stats()
	kinds := make([]string, 0, len(stats.Kinds))
	for k := range stats.Kinds {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	t.Logf("%s, %d lines: %d mapped, %d kept, %d unknown; %d turns, %d steps, %d prompts, %d calls, %d results; %d requests recorded, %d rebuilt, %d verified",
		c.format, stats.Lines, stats.Mapped, stats.Kept, stats.Unknown, stats.Turns, stats.Steps, stats.Prompts,
		stats.ToolCalls, stats.ToolResults, stats.Requests, stats.Rebuilt, stats.Verified)
	for _, k := range kinds {
		kc := stats.Kinds[k]
		t.Logf("  %-40s mapped %2d  kept %2d  unknown %2d", k, kc.Mapped, kc.Kept, kc.Unknown)
	}
	if stats.Unknown > 0 {
		t.Errorf("%d lines of kinds the importer does not know", stats.Unknown)
	}
	for _, k := range c.mapped {
		kc := stats.Kinds[k]
		if kc == nil || kc.Kept+kc.Unknown > 0 {
			t.Errorf("kind %s: %+v; want every line mapped", k, kc)
		}
	}
	if stats.Steps != requests || stats.Turns != 3 || stats.ToolCalls != 3 || stats.ToolResults != 3 {
		t.Errorf("%d steps, %d turns, %d calls, %d results; want %d (the model requests), 3, 3, 3",
			stats.Steps, stats.Turns, stats.ToolCalls, stats.ToolResults, requests)
	}
	if c.requests && (stats.Requests != requests || stats.Rebuilt != requests || stats.Verified != requests) {
		t.Errorf("requests: %d recorded, %d rebuilt, %d verified; want %d each", stats.Requests, stats.Rebuilt, stats.Verified, requests)
	}
	checkFreshEvents(t, st, s.Header.ID, c)
	checkWhole(t, st, s, path)
}

// checkWhole: the import of path has no unknown line, exports back byte
// for byte and verifies strictly.
func checkWhole(t *testing.T, st *boltlog.Log, s *transcript.Session, path string) {
	ctx := context.Background()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if u := s.Stats().Unknown; u > 0 {
		t.Errorf("%s: %d lines of kinds the importer does not know", filepath.Base(path), u)
	}
	var back bytes.Buffer
	it, err := st.Scan(ctx, s.Header.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if err := transcript.WriteSource(&back, it); err != nil || !bytes.Equal(back.Bytes(), data) {
		t.Errorf("export --format source: %v, %d bytes of %d, equal %v", err, back.Len(), len(data), bytes.Equal(back.Bytes(), data))
	}
	res, err := verify.Session(ctx, st, s.Header.ID, verify.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range res.Findings {
		t.Errorf("verify: %+v", fd)
	}
}

// checkFreshEvents: every step's assistant/message has usage, and the
// last header holds a system prompt and tools where c says the source
// records them.
func checkFreshEvents(t *testing.T, st eventlog.Store, id string, c freshCase) {
	it, err := st.Scan(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var header struct {
		System string            `json:"system"`
		Tools  []json.RawMessage `json:"tools"`
	}
	steps, withUsage := 0, 0
	for {
		ev, err := it.Next()
		if err != nil {
			break
		}
		j, err := ev.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Type string `json:"type"`
			Data struct {
				Usage  json.RawMessage `json:"usage"`
				Header json.RawMessage `json:"header"`
			} `json:"data"`
		}
		if err := json.Unmarshal(j, &e); err != nil {
			t.Fatal(err)
		}
		switch e.Type {
		case "step/start":
			steps++
		case "assistant/message":
			if e.Data.Usage != nil {
				withUsage++
			}
		case "request/header":
			if err := json.Unmarshal(e.Data.Header, &header); err != nil {
				t.Fatal(err)
			}
		}
	}
	if withUsage != steps {
		t.Errorf("%d of %d steps have usage", withUsage, steps)
	}
	if c.system != (header.System != "") || c.tools != (len(header.Tools) > 0) {
		t.Errorf("the header holds a system prompt of %d bytes and %d tools; want a system prompt %v, tools %v",
			len(header.System), len(header.Tools), c.system, c.tools)
	}
	t.Logf("header: system prompt %d bytes, %d tools", len(header.System), len(header.Tools))
}
