package transcript_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/transcript"
)

// BenchmarkMapRequest maps the 50th request of a session shaped like
// Claude Code's (a 40 KB system prompt, 100 messages, a moving marker)
// into a lane that holds the 49th.
func BenchmarkMapRequest(b *testing.B) {
	big := strings.Repeat("You are an agent. ", 40<<10/18)
	var conv []turnItem
	for i := range 25 {
		id := fmt.Sprintf("call_%d", i)
		conv = append(conv, user(fmt.Sprintf("step %d: %s", i, strings.Repeat("x", 300))),
			said("ok", [3]string{id, "ls", `{"path":"."}`}), result(id, strings.Repeat("file ", 60)))
	}
	prev := []byte(anthropicBody(conv[:len(conv)-3], big, ""))
	body := []byte(anthropicBody(conv, big, ""))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		lane, _ := transcript.NewLane(transcript.APIAnthropic)
		if _, _, err := lane.MapRequest(prev, 0, 0, 0); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, _, err := lane.MapRequest(body, 1, 1000, 0); err != nil {
			b.Fatal(err)
		}
	}
}
