package header

import (
	"fmt"
	"strings"
	"testing"
)

// benchPair returns a header with a 200-line system prompt and 30 tools,
// and the same header after a typical in-instance change: two lines
// rewritten mid-prompt, one tool changed, one removed, one added.
func benchPair(b *testing.B) (prev, next Snapshot) {
	b.Helper()
	tool := func(name, desc string) string {
		return fmt.Sprintf(`{"name":%q,"description":%q,"parameters":{"type":"object","properties":{"path":{"type":"string","description":"Absolute path."},"limit":{"type":"integer"}},"required":["path"]}}`, name, desc)
	}
	header := func(lines []string, tools []string) Snapshot {
		sys := strings.Join(lines, `\n`)
		return mustDecode(b, `{"config":{"provider":"deepseek","model":"deepseek-v4-flash","temperature":0.7},"system":"`+
			sys+`","tools":[`+strings.Join(tools, ",")+`]}`)
	}
	lines := make([]string, 200)
	for i := range lines {
		lines[i] = fmt.Sprintf("Line %d of the system prompt: keep answers brief and verify your work.", i)
	}
	tools := make([]string, 30)
	for i := range tools {
		tools[i] = tool(fmt.Sprintf("tool_%02d", i), "Does thing "+fmt.Sprint(i)+".")
	}
	prev = header(lines, tools)
	lines2 := append([]string(nil), lines...)
	lines2[100], lines2[101] = "Mode: code.", "Approval prompts are disabled in this session."
	tools2 := append([]string(nil), tools...)
	tools2[7] = tool("tool_07", "Does thing 7, better.")
	tools2 = append(tools2[:12], tools2[13:]...)
	tools2 = append(tools2, tool("tool_new", "New."))
	next = header(lines2, tools2)
	return prev, next
}

func BenchmarkApply(b *testing.B) {
	prev, next := benchPair(b)
	d, ok := Diff(prev, next)
	if !ok {
		b.Fatal("benchmark delta is not expressible")
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Apply(prev, d)
	}
}

func BenchmarkDiff(b *testing.B) {
	prev, next := benchPair(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := Diff(prev, next); !ok {
			b.Fatal("not ok")
		}
	}
}

func BenchmarkEqual(b *testing.B) {
	prev, _ := benchPair(b)
	other := Apply(prev, Delta{})
	b.ReportAllocs()
	for b.Loop() {
		if !prev.Equal(other) {
			b.Fatal("not equal")
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	prev, _ := benchPair(b)
	mp := prev.Encode()
	b.SetBytes(int64(len(mp)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(mp); err != nil {
			b.Fatal(err)
		}
	}
}
