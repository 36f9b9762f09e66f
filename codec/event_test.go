package codec_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
)

const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestParseEventTypes decodes every event type of docs/format.md#event-types from a JSON
// line — typical, with unknown keys, and without optional keys — and checks
// the typed view and that export reproduces the line.
func TestParseEventTypes(t *testing.T) {
	tests := []struct {
		name string
		line string
		want string // describeEvent
		bug  string // a known codec bug: the case is skipped with this reason
	}{
		{
			name: "turn/start",
			line: `{"type":"turn/start","seq":0,"time":1783352209707,"data":{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}}`,
			want: `turn/start seq=0 time=1783352209707 TurnStart{turn=1}`,
		},
		{
			name: "turn/start minimal",
			line: `{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}`,
			want: `turn/start seq=0 time=0 TurnStart{turn=1}`,
		},
		{
			name: "turn/start unknown keys",
			line: `{"type":"turn/start","seq":0,"time":0,"data":{"x":{"b":1,"a":[null]},"turn":2,"y":"z"}}`,
			want: `turn/start seq=0 time=0 TurnStart{turn=2}`,
		},
		{
			name: "turn/end completed",
			line: `{"type":"turn/end","seq":9,"time":5,"data":{"turn":1,"reason":{"kind":"completed"}}}`,
			want: `turn/end seq=9 time=5 TurnEnd{turn=1 reason="completed"}`,
		},
		{
			name: "turn/end error",
			line: `{"type":"turn/end","seq":9,"time":5,"data":{"turn":1,"reason":{"kind":"error","step":1,"message":"boom","code":"E_X"}}}`,
			want: `turn/end seq=9 time=5 TurnEnd{turn=1 reason="error"}`,
		},
		{
			name: "turn/end unknown reason kind",
			line: `{"type":"turn/end","seq":9,"time":5,"data":{"reason":{"extra":1,"kind":"meteor"},"turn":1}}`,
			want: `turn/end seq=9 time=5 TurnEnd{turn=1 reason="meteor"}`,
		},
		{
			name: "step/start",
			line: `{"type":"step/start","seq":2,"time":0,"data":{"turn":1,"step":1}}`,
			want: `step/start seq=2 time=0 StepStart{turn=1 step=1}`,
		},
		{
			name: "step/end unknown key",
			line: `{"type":"step/end","seq":2,"time":0,"data":{"step":3,"turn":1,"note":"n"}}`,
			want: `step/end seq=2 time=0 StepEnd{turn=1 step=3}`,
		},
		{
			name: "user/message",
			line: "{\"type\":\"user/message\",\"seq\":1,\"time\":0,\"data\":{\"content\":[{\"type\":\"text\",\"text\":\"hi <there> & \u2028\"}],\"source\":{\"kind\":\"user\"}},\"surfaceOp\":\"append\"}",
			want: "user/message seq=1 time=0 op=append UserMessage{source=user content=[text(\"hi <there> & \\u2028\")]}",
		},
		{
			name: "user/message plugin source and unknown keys",
			line: `{"type":"user/message","seq":3,"time":0,"data":{"meta":{"z":1},"content":[{"type":"text","text":"a","cache":true},{"type":"image","mime":"image/png","data":"AAAA"}],"source":{"kind":"plugin","plugin":"p1","x":2}},"surfaceOp":"append","sourceEventSeqs":[0,2]}`,
			want: `user/message seq=3 time=0 op=append sources=[0 2] UserMessage{source=plugin:p1 content=[text("a") opaque{"type":"image","mime":"image/png","data":"AAAA"}]}`,
		},
		{
			name: "user/message empty content",
			line: `{"type":"user/message","seq":1,"time":0,"data":{"content":[],"source":{"kind":"user"}},"surfaceOp":"append"}`,
			want: `user/message seq=1 time=0 op=append UserMessage{source=user content=[]}`,
		},
		{
			name: "prompt/blocked",
			line: `{"type":"prompt/blocked","seq":3,"time":0,"data":{"content":[{"type":"text","text":"rm -rf"}],"source":{"kind":"user"},"reason":"blocked by policy hook"}}`,
			want: `prompt/blocked seq=3 time=0 PromptBlocked{source=user content=[text("rm -rf")]}`,
		},
		{
			name: "context/message",
			line: `{"type":"context/message","seq":4,"time":0,"data":{"content":[{"type":"text","text":"ctx"}],"source":{"kind":"plugin","plugin":"hooks"}},"surfaceOp":"append"}`,
			want: `context/message seq=4 time=0 op=append ContextMessage{source=plugin:hooks envelope="" content=[text("ctx")]}`,
		},
		{
			name: "context/message raw with meta",
			line: `{"type":"context/message","seq":4,"time":0,"data":{"content":[{"type":"text","text":"ctx"}],"source":{"kind":"other-kind"},"envelope":"raw","meta":{"z":[1,2],"a":null}},"surfaceOp":"append"}`,
			want: `context/message seq=4 time=0 op=append ContextMessage{source=other-kind envelope="raw" content=[text("ctx")]}`,
		},
		{
			name: "context/message envelope context",
			line: `{"type":"context/message","seq":4,"time":0,"data":{"content":[],"source":{"kind":"user"},"envelope":"context"},"surfaceOp":"append"}`,
			want: `context/message seq=4 time=0 op=append ContextMessage{source=user envelope="context" content=[]}`,
		},
		{
			name: "steering/message",
			line: `{"type":"steering/message","seq":35,"time":1783352236059,"data":{"turn":1,"content":[{"type":"text","text":"Also"}],"source":{"kind":"plugin","plugin":"hooks-codex"}},"surfaceOp":"append"}`,
			want: `steering/message seq=35 time=1783352236059 op=append SteeringMessage{turn=1 source=plugin:hooks-codex content=[text("Also")]}`,
		},
		{
			name: "assistant/chunk text-delta",
			line: `{"type":"assistant/chunk","seq":5,"time":0,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"Hel"}}}`,
			want: `assistant/chunk seq=5 time=0 AssistantChunk{turn=1 step=1 kind="text-delta" text="Hel"}`,
		},
		{
			name: "assistant/chunk reasoning-delta",
			line: `{"type":"assistant/chunk","seq":5,"time":0,"data":{"turn":1,"step":1,"chunk":{"type":"reasoning-delta","index":0,"text":"The"}}}`,
			want: `assistant/chunk seq=5 time=0 AssistantChunk{turn=1 step=1 kind="reasoning-delta" text="The"}`,
		},
		{
			name: "assistant/chunk block-start",
			line: `{"type":"assistant/chunk","seq":4,"time":0,"data":{"turn":1,"step":1,"chunk":{"type":"block-start","index":0,"blockType":"text"}}}`,
			want: `assistant/chunk seq=4 time=0 AssistantChunk{turn=1 step=1 kind="block-start" text=""}`,
		},
		{
			name: "assistant/chunk tool-call-delta",
			line: `{"type":"assistant/chunk","seq":5,"time":0,"data":{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":0,"id":"c1","name":"read","argumentsDelta":"{\"a\":1}"}}}`,
			want: `assistant/chunk seq=5 time=0 AssistantChunk{turn=1 step=1 kind="tool-call-delta" text=""}`,
		},
		{
			name: "assistant/chunk block-end",
			line: `{"type":"assistant/chunk","seq":6,"time":0,"data":{"turn":1,"step":1,"chunk":{"type":"block-end","index":0,"block":{"type":"text","text":"OK"}}}}`,
			want: `assistant/chunk seq=6 time=0 AssistantChunk{turn=1 step=1 kind="block-end" text=""}`,
		},
		{
			name: "assistant/chunk usage",
			line: `{"type":"assistant/chunk","seq":7,"time":0,"data":{"turn":1,"step":1,"chunk":{"type":"usage","usage":{"inputTokens":3,"outputTokens":3}}}}`,
			want: `assistant/chunk seq=7 time=0 AssistantChunk{turn=1 step=1 kind="usage" text=""}`,
		},
		{
			name: "assistant/chunk finish with replayState",
			line: `{"type":"assistant/chunk","seq":8,"time":0,"data":{"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"stop"},"replayState":{"z":1,"a":[{"k":"v"}]}}}}`,
			want: `assistant/chunk seq=8 time=0 AssistantChunk{turn=1 step=1 kind="finish" text=""}`,
		},
		{
			name: "assistant/chunk unknown chunk type",
			line: `{"type":"assistant/chunk","seq":8,"time":0,"data":{"turn":1,"step":1,"chunk":{"type":"citation","url":"https://x"}}}`,
			want: `assistant/chunk seq=8 time=0 AssistantChunk{turn=1 step=1 kind="citation" text=""}`,
		},
		{
			name: "assistant/message",
			line: `{"type":"assistant/message","seq":9,"time":1,"data":{"turn":1,"step":1,"content":[{"type":"reasoning","text":"think"},{"type":"text","text":"OK"},{"type":"tool-call","id":"c1","name":"read","arguments":"{\"p\":\"a\"}"}],"provenance":{"provider":"deepseek","model":"m","replayState":{"b":1,"a":2}},"usage":{"inputTokens":10,"outputTokens":3,"cacheReadTokens":1,"reasoningTokens":2}},"sourceEventSeqs":[4,5,6,7,8],"surfaceOp":"append"}`,
			want: `assistant/message seq=9 time=1 op=append sources=[4 5 6 7 8] AssistantMessage{turn=1 step=1 provenance={"provider":"deepseek","model":"m","replayState":{"b":1,"a":2}} content=[reasoning("think") text("OK") tool-call("c1","read","{\"p\":\"a\"}")]}`,
		},
		{
			name: "assistant/message seed era no provenance no sources",
			line: `{"type":"assistant/message","seq":9,"time":1,"data":{"turn":1,"step":1,"content":[{"type":"text","text":"OK"}]},"surfaceOp":"append"}`,
			want: `assistant/message seq=9 time=1 op=append AssistantMessage{turn=1 step=1 provenance=- content=[text("OK")]}`,
		},
		{
			name: "assistant/message empty sources",
			line: `{"type":"assistant/message","seq":9,"time":1,"data":{"turn":1,"step":1,"content":[]},"sourceEventSeqs":[],"surfaceOp":"append"}`,
			want: `assistant/message seq=9 time=1 op=append sources=[] AssistantMessage{turn=1 step=1 provenance=- content=[]}`,
		},
		{
			name: "tool/call",
			line: `{"type":"tool/call","seq":13,"time":0,"data":{"turn":1,"step":1,"callId":"call_a","name":"read","arguments":"{\"file_path\":\"a.txt\"}"}}`,
			want: `tool/call seq=13 time=0 ToolCall{turn=1 step=1 callId="call_a" name="read" arguments="{\"file_path\":\"a.txt\"}"}`,
		},
		{
			name: "tool/result",
			line: `{"type":"tool/result","seq":23,"time":0,"data":{"turn":1,"step":2,"callId":"c","content":[{"type":"text","text":"42"}],"isError":false,"meta":{"logs":[]}},"sourceEventSeqs":[21],"surfaceOp":"append"}`,
			want: `tool/result seq=23 time=0 op=append sources=[21] ToolResult{turn=1 step=2 callId="c" isError=false content=[text("42")]}`,
		},
		{
			name: "tool/result error",
			line: `{"type":"tool/result","seq":23,"time":0,"data":{"turn":1,"step":2,"callId":"c","content":[{"type":"tool-result","toolCallId":"inner","content":[{"type":"text","text":"x"}],"isError":true}],"isError":true,"error":{"name":"Denied","code":"E"}},"surfaceOp":"append"}`,
			want: `tool/result seq=23 time=0 op=append ToolResult{turn=1 step=2 callId="c" isError=true content=[tool-result("inner",error=true,[text("x")])]}`,
		},
		{
			name: "request/header initial",
			line: `{"type":"request/header","seq":0,"time":2,"data":{"header":{"config":{"provider":"p","model":"m","temperature":0.7,"stop":[]},"system":"SYS","tools":[{"name":"t1","description":"D1","parameters":{"type":"object","properties":{"b":{},"a":{}}}}]},"reason":"initial"}}`,
			want: `request/header seq=0 time=2 RequestHeader{reason="initial" header={"config":{"provider":"p","model":"m","temperature":0.7,"stop":[]},"system":"SYS","tools":[{"name":"t1","description":"D1","parameters":{"type":"object","properties":{"b":{},"a":{}}}}]}}`,
		},
		{
			name: "request/header resume",
			line: `{"type":"request/header","seq":0,"time":2,"data":{"reason":"resume","header":{"config":{"model":"m"}}}}`,
			want: `request/header seq=0 time=2 RequestHeader{reason="resume" header={"config":{"model":"m"}}}`,
		},
		{
			name: "request/header change",
			line: `{"type":"request/header","seq":0,"time":2,"data":{"header":{"config":{"provider":"p","model":"m2"}},"reason":"change"}}`,
			want: `request/header seq=0 time=2 RequestHeader{reason="change" header={"config":{"provider":"p","model":"m2"}}}`,
		},
		{
			name: "request/header fallback",
			line: `{"type":"request/header","seq":0,"time":2,"data":{"header":{"config":{"model":"m"},"messagePrefix":[{"role":"user","content":[{"type":"text","text":"p"}]}]},"reason":"fallback"}}`,
			want: `request/header seq=0 time=2 RequestHeader{reason="fallback" header={"config":{"model":"m"},"messagePrefix":[{"role":"user","content":[{"type":"text","text":"p"}]}]}}`,
		},
		{
			name: "request/header-delta",
			line: `{"type":"request/header-delta","seq":1,"time":7,"data":{"system":{"keepStart":1,"keepEnd":0,"insert":["NEW"]},"tools":{"added":[],"removed":["x"]}}}`,
			want: `request/header-delta seq=1 time=7 HeaderDelta{{"system":{"keepStart":1,"keepEnd":0,"insert":["NEW"]},"tools":{"added":[],"removed":["x"]}}}`,
		},
		{
			name: "request/header-delta empty",
			line: `{"type":"request/header-delta","seq":1,"time":7,"data":{}}`,
			want: `request/header-delta seq=1 time=7 HeaderDelta{{}}`,
		},
		{
			name: "request/digest",
			line: `{"type":"request/digest","seq":3,"time":0,"data":{"turn":1,"step":1,"sha256":"` + sha + `"}}`,
			want: `request/digest seq=3 time=0 RequestDigest{turn=1 step=1 sha256=` + sha + `}`,
		},
		{
			name: "compact/start",
			line: `{"type":"compact/start","seq":3,"time":0,"data":{"turn":2}}`,
			want: `compact/start seq=3 time=0 CompactStart{turn=2}`,
		},
		{
			name: "compact/summary",
			line: `{"type":"compact/summary","seq":4,"time":0,"data":{"summary":[{"type":"text","text":"sum"}],"shadowedRange":{"start":0,"end":3},"shadowedSeqs":[0,1,2,3],"shadowedTokenCount":1200,"provider":"p","model":"m","maxTokens":4096}}`,
			want: `compact/summary seq=4 time=0 CompactSummary{summary=[text("sum")]}`,
		},
		{
			name: "compact/end",
			line: `{"type":"compact/end","seq":5,"time":0,"data":{"turn":2}}`,
			want: `compact/end seq=5 time=0 CompactEnd{turn=2 error=false}`,
		},
		{
			name: "compact/end error",
			line: `{"type":"compact/end","seq":5,"time":0,"data":{"turn":2,"error":"timeout"}}`,
			want: `compact/end seq=5 time=0 CompactEnd{turn=2 error=true}`,
		},
		{
			name: "turn/end aborted without reason",
			line: `{"type":"turn/end","seq":9,"time":5,"data":{"turn":1,"reason":{"kind":"aborted"}}}`,
			want: `turn/end seq=9 time=5 TurnEnd{turn=1 reason="aborted"}`,
		},
		{
			name: "assistant/chunk tool-call-delta without name",
			line: `{"type":"assistant/chunk","seq":5,"time":0,"data":{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":0,"id":"c1","argumentsDelta":"{"}}}`,
			want: `assistant/chunk seq=5 time=0 AssistantChunk{turn=1 step=1 kind="tool-call-delta" text=""}`,
		},
		{
			name: "assistant/chunk finish without replayState",
			line: `{"type":"assistant/chunk","seq":8,"time":0,"data":{"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"stop"}}}}`,
			want: `assistant/chunk seq=8 time=0 AssistantChunk{turn=1 step=1 kind="finish" text=""}`,
		},
		{
			name: "tool-result block without isError",
			line: `{"type":"user/message","seq":1,"time":0,"data":{"content":[{"type":"tool-result","toolCallId":"c","content":[]}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
			want: `user/message seq=1 time=0 op=append UserMessage{source=user content=[tool-result("c",error=false,[])]}`,
		},
		{
			name: "compact/summary minimal",
			line: `{"type":"compact/summary","seq":4,"time":0,"data":{"summary":[],"shadowedRange":{"start":0,"end":0},"shadowedSeqs":[],"shadowedTokenCount":0,"model":"m"}}`,
			want: `compact/summary seq=4 time=0 CompactSummary{summary=[]}`,
		},
		{
			name: "request/digest unknown key",
			line: `{"type":"request/digest","seq":3,"time":0,"data":{"algo":"v1","turn":1,"step":1,"sha256":"` + sha + `"}}`,
			want: `request/digest seq=3 time=0 RequestDigest{turn=1 step=1 sha256=` + sha + `}`,
		},
		{
			name: "unknown type",
			line: `{"type":"hook/result","seq":1,"time":13,"data":{"decision":"block","durationMs":99,"z":null}}`,
			want: `hook/result seq=1 time=13 Opaque{}`,
		},
		{
			name: "unknown type empty data",
			line: `{"type":"x","seq":1,"time":13,"data":{}}`,
			want: `x seq=1 time=13 Opaque{}`,
		},
		{
			name: "envelope keys in another order",
			line: `{"seq":2,"data":{"turn":1},"time":0.5,"type":"turn/start"}`,
			want: `turn/start seq=2 time=0.5 TurnStart{turn=1}`,
		},
		{
			name: "replace op",
			line: `{"type":"context/message","seq":7,"time":0,"data":{"content":[{"type":"text","text":"s"}],"source":{"kind":"user"}},"sourceEventSeqs":[2,3,4],"surfaceOp":{"op":"replace","start":4,"end":2}}`,
			want: `context/message seq=7 time=0 op=replace(4,2) sources=[2 3 4] ContextMessage{source=user envelope="" content=[text("s")]}`,
		},
		{
			name: "replace op keys reordered",
			line: `{"type":"user/message","seq":7,"time":0,"data":{"content":[],"source":{"kind":"user"}},"surfaceOp":{"end":3,"start":3,"op":"replace"},"sourceEventSeqs":[3]}`,
			want: `user/message seq=7 time=0 op=replace(3,3) sources=[3] UserMessage{source=user content=[]}`,
		},
		{
			name: "opaque block with typed field names of other kinds",
			line: `{"type":"user/message","seq":1,"time":0,"data":{"content":[{"type":"custom","text":5,"id":[1],"isError":"no","toolCallId":{}}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
			want: `user/message seq=1 time=0 op=append UserMessage{source=user content=[opaque{"type":"custom","text":5,"id":[1],"isError":"no","toolCallId":{}}]}`,
		},
		{
			name: "opaque block with non-block content array",
			line: `{"type":"user/message","seq":1,"time":0,"data":{"content":[{"type":"custom","content":["x",1]}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
			want: `user/message seq=1 time=0 op=append UserMessage{source=user content=[opaque{"type":"custom","content":["x",1]}]}`,
		},
		{
			name: "opaque block with content array of untyped objects",
			line: `{"type":"user/message","seq":1,"time":0,"data":{"content":[{"content":[{"a":1}],"type":"custom"}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
			want: `user/message seq=1 time=0 op=append UserMessage{source=user content=[opaque{"content":[{"a":1}],"type":"custom"}]}`,
		},
		{
			name: "text block with unknown keys",
			line: `{"type":"user/message","seq":1,"time":0,"data":{"content":[{"text":"t","type":"text","cacheControl":{"type":"ephemeral"}}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
			want: `user/message seq=1 time=0 op=append UserMessage{source=user content=[text("t")]}`,
		},
		{
			name: "fractional time",
			line: `{"type":"step/start","seq":0,"time":1.5e-7,"data":{"turn":1,"step":1}}`,
			want: `step/start seq=0 time=1.5e-7 StepStart{turn=1 step=1}`,
		},
		{
			name: "integral float seq",
			line: `{"type":"step/start","seq":1e1,"time":0,"data":{"turn":1,"step":1}}`,
			want: `step/start seq=10 time=0 StepStart{turn=1 step=1}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.bug != "" {
				t.Skip("codec bug: " + tt.bug)
			}
			ev, err := codec.ParseEvent([]byte(tt.line), codec.Limits{})
			if err != nil {
				t.Fatalf("ParseEvent(%s) = %v", tt.line, err)
			}
			if got := describeEvent(ev); got != tt.want {
				t.Errorf("ParseEvent view\n got %s\nwant %s", got, tt.want)
			}
			out, err := ev.AppendJSON(nil)
			if err != nil {
				t.Fatalf("AppendJSON = %v", err)
			}
			canonical := strings.NewReplacer(`"seq":1e1`, `"seq":10`).Replace(tt.line)
			if string(out) != canonical {
				t.Errorf("AppendJSON(ParseEvent(line))\n got %s\nwant %s", out, canonical)
			}
			// The stored payload decodes to the same view.
			rec := codec.EncodeRecord(nil, ev.Raw)
			payload, err := codec.DecodeRecord(rec)
			if err != nil {
				t.Fatalf("DecodeRecord(EncodeRecord(Raw)) = %v", err)
			}
			ev2, err := codec.DecodeEvent(payload)
			if err != nil {
				t.Fatalf("DecodeEvent(stored) = %v", err)
			}
			if got := describeEvent(ev2); got != tt.want {
				t.Errorf("DecodeEvent(stored) view\n got %s\nwant %s", got, tt.want)
			}
			if !bytes.Equal(ev2.Raw, ev.Raw) {
				t.Errorf("DecodeEvent(stored).Raw = %x, want %x", ev2.Raw, ev.Raw)
			}

			// Unknown keys anywhere in data change nothing in the view and
			// are carried through export.
			withUnknown := strings.Replace(canonical, `"data":{`, `"data":{"zz":{"b":1,"a":[]},`, 1)
			withUnknown = strings.Replace(withUnknown, `,}`, `}`, 1)
			ev3, err := codec.ParseEvent([]byte(withUnknown), codec.Limits{})
			if err != nil {
				t.Fatalf("ParseEvent(with an unknown data key) = %v", err)
			}
			// (A header-delta's view is its whole data object.)
			if _, delta := ev3.Data.(*codec.HeaderDelta); !delta && describeEvent(ev3) != tt.want {
				t.Errorf("view with an unknown data key\n got %s\nwant %s", describeEvent(ev3), tt.want)
			}
			if out, err := ev3.AppendJSON(nil); err != nil || string(out) != withUnknown {
				t.Errorf("AppendJSON(with an unknown data key) = %s, %v; want %s", out, err, withUnknown)
			}
		})
	}
}

// TestParseEventRefusals checks envelope, marker and field-type rules
// (docs/format.md#events, docs/rules.md#surface): each is refused as invalid and names the seq.
func TestParseEventRefusals(t *testing.T) {
	const (
		user = `"data":{"content":[{"type":"text","text":"x"}],"source":{"kind":"user"}}`
	)
	tests := []struct {
		name string
		line string
		want string // class
		// noSeq: the refusal happens before the seq is read (a key before
		// seq, or FromJSON's grammar/duplicate check, which names the byte).
		noSeq bool
	}{
		// Envelope.
		{name: "unknown envelope key", line: `{"type":"turn/start","seq":7,"time":0,"data":{"turn":1},"extra":1}`, want: "invalid"},
		{name: "missing type", line: `{"seq":7,"time":0,"data":{"turn":1}}`, want: "invalid"},
		{name: "missing seq", line: `{"type":"turn/start","time":0,"data":{"turn":1}}`, want: "invalid"},
		{name: "missing time", line: `{"type":"turn/start","seq":7,"data":{"turn":1}}`, want: "invalid"},
		{name: "missing data", line: `{"type":"turn/start","seq":7,"time":0}`, want: "invalid"},
		{name: "type not string", line: `{"type":5,"seq":7,"time":0,"data":{}}`, want: "invalid", noSeq: true},
		{name: "type null", line: `{"type":null,"seq":7,"time":0,"data":{}}`, want: "invalid", noSeq: true},
		{name: "seq string", line: `{"type":"x","seq":"7","time":0,"data":{}}`, want: "invalid"},
		{name: "seq negative", line: `{"type":"x","seq":-1,"time":0,"data":{}}`, want: "invalid"},
		{name: "seq fraction", line: `{"type":"x","seq":7.5,"time":0,"data":{}}`, want: "invalid"},
		{name: "seq beyond 2^53", line: `{"type":"x","seq":1e300,"time":0,"data":{}}`, want: "invalid"},
		{name: "seq null", line: `{"type":"x","seq":null,"time":0,"data":{}}`, want: "invalid"},
		{name: "time string", line: `{"type":"x","seq":7,"time":"0","data":{}}`, want: "invalid"},
		{name: "time null", line: `{"type":"x","seq":7,"time":null,"data":{}}`, want: "invalid"},
		{name: "data array", line: `{"type":"x","seq":7,"time":0,"data":[]}`, want: "invalid"},
		{name: "data null", line: `{"type":"x","seq":7,"time":0,"data":null}`, want: "invalid"},
		{name: "data string", line: `{"type":"x","seq":7,"time":0,"data":"d"}`, want: "invalid"},
		{name: "event is array", line: `[{"type":"x","seq":7,"time":0,"data":{}}]`, want: "invalid", noSeq: true},
		{name: "event is string", line: `"event"`, want: "invalid"},
		{name: "duplicate envelope key", line: `{"type":"x","seq":7,"seq":8,"time":0,"data":{}}`, want: "invalid", noSeq: true},
		{name: "duplicate data key", line: `{"type":"turn/start","seq":7,"time":0,"data":{"turn":1,"turn":2}}`, want: "invalid", noSeq: true},
		// Surface markers.
		{name: "surfaceOp on non-surface type", line: `{"type":"turn/start","seq":7,"time":0,"data":{"turn":1},"surfaceOp":"append"}`, want: "invalid"},
		{name: "sourceEventSeqs on non-surface type", line: `{"type":"assistant/chunk","seq":7,"time":0,"data":{"turn":1,"step":1,"chunk":{"type":"usage"}},"sourceEventSeqs":[1]}`, want: "invalid"},
		{name: "markers on unknown type", line: `{"type":"hook/result","seq":7,"time":0,"data":{},"surfaceOp":"append"}`, want: "invalid"},
		{name: "missing surfaceOp", line: `{"type":"user/message","seq":7,"time":0,` + user + `}`, want: "invalid"},
		{name: "sources without surfaceOp", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"sourceEventSeqs":[1]}`, want: "invalid"},
		{name: "surfaceOp null", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"surfaceOp":null}`, want: "invalid"},
		{name: "surfaceOp unknown string", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"surfaceOp":"prepend"}`, want: "invalid"},
		{name: "surfaceOp number", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"surfaceOp":1}`, want: "invalid"},
		{name: "surfaceOp array", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"surfaceOp":["append"]}`, want: "invalid"},
		{name: "surfaceOp bool", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"surfaceOp":true}`, want: "invalid"},
		{name: "replace without end", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"sourceEventSeqs":[1],"surfaceOp":{"op":"replace","start":1}}`, want: "invalid"},
		{name: "replace without start", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"sourceEventSeqs":[1],"surfaceOp":{"op":"replace","end":1}}`, want: "invalid"},
		{name: "replace without op", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"sourceEventSeqs":[1],"surfaceOp":{"start":1,"end":1}}`, want: "invalid"},
		{name: "replace other op", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"sourceEventSeqs":[1],"surfaceOp":{"op":"insert","start":1,"end":1}}`, want: "invalid"},
		{name: "replace extra key", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"sourceEventSeqs":[1],"surfaceOp":{"op":"replace","start":1,"end":1,"x":0}}`, want: "invalid"},
		{name: "replace start string", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"sourceEventSeqs":[1],"surfaceOp":{"op":"replace","start":"1","end":1}}`, want: "invalid"},
		{name: "replace end negative", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"sourceEventSeqs":[1],"surfaceOp":{"op":"replace","start":1,"end":-1}}`, want: "invalid"},
		{name: "replace op not string", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"sourceEventSeqs":[1],"surfaceOp":{"op":1,"start":1,"end":1}}`, want: "invalid"},
		{name: "sources duplicate", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"sourceEventSeqs":[1,2,1],"surfaceOp":"append"}`, want: "invalid"},
		{name: "sources equal to seq", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"sourceEventSeqs":[7],"surfaceOp":"append"}`, want: "invalid"},
		{name: "sources above seq", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"sourceEventSeqs":[1,9],"surfaceOp":"append"}`, want: "invalid"},
		{name: "sources negative", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"sourceEventSeqs":[-1],"surfaceOp":"append"}`, want: "invalid"},
		{name: "sources fraction", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"sourceEventSeqs":[1.5],"surfaceOp":"append"}`, want: "invalid"},
		{name: "sources string entry", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"sourceEventSeqs":["1"],"surfaceOp":"append"}`, want: "invalid"},
		{name: "sources not array", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"sourceEventSeqs":1,"surfaceOp":"append"}`, want: "invalid"},
		{name: "sources null", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"sourceEventSeqs":null,"surfaceOp":"append"}`, want: "invalid"},
		{name: "sources empty on user/message", line: `{"type":"user/message","seq":7,"time":0,` + user + `,"sourceEventSeqs":[],"surfaceOp":"append"}`, want: "invalid"},
		{name: "sources empty on tool/result", line: `{"type":"tool/result","seq":7,"time":0,"data":{"turn":1,"step":1,"callId":"c","content":[],"isError":false},"sourceEventSeqs":[],"surfaceOp":"append"}`, want: "invalid"},
		// Field types.
		{name: "turn as string", line: `{"type":"turn/start","seq":7,"time":0,"data":{"turn":"1"}}`, want: "invalid"},
		{name: "turn null", line: `{"type":"turn/start","seq":7,"time":0,"data":{"turn":null}}`, want: "invalid"},
		{name: "turn negative", line: `{"type":"compact/start","seq":7,"time":0,"data":{"turn":-1}}`, want: "invalid"},
		{name: "turn fraction", line: `{"type":"step/start","seq":7,"time":0,"data":{"turn":1.5,"step":1}}`, want: "invalid"},
		{name: "turn missing", line: `{"type":"turn/start","seq":7,"time":0,"data":{}}`, want: "invalid"},
		{name: "step missing", line: `{"type":"step/end","seq":7,"time":0,"data":{"turn":1}}`, want: "invalid"},
		{name: "step bool", line: `{"type":"step/end","seq":7,"time":0,"data":{"turn":1,"step":true}}`, want: "invalid"},
		{name: "turn/end reason missing", line: `{"type":"turn/end","seq":7,"time":0,"data":{"turn":1}}`, want: "invalid"},
		{name: "turn/end reason string", line: `{"type":"turn/end","seq":7,"time":0,"data":{"turn":1,"reason":"completed"}}`, want: "invalid"},
		{name: "turn/end reason without kind", line: `{"type":"turn/end","seq":7,"time":0,"data":{"turn":1,"reason":{}}}`, want: "invalid"},
		{name: "turn/end reason kind number", line: `{"type":"turn/end","seq":7,"time":0,"data":{"turn":1,"reason":{"kind":1}}}`, want: "invalid"},
		{name: "turn/end dsh error shape", line: `{"type":"turn/end","seq":1,"time":17,"data":{"error":"model exploded"}}`, want: "invalid"},
		{name: "content not array", line: `{"type":"user/message","seq":7,"time":0,"data":{"content":"x","source":{"kind":"user"}},"surfaceOp":"append"}`, want: "invalid"},
		{name: "content object", line: `{"type":"user/message","seq":7,"time":0,"data":{"content":{},"source":{"kind":"user"}},"surfaceOp":"append"}`, want: "invalid"},
		{name: "content null", line: `{"type":"user/message","seq":7,"time":0,"data":{"content":null,"source":{"kind":"user"}},"surfaceOp":"append"}`, want: "invalid"},
		{name: "content missing", line: `{"type":"user/message","seq":7,"time":0,"data":{"source":{"kind":"user"}},"surfaceOp":"append"}`, want: "invalid"},
		{name: "block not object", line: `{"type":"user/message","seq":7,"time":0,"data":{"content":["x"],"source":{"kind":"user"}},"surfaceOp":"append"}`, want: "invalid"},
		{name: "block without type", line: `{"type":"user/message","seq":7,"time":0,"data":{"content":[{"text":"x"}],"source":{"kind":"user"}},"surfaceOp":"append"}`, want: "invalid"},
		{name: "block type number", line: `{"type":"user/message","seq":7,"time":0,"data":{"content":[{"type":1}],"source":{"kind":"user"}},"surfaceOp":"append"}`, want: "invalid"},
		{name: "block text not string", line: `{"type":"user/message","seq":7,"time":0,"data":{"content":[{"type":"text","text":5}],"source":{"kind":"user"}},"surfaceOp":"append"}`, want: "invalid"},
		{name: "block text null", line: `{"type":"user/message","seq":7,"time":0,"data":{"content":[{"type":"text","text":null}],"source":{"kind":"user"}},"surfaceOp":"append"}`, want: "invalid"},
		{name: "block text missing", line: `{"type":"user/message","seq":7,"time":0,"data":{"content":[{"type":"reasoning"}],"source":{"kind":"user"}},"surfaceOp":"append"}`, want: "invalid"},
		{name: "tool-call block arguments object", line: `{"type":"assistant/message","seq":7,"time":0,"data":{"turn":1,"step":1,"content":[{"type":"tool-call","id":"c","name":"n","arguments":{}}]},"surfaceOp":"append"}`, want: "invalid"},
		{name: "tool-call block without id", line: `{"type":"assistant/message","seq":7,"time":0,"data":{"turn":1,"step":1,"content":[{"type":"tool-call","name":"n","arguments":"{}"}]},"surfaceOp":"append"}`, want: "invalid"},
		{name: "tool-result block isError string", line: `{"type":"user/message","seq":7,"time":0,"data":{"content":[{"type":"tool-result","toolCallId":"c","content":[],"isError":"yes"}],"source":{"kind":"user"}},"surfaceOp":"append"}`, want: "invalid"},
		{name: "tool-result block content string", line: `{"type":"user/message","seq":7,"time":0,"data":{"content":[{"type":"tool-result","toolCallId":"c","content":"x"}],"source":{"kind":"user"}},"surfaceOp":"append"}`, want: "invalid"},
		{name: "tool-result block inner bad block", line: `{"type":"user/message","seq":7,"time":0,"data":{"content":[{"type":"tool-result","toolCallId":"c","content":[{"type":"text"}]}],"source":{"kind":"user"}},"surfaceOp":"append"}`, want: "invalid"},
		{name: "source missing", line: `{"type":"user/message","seq":7,"time":0,"data":{"content":[]},"surfaceOp":"append"}`, want: "invalid"},
		{name: "source string", line: `{"type":"user/message","seq":7,"time":0,"data":{"content":[],"source":"user"},"surfaceOp":"append"}`, want: "invalid"},
		{name: "source without kind", line: `{"type":"user/message","seq":7,"time":0,"data":{"content":[],"source":{}},"surfaceOp":"append"}`, want: "invalid"},
		{name: "source plugin number", line: `{"type":"user/message","seq":7,"time":0,"data":{"content":[],"source":{"kind":"plugin","plugin":1}},"surfaceOp":"append"}`, want: "invalid"},
		{name: "prompt/blocked source missing", line: `{"type":"prompt/blocked","seq":7,"time":0,"data":{"content":[],"reason":"r"}}`, want: "invalid"},
		{name: "context envelope unknown", line: `{"type":"context/message","seq":7,"time":0,"data":{"content":[],"source":{"kind":"user"},"envelope":"xml"},"surfaceOp":"append"}`, want: "invalid"},
		{name: "context envelope null", line: `{"type":"context/message","seq":7,"time":0,"data":{"content":[],"source":{"kind":"user"},"envelope":null},"surfaceOp":"append"}`, want: "invalid"},
		{name: "steering without turn", line: `{"type":"steering/message","seq":7,"time":0,"data":{"content":[],"source":{"kind":"user"}},"surfaceOp":"append"}`, want: "invalid"},
		{name: "chunk missing", line: `{"type":"assistant/chunk","seq":7,"time":0,"data":{"turn":1,"step":1}}`, want: "invalid"},
		{name: "chunk string", line: `{"type":"assistant/chunk","seq":7,"time":0,"data":{"turn":1,"step":1,"chunk":"x"}}`, want: "invalid"},
		{name: "chunk without type", line: `{"type":"assistant/chunk","seq":7,"time":0,"data":{"turn":1,"step":1,"chunk":{"text":"x"}}}`, want: "invalid"},
		{name: "chunk text number", line: `{"type":"assistant/chunk","seq":7,"time":0,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":1}}}`, want: "invalid"},
		{name: "assistant content missing", line: `{"type":"assistant/message","seq":7,"time":0,"data":{"turn":1,"step":1},"surfaceOp":"append"}`, want: "invalid"},
		{name: "provenance string", line: `{"type":"assistant/message","seq":7,"time":0,"data":{"turn":1,"step":1,"content":[],"provenance":"p"},"surfaceOp":"append"}`, want: "invalid"},
		{name: "provenance null", line: `{"type":"assistant/message","seq":7,"time":0,"data":{"turn":1,"step":1,"content":[],"provenance":null},"surfaceOp":"append"}`, want: "invalid"},
		{name: "usage number", line: `{"type":"assistant/message","seq":7,"time":0,"data":{"turn":1,"step":1,"content":[],"usage":5},"surfaceOp":"append"}`, want: "invalid"},
		{name: "tool/call callId number", line: `{"type":"tool/call","seq":7,"time":0,"data":{"turn":1,"step":1,"callId":5,"name":"n","arguments":"{}"}}`, want: "invalid"},
		{name: "tool/call arguments object", line: `{"type":"tool/call","seq":7,"time":0,"data":{"turn":1,"step":1,"callId":"c","name":"n","arguments":{}}}`, want: "invalid"},
		{name: "tool/call name missing", line: `{"type":"tool/call","seq":7,"time":0,"data":{"turn":1,"step":1,"callId":"c","arguments":"{}"}}`, want: "invalid"},
		{name: "tool/result isError not bool", line: `{"type":"tool/result","seq":7,"time":0,"data":{"turn":1,"step":1,"callId":"c","content":[],"isError":"false"},"surfaceOp":"append"}`, want: "invalid"},
		{name: "tool/result isError null", line: `{"type":"tool/result","seq":7,"time":0,"data":{"turn":1,"step":1,"callId":"c","content":[],"isError":null},"surfaceOp":"append"}`, want: "invalid"},
		{name: "tool/result isError missing", line: `{"type":"tool/result","seq":7,"time":0,"data":{"turn":1,"step":1,"callId":"c","content":[]},"surfaceOp":"append"}`, want: "invalid"},
		{name: "tool/result error null", line: `{"type":"tool/result","seq":7,"time":0,"data":{"turn":1,"step":1,"callId":"c","content":[],"isError":true,"error":null},"surfaceOp":"append"}`, want: "invalid"},
		{name: "tool/result meta null", line: `{"type":"tool/result","seq":7,"time":0,"data":{"turn":1,"step":1,"callId":"c","content":[],"isError":true,"meta":null},"surfaceOp":"append"}`, want: "invalid"},
		{name: "header not object", line: `{"type":"request/header","seq":7,"time":0,"data":{"header":[],"reason":"initial"}}`, want: "invalid"},
		{name: "header missing", line: `{"type":"request/header","seq":7,"time":0,"data":{"reason":"initial"}}`, want: "invalid"},
		{name: "header reason unknown", line: `{"type":"request/header","seq":7,"time":0,"data":{"header":{},"reason":"later"}}`, want: "invalid"},
		{name: "header reason missing", line: `{"type":"request/header","seq":7,"time":0,"data":{"header":{}}}`, want: "invalid"},
		{name: "digest uppercase", line: `{"type":"request/digest","seq":7,"time":0,"data":{"turn":1,"step":1,"sha256":"` + strings.ToUpper(sha) + `"}}`, want: "invalid"},
		{name: "digest short", line: `{"type":"request/digest","seq":7,"time":0,"data":{"turn":1,"step":1,"sha256":"abc"}}`, want: "invalid"},
		{name: "digest missing step", line: `{"type":"request/digest","seq":7,"time":0,"data":{"turn":1,"sha256":"` + sha + `"}}`, want: "invalid"},
		{name: "summary missing", line: `{"type":"compact/summary","seq":7,"time":0,"data":{"model":"m"}}`, want: "invalid"},
		{name: "summary not array", line: `{"type":"compact/summary","seq":7,"time":0,"data":{"summary":"s"}}`, want: "invalid"},
		{name: "compact/end without turn", line: `{"type":"compact/end","seq":7,"time":0,"data":{"error":"e"}}`, want: "invalid"},
		{name: "compact/end error null", line: `{"type":"compact/end","seq":7,"time":0,"data":{"turn":1,"error":null}}`, want: "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := codec.ParseEvent([]byte(tt.line), codec.Limits{})
			if got := class(err); got != tt.want {
				t.Fatalf("ParseEvent(%s) = %v (class %s), want %s", tt.line, err, got, tt.want)
			}
			// Errors name the seq once the envelope has it, and never
			// carry user content.
			if !tt.noSeq && strings.Contains(tt.line, `"seq":7,`) && !strings.Contains(err.Error(), "seq 7") {
				t.Errorf("ParseEvent(%s) error %q does not name seq 7", tt.line, err)
			}
			for _, secret := range []string{"model exploded", "rm -rf"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q leaks user content %q", err, secret)
				}
			}
		})
	}
}

