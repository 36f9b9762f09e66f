package compact

import (
	"context"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
)

// Completer makes one model call outside any session (a one-shot: its
// request is not part of a session's log, only its envelope is, on
// compact/summary).
type Completer interface {
	// Complete sends request, a request's canonical JSON in the shape of
	// docs/rules.md#the-request, and returns the answer as a content-block array (JSON).
	Complete(ctx context.Context, request []byte) ([]byte, error)
}

// DefaultInstructions ask the model for a summary that can stand in for
// the span it replaces.
const DefaultInstructions = "Summarize the conversation above so that it can replace it. Keep the user's " +
	"goals and constraints, decisions and their reasons, facts learned (file names, commands, results, " +
	"errors), and the work still open. Be complete and specific; omit pleasantries."

// summarySystem is the system prompt of a summarization call.
const summarySystem = "You condense conversations between a user and an AI agent into faithful, " +
	"self-contained summaries."

// ModelSummarizer is the provider-backed, one-shot Summarizer: one request
// holding the span's messages and the instructions, answered by the model.
type ModelSummarizer struct {
	Completer Completer
	// Provider ("" for none) and Model name the call; both are recorded.
	Provider, Model string
	// MaxTokens bounds the answer; 0 means 8192.
	MaxTokens int64
	// Instructions replace DefaultInstructions when set.
	Instructions string
}

var _ Summarizer = ModelSummarizer{}

// Summarize sends the span and the instructions to the model.
func (m ModelSummarizer) Summarize(ctx context.Context, msgs [][]byte) (Summary, error) {
	if m.Completer == nil {
		return Summary{}, errors.New("compact: ModelSummarizer without a Completer")
	}
	maxTokens, instr := m.MaxTokens, m.Instructions
	if maxTokens <= 0 {
		maxTokens = 8192
	}
	if instr == "" {
		instr = DefaultInstructions
	}
	req := []byte{'{'}
	if m.Provider != "" {
		req = append(codec.AppendJSONString(append(req, `"provider":`...), []byte(m.Provider)), ',')
	}
	req = codec.AppendJSONString(append(req, `"model":`...), []byte(m.Model))
	req = append(req, `,"messages":[`...)
	for _, msg := range msgs {
		req = append(append(req, msg...), ',')
	}
	req = append(req, `{"role":"user","content":[{"type":"text","text":`...)
	req = codec.AppendJSONString(req, []byte(instr))
	req = append(req, `}]}],"system":`...)
	req = codec.AppendJSONString(req, []byte(summarySystem))
	req = codec.AppendJSONInt(append(req, `,"maxTokens":`...), maxTokens)
	req = append(req, '}')
	content, err := m.Completer.Complete(ctx, req)
	if err != nil {
		return Summary{}, errors.Wrap(err, "compact: summarizer call")
	}
	return Summary{Content: content, Provider: m.Provider, Model: m.Model, MaxTokens: maxTokens}, nil
}
