package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/agenttest"
	"github.com/sessionlog/sessionlog/transcript"
)

// faithful is what a comparison of an agent's transcript with the
// gateway's record (logtool compare) must find: the transcript's own
// account of what the model saw, measured against the bytes it received.
type faithful struct {
	// altered, missing and extra bound the messages that differ.
	altered, missing, extra int
	// system is how the system prompt compares in every step (a
	// audit.Part* value), tools likewise.
	system, tools string
}

// faithfulness is, per agent the gateway records, what its transcript
// holds of what the model saw (Claude Code 2.1.328, Codex 0.169.0):
//
//   - Claude Code records every request (api-request): the messages
//     compare identical, the tools too; its system prompt lacks the
//     first block the model received (the billing header,
//     "x-anthropic-billing-header: cc_version=…; cc_entrypoint=…").
//   - Codex records every input item (its response_item lines): the
//     messages compare identical, the tools (its additional_tools item)
//     too; the requests carry no system prompt (the base instructions are
//     a developer message), nor does the header it maps: identical.
var faithfulness = map[string]faithful{
	agenttest.Claude: {system: audit.PartAltered, tools: audit.PartIdentical},
	agenttest.Codex:  {system: audit.PartIdentical, tools: audit.PartIdentical},
}

// compareTranscripts imports each recorded agent's own transcripts into
// the store beside the sessions the gateway recorded, and compares each
// with the gateway's session of the same agent session id (its main
// lane), as logtool compare does: step for step, message for message.
func compareTranscripts(t *testing.T, st eventlog.Store, runs []*agentRun) {
	t.Helper()
	ctx := context.Background()
	heads, err := st.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		want, ok := faithfulness[r.name]
		if !ok {
			continue // not an API the gateway maps
		}
		for name, data := range r.transcripts {
			f, err := transcript.Detect(data)
			if err != nil {
				t.Fatalf("%s %s: %v", r.name, name, err)
			}
			s, err := transcript.Open(bytes.NewReader(data), int64(len(data)), f, transcript.Options{Name: name})
			if err != nil {
				t.Fatalf("%s %s: %v", r.name, name, err)
			}
			if _, err := st.Import(ctx, s.Header, s); err != nil {
				t.Fatalf("%s %s: import: %v", r.name, name, err)
			}
			var wire *eventlog.Head
			for i, h := range heads {
				line, err := h.Header.AppendJSON(nil)
				if err != nil {
					t.Fatal(err)
				}
				var hdr gatewayHeader
				if err := json.Unmarshal(line, &hdr); err != nil {
					t.Fatal(err)
				}
				if hdr.Gateway.AgentSession == s.Header.ID && hdr.ParentSession == "" {
					wire = &heads[i]
				}
			}
			if wire == nil {
				t.Errorf("%s: no recorded session of agent session %s", r.name, s.Header.ID)
				continue
			}
			tr, err := st.Head(ctx, s.Header.ID)
			if err != nil {
				t.Fatal(err)
			}
			c, err := audit.CompareTranscript(ctx, st.(audit.Store), tr, *wire)
			if err != nil {
				t.Fatalf("%s: compare: %v", r.name, err)
			}
			t.Logf("%s: logtool compare %s %s\n%s", r.name, c.Transcript, c.Wire, c.AppendText(nil))
			tot := c.Totals
			if tot.Paired != tot.StepsWire || tot.Paired != tot.StepsTranscript || tot.Paired == 0 {
				t.Errorf("%s: %d steps in the transcript, %d recorded, %d paired", r.name, tot.StepsTranscript, tot.StepsWire, tot.Paired)
			}
			if tot.Altered > want.altered || tot.Missing > want.missing || tot.Extra > want.extra || tot.ModelsAltered > 0 {
				t.Errorf("%s: %d messages altered, %d missing, %d extra, %d models differ; want at most %d, %d, %d, 0",
					r.name, tot.Altered, tot.Missing, tot.Extra, tot.ModelsAltered, want.altered, want.missing, want.extra)
			}
			for _, p := range c.Pairs {
				if p.System != want.system || p.Tools != want.tools {
					t.Errorf("%s step %s: system %s, tools %s (%s); want %s, %s", r.name, p.Wire, p.System, p.Tools, p.ToolsDetail, want.system, want.tools)
				}
			}
		}
	}
}
