package compact_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/compact"
)

func TestCharsEstimator(t *testing.T) {
	e := compact.Chars{}
	tests := []struct {
		name string
		msg  string
		want int
	}{
		{"text", `{"role":"user","content":[{"type":"text","text":"abcdefgh"}]}`, 2 + 4},
		{"text rounds up", `{"role":"user","content":[{"type":"text","text":"abcde"}]}`, 2 + 4},
		{"utf-16 units", `{"role":"user","content":[{"type":"text","text":"😀😀"}]}`, 1 + 4},
		{"reasoning", `{"role":"assistant","content":[{"type":"reasoning","text":"12345678"}]}`, 2 + 4},
		{"tool-call", `{"role":"assistant","content":[{"type":"tool-call","id":"x","name":"read","arguments":"{\"p\":1}"}]}`, 1 + 2 + 4},
		{"tool-result", `{"role":"user","content":[{"type":"tool-result","toolCallId":"x","content":[{"type":"text","text":"abcd"}],"isError":false}]}`, (1 + 4) + 4},
		{"other block by JSON length", `{"role":"user","content":[{"type":"image","d":"xy"}]}`, 7 + 4}, // 25 chars
		{"two blocks", `{"role":"user","content":[{"type":"text","text":"abcd"},{"type":"text","text":"abcd"}]}`, 10},
		{"empty content", `{"role":"assistant","content":[]}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := e.Message([]byte(tt.msg)); got != tt.want {
				t.Errorf("Message(%s) = %d, want %d", tt.msg, got, tt.want)
			}
		})
	}
	if got := (compact.Chars{PerToken: 2}).System("abcde"); got != 3 {
		t.Errorf("System = %d, want 3", got)
	}
	prefix := [][]byte{[]byte(`{"role":"user","content":[{"type":"text","text":"abcd"}]}`)}
	if got := compact.Pressure(e, 10, prefix, "abcd"); got != 1+10+(5+4) {
		t.Errorf("Pressure = %d", got)
	}
}

// TestCut: the retained tail keeps the newest nodes whose estimates reach
// retain (the node that reaches it is kept), then the cut moves toward the
// head until no tool call is open across it; 0 means nothing to compact.
func TestCut(t *testing.T) {
	n := func(tokens, calls int) compact.Node { return compact.Node{Tokens: tokens, Calls: calls} }
	tests := []struct {
		name   string
		nodes  []compact.Node
		retain int
		want   int
	}{
		{"keeps the node that reaches retain", []compact.Node{n(10, 0), n(10, 0), n(10, 0), n(10, 0)}, 15, 2},
		{"exactly reaching", []compact.Node{n(10, 0), n(10, 0), n(10, 0)}, 10, 2},
		{"tail never reaches retain: nothing", []compact.Node{n(1, 0), n(1, 0)}, 100, 0},
		{"cut reaches the head: nothing", []compact.Node{n(100, 0), n(1, 0)}, 50, 0},
		{"call left open across the cut moves it", []compact.Node{n(10, 0), n(10, 1), n(10, -1), n(10, 0)}, 15, 1},
		{"balanced cut stays", []compact.Node{n(10, 0), n(10, 1), n(10, -1), n(10, 0), n(10, 0)}, 15, 3},
		{"two calls, one answered", []compact.Node{n(5, 0), n(5, 2), n(5, -1), n(5, -1), n(5, 0)}, 8, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compact.Cut(tt.nodes, tt.retain); got != tt.want {
				t.Errorf("Cut = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestFrame(t *testing.T) {
	got, err := compact.Frame([]byte(`[{"type":"text","text":"s"},{"type":"x","k":[1]}]`))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"type":"text","text":` + string(codec.AppendJSONString(nil, []byte(compact.Preamble+"\n\n<compacted-summary>"))) +
		`},{"type":"text","text":"s"},{"type":"x","k":[1]},{"type":"text","text":"</compacted-summary>"}]`
	if string(got) != want {
		t.Fatalf("Frame =\n%s\nwant\n%s", got, want)
	}
	if _, err := compact.Frame([]byte(`{"not":"array"}`)); !errors.Is(err, codec.ErrInvalid) {
		t.Fatalf("Frame(object) = %v", err)
	}
}

// session is an in-memory compact.Session: a surface of nodes and the
// batches committed, so the bracket's events can be checked.
type session struct {
	nodes   []compact.Node
	next    int64
	batches [][]compact.Pending
	// onSummarize lets a test change the log while the summarizer runs.
	bump bool
}

func (s *session) Nodes() []compact.Node { return s.nodes }
func (s *session) Tokens() int           { return compact.SurfaceTokens(s.nodes) }
func (s *session) Revision() int64       { return s.next }

func (s *session) Commit(ctx context.Context, evs []compact.Pending) ([]int64, error) {
	seqs := make([]int64, len(evs))
	for i, p := range evs {
		seqs[i] = s.next
		s.next++
		if p.Op.Kind == codec.OpReplace {
			s.replace(p, seqs[i])
		}
	}
	s.batches = append(s.batches, evs)
	return seqs, nil
}

func (s *session) replace(p compact.Pending, seq int64) {
	ps, pe := -1, -1
	for i, n := range s.nodes {
		if n.Seq == p.Op.Start {
			ps = i
		}
		if n.Seq == p.Op.End {
			pe = i
		}
	}
	repl := compact.Node{Seq: seq, Tokens: 30}
	s.nodes = append(append(append([]compact.Node(nil), s.nodes[:ps]...), repl), s.nodes[pe+1:]...)
}

func newSession(count, tokens int) *session {
	s := &session{}
	for i := 0; i < count; i++ {
		msg := []byte(`{"role":"user","content":[{"type":"text","text":"` + strings.Repeat("x", tokens*4) + `"}]}`)
		s.nodes = append(s.nodes, compact.Node{Seq: s.next, Msg: msg, Tokens: tokens + 8})
		s.next++
	}
	return s
}

type summarizer struct {
	text  string
	err   error
	calls int
	s     *session
}

func (m *summarizer) Summarize(ctx context.Context, msgs [][]byte) (compact.Summary, error) {
	m.calls++
	if m.s != nil && m.s.bump {
		m.s.next++ // someone appended meanwhile
	}
	return compact.Summary{Content: []byte(`[{"type":"text","text":"` + m.text + `"}]`), Provider: "p", Model: "m"}, m.err
}

func types(batches [][]compact.Pending) string {
	var out []string
	for _, b := range batches {
		var ts []string
		for _, p := range b {
			ts = append(ts, p.Type)
		}
		out = append(out, "["+strings.Join(ts, " ")+"]")
	}
	return strings.Join(out, " ")
}

func TestGate(t *testing.T) {
	cfg := compact.Config{ContextWindow: 1000, ThresholdRatio: 0.8, RetainTokens: 200}
	tests := []struct {
		name        string
		nodes       int
		summary     string
		err         error
		bump        bool
		noRetry     bool
		wantBatches string
		wantErr     error
		wantCompact int
	}{
		{name: "below the threshold: nothing", nodes: 5, wantBatches: ""},
		{name: "compacts the head", nodes: 12, summary: "short",
			wantBatches: "[compact/start] [compact/summary user/message compact/end]", wantCompact: 1},
		{name: "summarizer fails: compact/end with error, retried, then gives up", nodes: 12, err: errors.New("model down"),
			wantBatches: "[compact/start] [compact/end] [compact/start] [compact/end]", wantErr: compact.ErrGaveUp},
		{name: "no retry", nodes: 12, err: errors.New("model down"), noRetry: true,
			wantBatches: "[compact/start] [compact/end]", wantErr: compact.ErrGaveUp},
		{name: "summary not smaller", nodes: 12, summary: strings.Repeat("y", 8000), noRetry: true,
			wantBatches: "[compact/start] [compact/end]", wantErr: compact.ErrGaveUp},
		{name: "log changed during summarization", nodes: 12, summary: "short", bump: true, noRetry: true,
			wantBatches: "[compact/start] [compact/end]", wantErr: compact.ErrGaveUp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(tt.nodes, 92)
			s.bump = tt.bump
			c := cfg
			c.NoRetry = tt.noRetry
			g := &compact.Gate{Config: c, Summarizer: &summarizer{text: tt.summary, err: tt.err, s: s}}
			res, err := g.Run(context.Background(), s, 1, "system", nil)
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Run = %v, want %v", err, tt.wantErr)
			}
			if got := types(s.batches); got != tt.wantBatches {
				t.Fatalf("batches %s, want %s", got, tt.wantBatches)
			}
			if res.Compactions != tt.wantCompact {
				t.Fatalf("compactions %d, want %d", res.Compactions, tt.wantCompact)
			}
			if tt.wantCompact > 0 {
				checkBracket(t, s.batches)
				if res.After >= res.Before || res.After >= c.Threshold() {
					t.Fatalf("estimate %d → %d, threshold %d", res.Before, res.After, c.Threshold())
				}
			}
		})
	}
}

