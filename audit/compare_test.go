package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/transcript"
)

// TestCompareTranscript compares two sessions step by step (logtool
// compare): the "wire" session of three Anthropic requests as the
// gateway maps them, and a "transcript" whose second request has an
// answer altered, a message the wire lacks, none of the tools and a
// different system prompt, and which has a fourth step the wire lacks.
// The diffs come by the wire's message index, the header parts as they
// compare, and the totals add up; text and JSON say the same.
func TestCompareTranscript(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	w := anthropicSession()[:3]
	wire := recordedSession(t, st, "gw-w", "", true, w...)
	tr := anthropicSession()[:4]
	// Step 2's request: the first answer altered, a message inserted
	// before the last prompt; no tools; another system prompt.
	tr[1].body = anthropicBody(`[]`, `"You are someone else."`, userText("hello", false), assistantText("HELLO"),
		userText("an aside", false), assistantText("noted"), userText("again", true))
	trHead := recordedSession(t, st, "gw-t", "", true, tr...)
	c, err := audit.CompareTranscript(ctx, st, trHead, wire)
	if err != nil {
		t.Fatal(err)
	}
	tot := c.Totals
	if tot.StepsTranscript != 4 || tot.StepsWire != 3 || tot.Paired != 3 {
		t.Fatalf("steps %d, %d, paired %d; want 4, 3, 3", tot.StepsTranscript, tot.StepsWire, tot.Paired)
	}
	p := c.Pairs[1]
	if len(p.Diffs) != 3 {
		t.Fatalf("step 2: diffs %+v; want 3", p.Diffs)
	}
	want := []struct {
		kind             string
		wire, transcript int
		path, wireSubstr string
		transcriptSubstr string
	}{
		{audit.MessageAltered, 1, 1, "content[0].text", `"hi"`, `"HELLO"`},
		{audit.MessageExtra, -1, 2, "", "", "an aside"},
		{audit.MessageExtra, -1, 3, "", "", "noted"},
	}
	for i, d := range p.Diffs {
		x := want[i]
		if d.Kind != x.kind || d.Wire != x.wire || d.Transcript != x.transcript || !strings.HasSuffix(d.Path, x.path) ||
			!bytes.Contains(d.WireJSON, []byte(x.wireSubstr)) || !bytes.Contains(d.TranscriptJSON, []byte(x.transcriptSubstr)) {
			t.Errorf("step 2 diff %d: %+v (wire %s, transcript %s); want %+v", i, d, d.WireJSON, d.TranscriptJSON, x)
		}
	}
	if p.System != audit.PartAltered || p.SystemOffset != len("You are ") || p.Tools != audit.PartNotRecorded {
		t.Errorf("step 2: system %s at %d, tools %s; want altered at %d, not recorded", p.System, p.SystemOffset, p.Tools, len("You are "))
	}
	if q := c.Pairs[0]; len(q.Diffs) != 0 || q.System != audit.PartIdentical || q.Tools != audit.PartIdentical {
		t.Errorf("step 1: %+v; want identical", q)
	}
	if q := c.Pairs[3]; q.Wire != (audit.Ref{}) || q.MessagesTranscript == 0 {
		t.Errorf("step 4: %+v; want only in the transcript", q)
	}
	// Step 3: the wire's answer "hi" the transcript keeps as "hi" (only
	// its request 2 had "HELLO"): identical messages.
	if tot.Altered != 1 || tot.Extra != 2 || tot.Missing != 0 || tot.SystemAltered != 1 || tot.ToolsCompared != 2 {
		t.Errorf("totals %+v", tot)
	}
	text := string(c.AppendText(nil))
	for _, s := range []string{
		"compare gw-t (imported transcript) with gw-w (recorded)",
		"steps: 4 in the transcript, 3 recorded, 3 paired",
		" | 2.1: messages 5 | 3; system altered (from byte 8); tools not recorded",
		"  [1] altered at ",
		"  [t2] extra: not in the wire's request",
		" | -: only in the transcript (7 messages)",
		"messages: ",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("text lacks %q:\n%s", s, text)
		}
	}
	var js struct {
		Transcript, Wire string
		Totals           map[string]int
		Steps            []struct {
			Transcript, Wire *string
			Messages         []int
			Diffs            []struct {
				Kind                           string
				Wire, Transcript               int
				WireMessage, TranscriptMessage json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(c.AppendJSON(nil), &js); err != nil {
		t.Fatalf("--json: %v\n%s", err, c.AppendJSON(nil))
	}
	if js.Totals["altered"] != 1 || js.Totals["extra"] != 2 || len(js.Steps) != 4 || js.Steps[3].Wire != nil ||
		len(js.Steps[1].Diffs) != 3 || js.Steps[1].Diffs[1].WireMessage != nil || js.Steps[1].Diffs[1].Wire != -1 {
		t.Errorf("--json: %+v", js)
	}
}

// TestAlign checks how compare pairs two requests' messages: equal ones
// by a longest common subsequence, the unmatched between two matches by
// position (altered), the rest missing (wire only) or extra (transcript
// only).
func TestAlign(t *testing.T) {
	for _, c := range []struct {
		name, transcript, wire string
		want                   string // per op: = same, ~ altered, - missing, + extra
	}{
		{"identical", "abc", "abc", "==="},
		{"appended on the wire", "ab", "abcd", "==--"},
		{"extra in the transcript", "abXc", "abc", "==+="},
		{"altered", "aXc", "abc", "=~="},
		{"altered and missing", "aXd", "abcd", "=~-="},
		{"moved", "bac", "abc", "+=-="},
		{"all different", "xy", "abc", "~~-"},
		{"empty transcript", "", "ab", "--"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			for _, op := range audit.AlignForTest(c.transcript, c.wire) {
				switch {
				case op[0] >= 0 && op[1] >= 0 && c.transcript[op[0]] == c.wire[op[1]]:
					b.WriteByte('=')
				case op[0] >= 0 && op[1] >= 0:
					b.WriteByte('~')
				case op[1] >= 0:
					b.WriteByte('-')
				default:
					b.WriteByte('+')
				}
			}
			if b.String() != c.want {
				t.Errorf("align(%q, %q) = %s, want %s", c.transcript, c.wire, b.String(), c.want)
			}
		})
	}
}

// TestSessionProvenance checks how a session imported from a transcript
// is recognised (its first event is a source/line), what the note says
// the transcript does not record (here a Codex rollout with tools: the
// request's other fields), and that it points to the session the
// gateway recorded of the same agent session; a session that was not
// imported has no note.
func TestSessionProvenance(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	rollout := `{"timestamp":"2026-01-02T03:04:05.000Z","type":"session_meta","payload":{"id":"cx-1","timestamp":"2026-01-02T03:04:05.000Z"}}
{"timestamp":"2026-01-02T03:04:05.100Z","type":"turn_context","payload":{"model":"gpt-6"}}
{"timestamp":"2026-01-02T03:04:05.200Z","type":"response_item","payload":{"type":"additional_tools","tools":[{"type":"function","name":"exec","parameters":{}}]}}
{"timestamp":"2026-01-02T03:04:05.300Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}
{"timestamp":"2026-01-02T03:04:05.400Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello"}]}}
`
	s, err := transcript.Open(strings.NewReader(rollout), int64(len(rollout)), transcript.Codex, transcript.Options{Name: "r.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Import(ctx, s.Header, s); err != nil {
		t.Fatal(err)
	}
	// The gateway's session of the same agent session, and a lane of it.
	for _, id := range []string{"gw-main", "gw-lane"} {
		var gw, o codec.Object
		gw.Str("upstream", "test").Str("agentSession", "cx-1").Str("from", "session-id")
		o.Str("type", "session").Int("version", 0).Str("id", id).Number("createdAt", 1)
		if id == "gw-lane" {
			o.Str("parentSession", "gw-main")
		}
		o.Value("gateway", gw.Bytes())
		h, err := codec.DecodeSessionHeader(o.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		var empty codec.Object
		ev, err := codec.NewEvent("test/note", 0, 1, empty.Bytes(), codec.SurfaceOp{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		src := events{ev}
		if _, err := st.Import(ctx, h, &src); err != nil {
			t.Fatal(err)
		}
	}
	p, err := audit.SessionProvenance(ctx, st, head(t, st, "cx-1"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Format != "codex" || len(p.Recorded) != 2 || p.Recorded[0] != "gw-main" || p.Recorded[1] != "gw-lane" {
		t.Errorf("provenance %+v", p)
	}
	note := p.Note()
	for _, s := range []string{"reconstructed from the codex transcript", "client_metadata", "recorded this session as gw-main, gw-lane",
		"'replay gw-main --wire --recorded'"} {
		if !strings.Contains(note, s) {
			t.Errorf("note lacks %q: %s", s, note)
		}
	}
	if strings.Contains(note, "the tools") {
		t.Errorf("the note says the tools are not recorded; the rollout records them: %s", note)
	}
	if q, err := audit.SessionProvenance(ctx, st, head(t, st, "gw-main")); err != nil || q.Imported() || q.Note() != "" {
		t.Errorf("a recorded session: %+v, %v", q, err)
	}
}
