package fuzz

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/transcript"
)

// FuzzCodex imports fuzz bytes as a Codex rollout; see checkTranscript.
func FuzzCodex(f *testing.F) {
	addTranscriptSeeds(f, "codex", codexSeeds)
	f.Fuzz(func(t *testing.T, data []byte) { checkTranscript(t, transcript.Codex, data) })
}

// FuzzClaudeCode imports fuzz bytes as a Claude Code transcript; see
// checkTranscript.
func FuzzClaudeCode(f *testing.F) {
	addTranscriptSeeds(f, "claude-code", claudeSeeds)
	f.Fuzz(func(t *testing.T, data []byte) { checkTranscript(t, transcript.ClaudeCode, data) })
}

// checkTranscript imports data as format f. Properties:
//
//  1. Nothing panics; Open and Next fail only with a classified error
//     (a line over the limit, a file that records no session id).
//  2. Every event the import yields folds through rebuild's validator: a
//     transcript that imports is a log the store accepts (docs/transcripts.md).
//  3. The source lines write the input back byte for byte.
//  4. The counts add up: every line is mapped, kept or unknown.
func checkTranscript(t *testing.T, f transcript.Format, data []byte) {
	s, err := transcript.Open(bytes.NewReader(data), int64(len(data)), f,
		transcript.Options{Name: "fuzz.jsonl", Limits: codec.Limits{MaxLine: 1 << 16, MaxDepth: 64}})
	if err != nil {
		if !errors.Is(err, codec.ErrInvalid) {
			t.Fatalf("unclassified refusal: %v", err)
		}
		return
	}
	fold := rebuild.NewFold(false)
	var lines bytes.Buffer
	for {
		ev, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("import failed: %v", err)
		}
		if ev, err = codec.DecodeEvent(ev.Raw); err != nil {
			t.Fatalf("event does not decode: %v", err)
		}
		if err := fold.Add(&ev); err != nil {
			j, _ := ev.AppendJSON(nil)
			t.Fatalf("seq %d does not fold: %v\n%s", ev.Seq, err, j)
		}
		if err := codec.ValidateValue(ev.Raw); err != nil {
			t.Fatalf("seq %d is not storable: %v", ev.Seq, err)
		}
		if l, ok, err := transcript.SourceLine(&ev); ok {
			if err != nil {
				t.Fatal(err)
			}
			lines.Write(l.Text)
			if l.Newline {
				lines.WriteByte('\n')
			}
		}
	}
	if !bytes.Equal(lines.Bytes(), data) {
		t.Fatalf("source lines differ from the input:\n%q\nwant\n%q", lines.Bytes(), data)
	}
	st := s.Stats()
	if st.Mapped+st.Kept+st.Unknown != st.Lines {
		t.Fatalf("%d lines, but %d mapped + %d kept + %d unknown", st.Lines, st.Mapped, st.Kept, st.Unknown)
	}
}

// addTranscriptSeeds adds the seeds, and the shared corpus files of the
// format when ../shared is beside the checkout (they are not copied).
func addTranscriptSeeds(f *testing.F, dir string, seeds []string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	paths, _ := filepath.Glob(filepath.Join("..", "..", "shared", "testdata", "transcripts", dir, "*.jsonl"))
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
}

var codexSeeds = []string{
	"",
	"\n",
	"not json\n{\"type\":\"x\"}",
	`{"timestamp":"2025-01-02T03:04:05.000Z","type":"session_meta","payload":{"id":"s","cwd":"/w","base_instructions":{"text":"sys"}}}
{"timestamp":"2025-01-02T03:04:05.000Z","type":"turn_context","payload":{"model":"m"}}
{"timestamp":"2025-01-02T03:04:05.000Z","type":"event_msg","payload":{"type":"task_started"}}
{"timestamp":"x","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}
{"type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"r"}],"encrypted_content":"E"}}
{"type":"response_item","payload":{"type":"function_call","call_id":"c","name":"n","arguments":"{}"}}
{"type":"response_item","payload":{"type":"custom_tool_call","call_id":"d","name":"n","input":"raw"}}
{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":5},"last_token_usage":{"input_tokens":5,"cached_input_tokens":9,"output_tokens":1}}}}
{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"o"},{"type":"input_image","image_url":"u"}]}}
{"type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"d","output":{"type":"text","text":5}}}
{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a"},{"type":"tool-call"}]}}
{"type":"compacted","payload":{"message":"sum"}}
{"type":"event_msg","payload":{"type":"turn_aborted","reason":"x"}}
{"type":"compacted","payload":{"message":"again"}}
{"type":"response_item","payload":{"type":"message","role":"developer","content":"s"}}
{"type":"event_msg","payload":{"type":"task_complete"}}
{"type":"response_item","payload":{"type":"mess`,
	"\xff\xfe{\"a\":1}\r\n{\"type\":\"session_meta\",\"payload\":{\"id\":\"\\ud800\"}}\r\n",
}

var claudeSeeds = []string{
	"",
	`{"type":"user","uuid":"u","parentUuid":"u","sessionId":"s","message":{"role":"user","content":"hi"}}
{"type":"assistant","uuid":"a","parentUuid":"u","message":{"id":"m","model":"x","content":[{"type":"thinking","thinking":"t","signature":"S"},{"type":"tool_use","id":"t1","name":"n","input":{"a":[1]}},{"type":"tool_use","id":"t1","name":"n","input":1}],"usage":{"input_tokens":1,"output_tokens":2}}}
{"type":"assistant","uuid":"a2","parentUuid":"a","message":{"id":"m","content":[{"type":"tool_use","id":"t2","name":"n","input":null},{"type":"image","source":{}}]}}
{"type":"user","uuid":"r","parentUuid":"a2","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"o"}],"is_error":true},{"type":"text","text":"extra"}]}}
{"type":"system","subtype":"compact_boundary","uuid":"b","parentUuid":null,"logicalParentUuid":"r","compactMetadata":{"preTokens":-4}}
{"type":"user","uuid":"c","parentUuid":"b","isCompactSummary":true,"message":{"content":"sum"}}
{"type":"system","subtype":"compact_boundary","uuid":"b2","parentUuid":"c"}
{"type":"user","uuid":"z","parentUuid":"b2","isSidechain":true,"message":{"content":"side"}}
{"type":"last-prompt","leafUuid":"nope"}
{"type":"assistant","uuid":"q","parentUuid":"b2","message":{"content":"plain"}}`,
	`{"type":"user","uuid":"u","isSidechain":true,"sessionId":"agent-1","message":{"content":[{"type":"tool_result","tool_use_id":"x"}]}}` + "\n",
}
