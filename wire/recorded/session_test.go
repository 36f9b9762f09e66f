package recorded_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

func at(t *testing.T, typ string, seq int64, fill func(o *codec.Object)) codec.Event {
	t.Helper()
	var o codec.Object
	fill(&o)
	ev, err := codec.NewEvent(typ, seq, 1, o.Bytes(), codec.SurfaceOp{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func chunkAt(t *testing.T, seq int64, s string) codec.Event {
	return at(t, recorded.TypeChunk, seq, func(o *codec.Object) { recorded.AppendChunk(o, recorded.Sum([]byte(s)), []byte(s)) })
}

func requestAt(t *testing.T, seq int64, body string, runs []recorded.Run) codec.Event {
	q := recorded.Request{API: "other", Method: "POST", Path: "/", Chunks: runs, Size: int64(len(body)), Digest: recorded.Sum([]byte(body))}
	return at(t, recorded.TypeRequest, seq, q.AppendData)
}

// TestSessionRuns: a body is the chunks its runs name, in the runs'
// order; WriteBody gives it back. A run that names a seq which is no
// chunk, or chunks that hold more than the size, is a finding, found
// without walking the rest of a run however long it claims to be or
// the chunks past the size.
func TestSessionRuns(t *testing.T) {
	many := make([]recorded.Run, 200_000)
	for i := range many {
		many[i] = recorded.Run{Seq: 0, N: 2}
	}
	tests := []struct {
		name string
		last codec.Event // after chunks "ab" (0), "cd" (1) and a request of "ab" (2)
		body string      // what WriteBody gives back, when clean
		want string      // a finding's message, "" when clean
	}{
		{"two runs", requestAt(t, 3, "cdabcd", []recorded.Run{{Seq: 1, N: 1}, {Seq: 0, N: 2}}), "cdabcd", ""},
		{"a request is no chunk", requestAt(t, 3, "abab", []recorded.Run{{Seq: 0, N: 1}, {Seq: 2, N: 1}}), "", "run 1 names seq 2, which is no wire/chunk"},
		{"a run past the chunks", requestAt(t, 1<<40, "abcd", []recorded.Run{{Seq: 0, N: 1<<40 - 1}}), "", "run 0 names seq 2, which is no wire/chunk"},
		{"past the size", requestAt(t, 3, "ab", many), "", "hold more than the 2 bytes its size says"},
		{"digest", requestAt(t, 3, "abce", []recorded.Run{{Seq: 0, N: 2}}), "", "chunks' digest is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s recorded.Session
			var probs []recorded.Problem
			for _, ev := range []codec.Event{chunkAt(t, 0, "ab"), chunkAt(t, 1, "cd"), requestAt(t, 2, "ab", []recorded.Run{{Seq: 0, N: 1}})} {
				probs = append(probs, s.Add(&ev)...)
			}
			start := time.Now()
			probs = append(probs, s.Add(&tt.last)...)
			if d := time.Since(start); d > time.Second {
				t.Errorf("Add took %v", d)
			}
			if tt.want == "" {
				var b bytes.Buffer
				if len(probs) != 0 || s.WriteBody(&b, s.Exchanges()[1].Request.Chunks) != nil || b.String() != tt.body {
					t.Errorf("problems %v, body %q", probs, b.String())
				}
				return
			}
			if len(probs) != 1 || !strings.Contains(probs[0].Message, tt.want) || probs[0].Seq != tt.last.Seq {
				t.Errorf("problems %v, want one at seq %d: %q", probs, tt.last.Seq, tt.want)
			}
			if err := s.WriteBody(&bytes.Buffer{}, s.Exchanges()[1].Request.Chunks); tt.name != "past the size" && tt.name != "digest" && err == nil {
				t.Error("WriteBody of a body with a missing chunk: no error")
			}
		})
	}
}

// TestSessionRedacted: a redacted wire/request's chunks are checked
// against its redacted member's size and digest; the digest of the body
// sent is reported not checkable (a Redacted problem, no finding), and a
// redaction of the path or headers alone keeps the body's digest checked.
func TestSessionRedacted(t *testing.T) {
	sent, rec := `{"k":"sk-secret"}`, `{"k":"[REDACTED]"}`
	redacted := func(seq int64, body string, red recorded.Redaction) codec.Event {
		q := recorded.Request{API: "other", Method: "POST", Path: "/", Chunks: []recorded.Run{{Seq: 0, N: 1}},
			Size: int64(len(sent)), Digest: recorded.Sum([]byte(sent)), Redacted: &red}
		if body == sent {
			q.Size, q.Digest = int64(len(body)), recorded.Sum([]byte(body))
		}
		return at(t, recorded.TypeRequest, seq, q.AppendData)
	}
	for _, tt := range []struct {
		name  string
		chunk string
		red   recorded.Redaction
		want  []string // the problems' messages, in order; "!" marks a finding
	}{
		{"body", rec, recorded.Redaction{Spans: 1, Size: int64(len(rec)), Digest: recorded.Sum([]byte(rec))},
			[]string{"digest not checkable (redacted content): 1 spans"}},
		{"path alone", sent, recorded.Redaction{Spans: 2, Size: int64(len(sent)), Digest: recorded.Sum([]byte(sent))},
			[]string{"2 spans of the recorded request's path or header values were redacted"}},
		{"chunks not the redacted body", rec, recorded.Redaction{Spans: 1, Size: int64(len(rec)), Digest: recorded.Sum([]byte("x"))},
			[]string{"!chunks' digest is", "digest not checkable"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var s recorded.Session
			c := chunkAt(t, 0, tt.chunk)
			r := redacted(1, tt.chunk, tt.red)
			probs := append(s.Add(&c), s.Add(&r)...)
			if len(probs) != len(tt.want) {
				t.Fatalf("problems %v, want %d", probs, len(tt.want))
			}
			for i, w := range tt.want {
				finding := strings.HasPrefix(w, "!")
				if p := probs[i]; !strings.Contains(p.Message, strings.TrimPrefix(w, "!")) || p.Redacted == finding || p.Warning {
					t.Errorf("problem %d: %+v, want %q", i, p, w)
				}
			}
			if strings.Contains(fmt.Sprint(probs), "sk-secret") {
				t.Error("a message holds content")
			}
		})
	}
}