// checkBracket checks the events of a successful compaction (docs/rules.md#compaction).
func checkBracket(t *testing.T, batches [][]compact.Pending) {
	t.Helper()
	repl := batches[1][1]
	if repl.Op.Kind != codec.OpReplace || repl.Op.Start != 0 {
		t.Fatalf("replace op %+v", repl.Op)
	}
	// sources: compact/start seq, summary seq, then every replaced seq.
	if repl.Sources[0] != 12 || repl.Sources[1] != 13 || repl.Sources[2] != 0 {
		t.Fatalf("sources %v", repl.Sources)
	}
	if int64(len(repl.Sources)-2) != repl.Op.End+1 {
		t.Fatalf("sources %v do not cover 0..%d", repl.Sources, repl.Op.End)
	}
	summary, _, _ := codec.ToJSON(nil, batches[1][0].Data)
	for _, key := range []string{`"summary":`, `"shadowedRange":{"start":0,`, `"shadowedSeqs":[0,`, `"shadowedTokenCount":`, `"provider":"p","model":"m"`} {
		if !strings.Contains(string(summary), key) {
			t.Fatalf("compact/summary %s lacks %s", summary, key)
		}
	}
	user, _, _ := codec.ToJSON(nil, repl.Data)
	if !strings.Contains(string(user), `"source":{"kind":"plugin","plugin":"compact"}`) ||
		!strings.Contains(string(user), `<compacted-summary>`) {
		t.Fatalf("replacing message %s", user)
	}
}

