package rebuild

import (
	"strconv"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
)

// TestStructure checks the turn structure of docs/rules.md#turns-and-steps on short logs,
// among them events of unknown types (docs/format.md#event-types: data), which may sit
// between turns, as docs/transcripts.md's source/line events do.
func TestStructure(t *testing.T) {
	tests := []struct {
		name  string
		lines []string // events without seq; seqs are added in order
		want  []string // breaks, "seq: what"
	}{
		{name: "unknown types anywhere", lines: []string{
			`{"type":"source/line","data":{"format":"codex","line":1,"text":"{}"}}`,
			`{"type":"turn/start","data":{"turn":1}}`,
			`{"type":"source/line","data":{"format":"codex","line":2,"text":"{}"}}`,
			`{"type":"turn/end","data":{"turn":1,"reason":{"kind":"completed"}}}`,
			`{"type":"approval/policy","data":{"policy":"never"}}`,
		}},
		{name: "a known type outside a turn", lines: []string{
			`{"type":"user/message","data":{"content":[],"source":{"kind":"user"}},"surfaceOp":"append"}`,
			`{"type":"turn/start","data":{"turn":2}}`,
		}, want: []string{"0: user/message outside a turn", "1: turn/start 2 after turn 0"}},
		{name: "a result answering no call", lines: []string{
			`{"type":"turn/start","data":{"turn":1}}`,
			`{"type":"step/start","data":{"turn":1,"step":1}}`,
			`{"type":"tool/result","data":{"turn":1,"step":1,"callId":"c","content":[],"isError":false},"surfaceOp":"append"}`,
		}, want: []string{"2: tool/result answers no tool call of step 1.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Structure
			var got []string
			for i, l := range tt.lines {
				l = strings.Replace(l, `"data"`, `"seq":`+strconv.Itoa(i)+`,"time":0,"data"`, 1)
				ev, err := codec.ParseEvent([]byte(l), codec.Limits{})
				if err != nil {
					t.Fatalf("%s: %v", l, err)
				}
				for _, b := range s.Add(&ev) {
					got = append(got, strconv.FormatInt(b.Seq, 10)+": "+b.What)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("breaks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
