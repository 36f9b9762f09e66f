package rebuild_test

import (
	"fmt"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/rebuild"
)

// Replay one step: rebuild, from the log alone, the request the model was
// sent at the step whose step/start is seq 2, and its digest.
func ExampleRequest() {
	h := codec.NewSessionHeader("s1", 1767225600000, "/work", "", 0)
	var evs []codec.Event
	for _, line := range []string{
		`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`,
		`{"type":"user/message","seq":1,"time":2,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
		`{"type":"step/start","seq":2,"time":3,"data":{"turn":1,"step":1}}`,
		`{"type":"request/header","seq":3,"time":4,"data":{"header":{"system":"Be brief.","config":{"provider":"p","model":"m1"}},"reason":"initial"}}`,
	} {
		ev, err := codec.ParseEvent([]byte(line), codec.Limits{})
		if err != nil {
			panic(err)
		}
		evs = append(evs, ev)
	}
	step, err := rebuild.Request(h, evs, 2)
	if err != nil {
		panic(err)
	}
	fmt.Printf("step %d.%d\n%s\nsha256 %x…\n", step.Turn, step.Step, step.Request, step.Digest[:4])
	// Output:
	// step 1.1
	// {"provider":"p","model":"m1","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"system":"Be brief.","sessionId":"s1"}
	// sha256 93c7879b…
}
