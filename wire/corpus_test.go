package wire_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/wire"

	"github.com/sessionlog/sessionlog/internal/corpus"
)

// corpusSteps loads a corpus log as import does and rebuilds its steps.
func corpusSteps(t *testing.T, path string) ([]rebuild.Step, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := codec.NewScanner(f, codec.Limits{})
	h, err := s.Header()
	if err != nil {
		return nil, err
	}
	fold := rebuild.NewFold(false)
	var steps []rebuild.Step
	b := rebuild.NewBuilder(h, rebuild.BuilderOptions{Requests: true}, func(st rebuild.Step) error {
		steps = append(steps, st)
		return nil
	})
	for {
		ev, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := fold.Add(&ev); err != nil {
			return nil, err
		}
		if err := b.Add(&ev); err != nil {
			return nil, err
		}
	}
	return steps, b.End()
}

// wireLine is the line of replay --wire --format json for a step.
func wireLine(t *testing.T, r *wire.Renderer, s rebuild.Step) []byte {
	t.Helper()
	b := []byte(`{"turn":` + strconv.FormatInt(s.Turn, 10) + `,"step":` + strconv.FormatInt(s.Step, 10) +
		`,"stepStartSeq":` + strconv.FormatInt(s.Start, 10) + `,"body":`)
	if s.Null {
		return append(b, "null}"...)
	}
	body, err := r.AppendBody(nil, s.Request, &s.Header)
	if err != nil {
		t.Fatalf("step %d.%d: %v", s.Turn, s.Step, err)
	}
	b = codec.AppendJSONString(b, body)
	return append(b, '}')
}

// TestCorpusOpenAIChat: for every shared case with bodies computed by
// DSH's own DeepSeek serializer, openai-chat renders them byte for byte.
func TestCorpusOpenAIChat(t *testing.T) {
	files := corpus.With(t, "wire-openai-chat.expected.jsonl")
	r, err := wire.Lookup(wire.OpenAIChat)
	if err != nil {
		t.Fatal(err)
	}
	bodies := 0
	for _, file := range files {
		dir := filepath.Dir(file)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			steps, err := corpusSteps(t, filepath.Join(dir, "session.jsonl"))
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			want := corpus.Lines(t, file)
			if len(steps) != len(want) {
				t.Fatalf("%d steps, want %d", len(steps), len(want))
			}
			for i, s := range steps {
				got := wireLine(t, r, s)
				if !bytes.Equal(got, want[i]) {
					off := rebuild.FirstDifference(got, want[i])
					t.Errorf("step %d.%d differs at byte %d:\n got …%s\nwant …%s", s.Turn, s.Step, off, around(got, off), around(want[i], off))
				}
				if !s.Null {
					bodies++
				}
			}
		})
	}
	if bodies == 0 {
		t.Fatal("the corpus gave no body to compare")
	}
	t.Logf("%d cases, %d bodies byte-exact", len(files), bodies)
}

func around(b []byte, off int) string {
	lo, hi := max(off-60, 0), min(off+60, len(b))
	return string(b[lo:hi])
}
