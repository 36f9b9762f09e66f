package redact_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/internal/corpus"
	"github.com/sessionlog/sessionlog/redact"
)

// corpusTexts are the corpus's texts: the DSH cases' lines (header and
// events, some of them invalid on purpose) in storage form, and as JSON
// the cases' expected bodies and the Claude Code and Codex transcripts'
// lines. None holds a real secret.
func corpusTexts(t *testing.T) (values, docs [][]byte) { return corpusTextsB(t) }

func corpusTextsB(t testing.TB) (values, docs [][]byte) {
	for _, f := range corpus.Files(t) {
		for i, line := range corpus.Lines(t, f) {
			mp, err := codec.FromJSON(nil, line, codec.Limits{})
			if err != nil {
				t.Fatalf("%s line %d: %v", f, i+1, err)
			}
			values = append(values, mp)
		}
	}
	for _, name := range []string{"requests.expected.jsonl", "wire-openai-chat.expected.jsonl"} {
		for _, f := range corpus.With(t, name) {
			docs = append(docs, corpus.Lines(t, f)...)
		}
	}
	dir := filepath.Join(corpus.Shared(t), "testdata", "transcripts")
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts under %s (%v)", dir, err)
	}
	for _, f := range files {
		docs = append(docs, corpus.Lines(t, f)...)
	}
	return values, docs
}

// TestCorpusFalsePositives counts, per ready matcher, the spans it finds
// in every string value of the corpus (logged). The corpus holds no real
// secret, so every span is a false positive: there must be none.
func TestCorpusFalsePositives(t *testing.T) {
	values, docs := corpusTexts(t)
	size, refused := 0, 0
	for _, v := range values {
		size += len(v)
	}
	for _, d := range docs {
		size += len(d)
		if _, _, err := redact.Secrets().JSON(d); err != nil {
			refused++
		}
	}
	if refused > len(docs)/100 {
		t.Errorf("%d of %d corpus documents are not JSON codec takes", refused, len(docs))
	}
	var report []string
	total := 0
	for _, m := range redact.SecretMatchers() {
		r, n := redact.New(m), 0
		for _, v := range values {
			_, k, err := r.Value(v)
			if err != nil {
				t.Fatal(err)
			}
			n += k
		}
		for _, d := range docs {
			if _, k, err := r.JSON(d); err == nil {
				n += k
			}
		}
		report = append(report, fmt.Sprintf("%s %d", m.Name(), n))
		total += n
	}
	t.Logf("false positives over %d DSH lines and %d JSON documents (%.1f MB; %d documents codec refuses, not counted): %s",
		len(values), len(docs), float64(size)/1e6, refused, strings.Join(report, ", "))
	if total != 0 {
		t.Errorf("%d false positives in the corpus", total)
	}
}
