package rebuild_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/rebuild"
)

// TestScenarios runs the scripts in testdata/scenarios, one rule of
// docs/rules.md#the-fold per file or block. Commands:
//
//	log [id=ID]   the input is a log: event lines in the interchange format,
//	              seq assigned from 0 when a line has "seq":_ ; the session
//	              header is built from id. Prints "ok" or the refusal (the
//	              fold the store validates with).
//	replay        prints every step of the last log: T.S, boundary, then the
//	              request's canonical JSON or null, checked against the
//	              from-scratch fold.
//	surface       prints the surface (seqs) after the whole log.
//
// Rewrite with go test ./rebuild -run TestScenarios -rewrite.
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/scenarios", func(t *testing.T, path string) {
		var h codec.SessionHeader
		var evs []codec.Event
		var fold *rebuild.Fold
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "log":
				id := "s"
				d.MaybeScanArgs(t, "id", &id)
				h = codec.NewSessionHeader(id, 1, "", "", 0)
				var err error
				evs, fold, err = parseLog(d.Input)
				if err != nil {
					return "err: " + classOf(err) + ": " + err.Error() + "\n"
				}
				return "ok\n"
			case "replay":
				return replay(t, h, evs)
			case "surface":
				return fmt.Sprintln(fold.Surface())
			}
			t.Fatalf("%s: unknown command %s", d.Pos, d.Cmd)
			return ""
		})
	})
}

func classOf(err error) string {
	switch {
	case errors.Is(err, codec.ErrInvalid):
		return "invalid"
	case errors.Is(err, codec.ErrCorrupt):
		return "corrupt"
	case errors.Is(err, codec.ErrSyntax):
		return "syntax"
	}
	return "unclassified"
}

// parseLog decodes the lines of a script and folds them as the store does.
func parseLog(input string) ([]codec.Event, *rebuild.Fold, error) {
	fold := rebuild.NewFold(false)
	var evs []codec.Event
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.Replace(line, `"seq":_`, fmt.Sprintf(`"seq":%d`, len(evs)), 1)
		if !strings.Contains(line, `"time"`) {
			line = strings.Replace(line, `"data":`, `"time":0,"data":`, 1)
		}
		ev, err := codec.ParseEvent([]byte(line), codec.Limits{})
		if err != nil {
			return nil, nil, err
		}
		if err := fold.Add(&ev); err != nil {
			return nil, nil, err
		}
		evs = append(evs, ev)
	}
	return evs, fold, nil
}

func replay(t *testing.T, h codec.SessionHeader, evs []codec.Event) string {
	var out strings.Builder
	var got []rebuild.Step
	b := rebuild.NewBuilder(h, rebuild.BuilderOptions{Requests: true}, func(s rebuild.Step) error {
		got = append(got, s)
		return nil
	})
	for i := range evs {
		if err := b.Add(&evs[i]); err != nil {
			return "err: " + err.Error() + "\n"
		}
	}
	if err := b.End(); err != nil {
		return "err: " + err.Error() + "\n"
	}
	want, err := rebuild.Steps(h, evs)
	if err != nil {
		t.Fatalf("from scratch: %v", err)
	}
	if len(want) != len(got) {
		t.Fatalf("builder %d steps, from scratch %d", len(got), len(want))
	}
	for i, s := range got {
		if string(s.Request) != string(want[i].Request) || s.Digest != want[i].Digest {
			t.Fatalf("step %d.%d: builder and from-scratch fold differ", s.Turn, s.Step)
		}
		fmt.Fprintf(&out, "%d.%d @%d: ", s.Turn, s.Step, s.Start)
		if s.Null {
			out.WriteString("null\n")
			continue
		}
		out.Write(s.Request)
		out.WriteByte('\n')
	}
	for _, m := range b.Misplaced() {
		fmt.Fprintf(&out, "misplaced digest @%d\n", m)
	}
	return out.String()
}