// TestModelSummarizer: the one-shot request carries the span, the
// instructions and the envelope recorded on compact/summary.
func TestModelSummarizer(t *testing.T) {
	var sent string
	m := compact.ModelSummarizer{Completer: completer(func(req []byte) []byte {
		sent = string(req)
		return []byte(`[{"type":"text","text":"sum"}]`)
	}), Provider: "p", Model: "m"}
	sum, err := m.Summarize(context.Background(), [][]byte{[]byte(`{"role":"user","content":[{"type":"text","text":"hi"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Provider != "p" || sum.Model != "m" || sum.MaxTokens != 8192 || string(sum.Content) != `[{"type":"text","text":"sum"}]` {
		t.Fatalf("summary %+v", sum)
	}
	if !strings.HasPrefix(sent, `{"provider":"p","model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"user"`) ||
		!strings.HasSuffix(sent, `,"maxTokens":8192}`) {
		t.Fatalf("request %s", sent)
	}
	if _, _, err := codec.ToJSON(nil, mustMP(t, sent)); err != nil {
		t.Fatalf("the request is not valid JSON: %v", err)
	}
}

type completer func([]byte) []byte

func (c completer) Complete(ctx context.Context, req []byte) ([]byte, error) { return c(req), nil }

func mustMP(t *testing.T, js string) []byte {
	mp, err := codec.FromJSON(nil, []byte(js), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return mp
}