// TestDecodeEventCorrupt checks DecodeEvent on payloads FromJSON cannot
// produce: they are corruption, never a panic.
func TestDecodeEventCorrupt(t *testing.T) {
	good := mustPayload(t, `{"type":"turn/start","seq":7,"time":0,"data":{"turn":1}}`)
	tests := []struct {
		name string
		raw  []byte
		want string
	}{
		{name: "truncated", raw: good[:len(good)-1], want: "corrupt"},
		{name: "trailing", raw: append(bytes.Clone(good), 0x01), want: "corrupt"},
		{name: "empty", raw: nil, want: "corrupt"},
		{name: "integer key", raw: []byte{0x81, 0x01, 0x01}, want: "corrupt"},
		{name: "ext in data", raw: []byte{0x84, 0xa4, 't', 'y', 'p', 'e', 0xa1, 'x', 0xa3, 's', 'e', 'q', 0x00, 0xa4, 't', 'i', 'm', 'e', 0x00, 0xa4, 'd', 'a', 't', 'a', 0x81, 0xa1, 'k', 0xd4, 0x00, 0x00}, want: "corrupt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := codec.DecodeEvent(tt.raw)
			if got := class(err); got != tt.want {
				t.Errorf("DecodeEvent(%x) = %v (class %s), want %s", tt.raw, err, got, tt.want)
			}
		})
	}
}

