package rebuild_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/internal/corpus"
	"github.com/sessionlog/sessionlog/rebuild"
)

// corpusCases lists the DSH cases (package corpus: skipped without
// ../shared, failed when it is there but the corpus is not).
func corpusCases(t *testing.T) []string {
	t.Helper()
	return corpus.Cases(t)
}

// load reads a session file the way import does and folds it through a
// Fold, as the store would.
func load(path string) (codec.SessionHeader, []codec.Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return codec.SessionHeader{}, nil, err
	}
	defer f.Close()
	s := codec.NewScanner(f, codec.Limits{})
	h, err := s.Header()
	if err != nil {
		return h, nil, err
	}
	fold := rebuild.NewFold(false)
	var evs []codec.Event
	for {
		ev, err := s.Next()
		if err == io.EOF {
			return h, evs, nil
		}
		if err != nil {
			return h, nil, err
		}
		if err := fold.Add(&ev); err != nil {
			return h, nil, err
		}
		evs = append(evs, ev)
	}
}

// acceptedRefusal reports whether DSH's refusal is one of the R era's
// stricter rules that docs/rules.md does not adopt (ORIGIN.md).
func acceptedRefusal(msg string) bool {
	for _, s := range []string{"lacks provider/model", "provenance", "legacy delta", "fallback"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func TestCorpus(t *testing.T) {
	for _, dir := range corpusCases(t) {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			h, evs, err := load(filepath.Join(dir, "session.jsonl"))
			if want, rerr := os.ReadFile(filepath.Join(dir, "error.expected.txt")); rerr == nil {
				if err == nil && !acceptedRefusal(string(want)) {
					t.Fatalf("accepted a log DSH refuses with %q", strings.TrimSpace(string(want)))
				}
				return
			}
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			expected := corpus.Lines(t, filepath.Join(dir, "requests.expected.jsonl"))
			var got []rebuild.Step
			b := rebuild.NewBuilder(h, rebuild.BuilderOptions{Requests: true}, func(s rebuild.Step) error {
				got = append(got, s)
				return nil
			})
			for i := range evs {
				if err := b.Add(&evs[i]); err != nil {
					t.Fatalf("builder: %v", err)
				}
			}
			if err := b.End(); err != nil {
				t.Fatal(err)
			}
			naive, err := rebuild.Steps(h, evs)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(expected) || len(naive) != len(expected) {
				t.Fatalf("steps: builder %d, naive %d, want %d", len(got), len(naive), len(expected))
			}
			for i, want := range expected {
				line := expectedLine(got[i])
				if !bytes.Equal(line, want) {
					t.Errorf("step %d:\n got %s\nwant %s", i, clip(line), clip(want))
				}
				if n := expectedLine(naive[i]); !bytes.Equal(n, line) {
					t.Errorf("step %d: naive differs from builder", i)
				}
				if !got[i].Null && got[i].Digest != rebuild.Digest(got[i].Request) {
					t.Errorf("step %d: digest is not the SHA-256 of the request", i)
				}
			}
		})
	}
}

// expectedLine renders a step as ORIGIN.md's requests.expected.jsonl does.
func expectedLine(s rebuild.Step) []byte {
	out := []byte(`{"turn":`)
	out = codec.AppendJSONInt(out, s.Turn)
	out = append(out, `,"step":`...)
	out = codec.AppendJSONInt(out, s.Step)
	out = append(out, `,"stepStartSeq":`...)
	out = codec.AppendJSONInt(out, s.Start)
	out = append(out, `,"request":`...)
	if s.Null {
		out = append(out, "null"...)
	} else {
		out = append(out, s.Request...)
	}
	return append(out, '}')
}

func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}
