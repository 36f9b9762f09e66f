package transcript_test

import (
	"testing"

	"github.com/sessionlog/sessionlog/transcript"
)

// FuzzLane maps any body, then an answer of any bytes, through a lane of
// each API that holds a conversation already: nothing panics, and a
// refused request leaves the lane able to map the next one.
func FuzzLane(f *testing.F) {
	for _, c := range clients {
		conv := []turnItem{prompt, first, files}
		f.Add(c.body(conv, system, ""), c.answer(final))
		f.Add(c.body(conv[:1], system, ""), c.answer(first))
	}
	f.Add(`{"messages":[{"role":"user","content":[{"type":"tool_result"}]}]}`, "data: {}\n\n")
	f.Add(`{"input":[{"type":"function_call_output","call_id":"x","output":{"type":"input_text","text":1}}]}`, "")
	f.Fuzz(func(t *testing.T, body, answer string) {
		for _, c := range clients {
			lane, err := transcript.NewLane(c.api)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := lane.MapRequest([]byte(c.body([]turnItem{prompt}, system, "")), 0, 0, 0); err != nil {
				t.Fatal(err)
			}
			var a transcript.Answer
			tr := c.trans()
			chunks, err := tr.Feed(nil, []byte(c.answer(first)))
			if err == nil {
				chunks, err = tr.End(chunks)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Add(chunks...); err != nil {
				t.Fatal(err)
			}
			if _, err := lane.MapAnswer(&a, 0, 100, 0); err != nil {
				t.Fatal(err)
			}
			_, _ = transcript.Root(c.api, []byte(body))
			if _, _, err := lane.MapRequest([]byte(body), 200, 200, 0); err != nil {
				continue
			}
			var b transcript.Answer
			chunks, err = c.trans().Feed(nil, []byte(answer))
			if err != nil {
				b.Fail(err)
			} else if err := b.Add(chunks...); err != nil {
				continue
			}
			if _, err := lane.MapAnswer(&b, 200, 300, 0); err != nil {
				t.Fatalf("%s: the answer to the open request: %v", c.api, err)
			}
		}
	})
}