// TestIsSurfaceType checks the surface types of docs/rules.md#surface.
func TestIsSurfaceType(t *testing.T) {
	surface := map[string]bool{
		codec.TypeUserMessage: true, codec.TypeAssistantMessage: true, codec.TypeToolResult: true,
		codec.TypeContextMessage: true, codec.TypeSteeringMessage: true,
	}
	for _, typ := range []string{
		codec.TypeTurnStart, codec.TypeTurnEnd, codec.TypeStepStart, codec.TypeStepEnd,
		codec.TypeUserMessage, codec.TypePromptBlocked, codec.TypeContextMessage, codec.TypeSteeringMessage,
		codec.TypeAssistantChunk, codec.TypeAssistantMessage, codec.TypeToolCall, codec.TypeToolResult,
		codec.TypeRequestHeader, codec.TypeHeaderDelta, codec.TypeRequestDigest,
		codec.TypeCompactStart, codec.TypeCompactSummary, codec.TypeCompactEnd, "hook/result", "",
	} {
		if got := codec.IsSurfaceType(typ); got != surface[typ] {
			t.Errorf("IsSurfaceType(%q) = %v, want %v", typ, got, surface[typ])
		}
	}
}

// TestContentAppendJSON checks that Content re-exports its blocks exactly.
func TestContentAppendJSON(t *testing.T) {
	const content = `[{"type":"text","text":"a\u0001"},{"z":1,"type":"image"},{"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"in"}]}]`
	ev, err := codec.ParseEvent([]byte(`{"type":"user/message","seq":0,"time":0,"data":{"content":`+content+`,"source":{"kind":"user"}},"surfaceOp":"append"}`), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	c := ev.Data.(*codec.UserMessage).Content
	if got := string(c.AppendJSON(nil)); got != content {
		t.Errorf("Content.AppendJSON = %s, want %s", got, content)
	}
	if got, want := string(c.AppendElements([]byte("x"))), "x"+content[1:len(content)-1]; got != want {
		t.Errorf("Content.AppendElements = %s, want %s", got, want)
	}
	inner := c.Blocks[2].Inner
	if got := string(inner.AppendJSON(nil)); got != `[{"type":"text","text":"in"}]` {
		t.Errorf("inner Content.AppendJSON = %s", got)
	}
	if got := string(codec.Content{}.AppendJSON(nil)); got != "[]" {
		t.Errorf("empty Content.AppendJSON = %s, want []", got)
	}
}

// TestManySourcesDecodedOnce (issue 19 item 7): a long answer's message
// cites hundreds of thousands of chunk seqs; their slice is allocated
// once at its size, not grown through copies that the store's decode of
// every append would leave as garbage. A declared count beyond what the
// bytes can hold is not trusted.
func TestManySourcesDecodedOnce(t *testing.T) {
	const n = 200_000
	seqs := make([]int64, n)
	for i := range seqs {
		seqs[i] = int64(i)
	}
	ev, err := codec.NewEvent(codec.TypeAssistantMessage, n, 1, []byte("\x83\xa4turn\x01\xa4step\x01\xa7content\x90"),
		codec.SurfaceOp{Kind: codec.OpAppend}, seqs)
	if err != nil {
		t.Fatal(err)
	}
	d, err := codec.DecodeEvent(ev.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Sources) != n || cap(d.Sources) != n {
		t.Errorf("%d sources decoded into a slice of capacity %d", len(d.Sources), cap(d.Sources))
	}
	// An array32 header declaring 4G entries, followed by three bytes.
	var o codec.Object
	o.Str("type", codec.TypeAssistantMessage).Int("seq", 9).Number("time", 1).Value("data", []byte("\x83\xa4turn\x01\xa4step\x01\xa7content\x90"))
	o.Value("sourceEventSeqs", []byte("\xdd\xff\xff\xff\xff\x01\x02\x03")).Str("surfaceOp", "append")
	if _, err := codec.DecodeEvent(o.Bytes()); err == nil {
		t.Error("a sourceEventSeqs array declaring more entries than it holds was accepted")
	}
}

// TestNewEventCopiesOnce (issue 19 item 7): NewEvent sizes the event for
// all its members at once, so that a long answer's message (its text and
// its thousands of chunk seqs) is not copied through every growth of the
// buffer; the copies it makes are the event and its view.
func TestNewEventCopiesOnce(t *testing.T) {
	seqs := make([]int64, 100_000)
	for i := range seqs {
		seqs[i] = int64(i)
	}
	var o codec.Object
	o.Int("turn", 1).Int("step", 1).Array("content", (&codec.Object{}).Str("type", "text").Str("text", strings.Repeat("word ", 200_000)).Bytes())
	data := o.Bytes()
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := codec.NewEvent(codec.TypeAssistantMessage, int64(len(seqs)), 1, data, codec.SurfaceOp{Kind: codec.OpAppend}, seqs); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 8 {
		t.Errorf("NewEvent of a long message: %v allocations, want at most 8", allocs)
	}
}
