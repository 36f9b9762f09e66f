package transcript_test

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/transcript"
)

// TestMapping shows the events that representative line sequences map
// to. Each case names a format (codex, claude-code) and gives the file's
// lines as input; an input without a final newline is written without
// one. The output is the session header, then every event as its
// canonical JSON line, except that a source/line event is shown as
// "line N" (with its kind in the stats below). Every case must also fold
// through rebuild's validator and export back byte for byte.
// Rewrite with: go test ./transcript -run TestMapping -rewrite
func TestMapping(t *testing.T) {
	datadriven.Walk(t, "testdata/mapping", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			f, ok := transcript.ParseFormat(d.Cmd)
			if !ok {
				d.Fatalf(t, "unknown format %q", d.Cmd)
			}
			src := d.Input + "\n"
			if d.HasArg("no-final-newline") {
				src = d.Input
			}
			s, err := transcript.Open(strings.NewReader(src), int64(len(src)), f, transcript.Options{Name: "case.jsonl"})
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return show(t, s, src)
		})
	})
}

// show renders a session's events and checks they fold and export back.
func show(t *testing.T, s *transcript.Session, src string) string {
	t.Helper()
	var out strings.Builder
	h, err := s.Header.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&out, "%s\n", h)
	fold := rebuild.NewFold(true)
	var all eventList
	for {
		ev, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintf(&out, "error: %v\n", err)
			return out.String()
		}
		if ev, err = codec.DecodeEvent(ev.Raw); err != nil {
			t.Fatalf("seq %d does not decode: %v", ev.Seq, err)
		}
		if err := fold.Add(&ev); err != nil {
			t.Errorf("seq %d does not fold: %v", ev.Seq, err)
		}
		all = append(all, ev)
		if l, ok, _ := transcript.SourceLine(&ev); ok {
			fmt.Fprintf(&out, "%d line %d\n", ev.Seq, l.N)
			continue
		}
		j, err := ev.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "%s\n", j)
	}
	var back bytes.Buffer
	if err := transcript.WriteSource(&back, &all); err != nil {
		t.Fatal(err)
	}
	if back.String() != src {
		t.Errorf("export --format source differs:\n%q\nwant\n%q", back.String(), src)
	}
	st := s.Stats()
	fmt.Fprintf(&out, "stats: %d lines: %d mapped, %d kept, %d unknown, torn %v; %d turns, %d steps, %d prompts, %d calls, %d results, %d compactions; usage %+v\n",
		st.Lines, st.Mapped, st.Kept, st.Unknown, st.Torn, st.Turns, st.Steps, st.Prompts, st.ToolCalls, st.ToolResults, st.Compactions, st.Usage)
	if st.Requests > 0 {
		fmt.Fprintf(&out, "requests: %d recorded, %d rebuilt, %d verified\n", st.Requests, st.Rebuilt, st.Verified)
	}
	return out.String()
}
