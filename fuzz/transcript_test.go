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

// FuzzGeminiCLI imports fuzz bytes as a Gemini CLI session; see
// checkTranscript.
func FuzzGeminiCLI(f *testing.F) {
	addTranscriptSeeds(f, "gemini-cli", geminiSeeds)
	f.Fuzz(func(t *testing.T, data []byte) { checkTranscript(t, transcript.GeminiCLI, data) })
}

// FuzzDetect tells the formats of fuzz bytes apart: it never panics, and
// refuses only with ErrFormat (also codec.ErrInvalid).
func FuzzDetect(f *testing.F) {
	for _, seeds := range [][]string{codexSeeds, claudeSeeds, geminiSeeds} {
		for _, s := range seeds {
			f.Add([]byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := transcript.Detect(data); err != nil && (!errors.Is(err, transcript.ErrFormat) || !errors.Is(err, codec.ErrInvalid)) {
			t.Fatalf("unclassified refusal: %v", err)
		}
	})
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
{"type":"response_item","payload":{"type":"additional_tools","tools":[{"type":"function","name":"f"},{"name":5}]}}
{"type":"token_usage_record","payload":{"usage":{"input_tokens":4,"output_tokens":1},"thread_token_usage":{"input_tokens":4}}}
{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":4},"last_token_usage":{"input_tokens":4,"output_tokens":1}}}}
{"type":"response_item","payload":{"type":"local_shell_call","id":"l","action":{"type":"exec","command":["ls"]}}}
{"type":"response_item","payload":{"type":"local_shell_call_output","call_id":"l","output":"o"}}
{"type":"response_item","payload":{"type":"web_search_call","id":"w","action":{}}}
{"type":"event_msg","payload":{"type":"mcp_tool_call_end","call_id":"m","invocation":{"server":"s","tool":"t","arguments":[]},"result":{"Ok":{"content":[{"type":"image"}]}}}}
{"type":"event_msg","payload":{"type":"user_message","message":"only events"}}
{"type":"event_msg","payload":{"type":"agent_reasoning","text":"r"}}
{"type":"event_msg","payload":{"type":"agent_message","message":"a"}}
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
	// Claude Code 2.1.328: requests recorded in the delta form (the
	// hashes and digests are right), a blob, a shape.
	`{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"c-9","cwd":"/w","timestamp":"2025-01-02T03:04:05.000Z","message":{"role":"user","content":"list"}}
{"type":"api-request-shape","sessionId":"c-9","shapeHash":"2a68da18e90fc23ddedce28353cb9afa73a92bd09c7742e95750f875fd4faa5e","timestamp":"2025-01-02T03:04:05.000Z","shape":{"system":[{"type":"text","text":"You are Claude."}],"tools":[{"name":"Bash","description":"Run","input_schema":{"type":"object"}}]}}
{"type":"api-request-blob","sessionId":"c-9","hash":"94b361219f901b4895aadbe797af78950e53067f0769211e0cf88c679f120584","message":{"role":"user","content":[{"type":"text","text":"<reminder>"},{"type":"text","text":"list"}]}}
{"type":"api-request","sessionId":"c-9","id":"r1","timestamp":"2025-01-02T03:04:06.000Z","shapeHash":"2a68da18e90fc23ddedce28353cb9afa73a92bd09c7742e95750f875fd4faa5e","params":{"model":"claude-x","betas":["b1"],"max_tokens":1000,"thinking":{"type":"adaptive"}},"keep":0,"tail":["94b361219f901b4895aadbe797af78950e53067f0769211e0cf88c679f120584"],"cacheControl":[{"path":["system",0],"value":{"type":"ephemeral"}},{"path":["messages",0,"content",1],"value":{"type":"ephemeral"}}],"requestDigest":"1fa81d900f8160719eea67b9c37664ea806ca6db7a4ea5ada1b186abc5d67094"}
{"type":"tools-used","tools":["Bash"],"sessionId":"c-9"}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"c-9","timestamp":"2025-01-02T03:04:06.000Z","requestRef":"r1","message":{"id":"m1","type":"message","role":"assistant","model":"claude-x","content":[{"type":"tool_use","id":"tu1","name":"Bash","input":{"command":"ls"}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"cache_read_input_tokens":5,"cache_creation_input_tokens":0,"output_tokens":3}}}
{"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"c-9","timestamp":"2025-01-02T03:04:07.000Z","message":{"role":"user","content":[{"tool_use_id":"tu1","type":"tool_result","content":"a.go","is_error":false}]}}
{"type":"api-request","sessionId":"c-9","id":"r2","timestamp":"2025-01-02T03:04:07.000Z","shapeHash":"2a68da18e90fc23ddedce28353cb9afa73a92bd09c7742e95750f875fd4faa5e","params":{"model":"claude-x","betas":["b1"],"max_tokens":1000,"thinking":{"type":"adaptive"}},"base":"r1","keep":1,"tail":["13eb0d9bbe1567e5e82bfc12cec82a521e1cfdc33379d58d92336f27665a1acd","5007c9d063596c2ab5e5b0d054461a162fdff43eb9d7a131ad8180264825703b"],"cacheControl":[{"path":["system",0],"value":{"type":"ephemeral"}},{"path":["messages",2,"content",0],"value":{"type":"ephemeral"}}],"requestDigest":"4a56111c48de09f9b8f7aba664dabba8cba240558864bdbf92869deb5e5c6882"}
{"type":"assistant","uuid":"a2","parentUuid":"u2","sessionId":"c-9","timestamp":"2025-01-02T03:04:08.000Z","requestRef":"r2","message":{"id":"m2","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"One file."}],"stop_reason":"end_turn","usage":{"input_tokens":20,"output_tokens":4}}}
{"type":"cost-state","sessionId":"c-9","totalCostUSD":0.01}
`,
}

var geminiSeeds = []string{
	"",
	`{"sessionId":"g","projectHash":"h","startTime":"2026-01-02T03:04:05.000Z","kind":"main"}
{"$set":{"messages":[{"id":"ctx","type":"user","content":[{"text":"ctx"}]}]}}
{"id":"u1","timestamp":"2026-01-02T03:04:06.000Z","type":"user","content":[{"text":"list"}]}
{"id":"g1","timestamp":"x","type":"gemini","content":"look","thoughts":[{"subject":"s","description":"d"}],"tokens":{"input":10,"output":2,"cached":20,"thoughts":1},"model":"m"}
{"id":"g1","type":"gemini","content":[{"text":"look"},{"functionCall":{"id":"c1","name":"ls","args":{"a":1}}}],"toolCalls":[{"id":"c1","name":"ls","args":{},"result":[{"functionResponse":{"id":"c1","response":{"error":"e"}}}]}]}
{"id":"u2","type":"user","content":[{"functionResponse":{"id":"c1","name":"ls","response":{"output":"a"}}},{"inlineData":{}}]}
{"id":"u3","type":"user","content":"plain"}
{"$set":{"messages":[{"id":"g1_response","type":"user","content":[{"functionResponse":{"id":"c1"}}]},{"id":"new","type":"gemini","content":"x"}]}}
{"id":"i","type":"info","content":"i"}
{"id":"g2","type":"gemini","content":5,"model":"m2"}`,
}
