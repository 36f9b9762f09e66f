package fakemodel

import (
	"encoding/json"
	"net/http"
)

// geminiAnswer writes a reply as Gemini's generateContent API does: one
// JSON object, or with streamGenerateContent?alt=sse the same object
// split into data events (text in pieces, each call whole).
func geminiAnswer(w http.ResponseWriter, a answer, stream bool) {
	var parts []any
	if a.Text != "" || len(a.Calls) == 0 {
		parts = append(parts, obj{"text", a.Text})
	}
	for _, c := range a.Calls {
		parts = append(parts, obj{"functionCall", obj{"name", c.Name, "args", json.RawMessage(c.Arguments)}})
	}
	usage := obj{"promptTokenCount", a.in, "candidatesTokenCount", a.out, "totalTokenCount", a.in + a.out}
	chunk := func(parts []any, finish bool) obj {
		cand := obj{"content", obj{"parts", parts, "role", "model"}, "index", 0}
		if finish {
			cand = append(cand, "finishReason", "STOP")
		}
		out := obj{"candidates", []any{cand}}
		if finish {
			out = append(out, "usageMetadata", usage)
		}
		return append(out, "modelVersion", a.modelName())
	}
	if !stream {
		writeJSON(w, chunk(parts, true))
		return
	}
	s := newSSE(w)
	var text []string
	if a.Text != "" {
		text = pieces(a.Text)
	}
	for i, p := range text {
		last := i == len(text)-1 && len(a.Calls) == 0
		s.event("", chunk([]any{obj{"text", p}}, last))
	}
	for i, c := range a.Calls {
		last := i == len(a.Calls)-1
		s.event("", chunk([]any{obj{"functionCall", obj{"name", c.Name, "args", json.RawMessage(c.Arguments)}}}, last))
	}
	if len(text) == 0 && len(a.Calls) == 0 {
		s.event("", chunk([]any{obj{"text", ""}}, true))
	}
}
