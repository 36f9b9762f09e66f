package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/gateway"
	"github.com/sessionlog/sessionlog/transcript"
	"github.com/sessionlog/sessionlog/ui"
)

// codexRollout is a Codex rollout of session cx-1: one prompt, one
// answer, its tools in an additional_tools item.
const codexRollout = `{"timestamp":"2026-01-02T03:04:05.000Z","type":"session_meta","payload":{"id":"cx-1","timestamp":"2026-01-02T03:04:05.000Z"}}
{"timestamp":"2026-01-02T03:04:05.100Z","type":"turn_context","payload":{"model":"gpt-6"}}
{"timestamp":"2026-01-02T03:04:05.200Z","type":"response_item","payload":{"type":"additional_tools","tools":[{"type":"function","name":"exec","parameters":{}}]}}
{"timestamp":"2026-01-02T03:04:05.300Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}
{"timestamp":"2026-01-02T03:04:05.400Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello"}]}}
{"timestamp":"2026-01-02T03:04:06.300Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"again"}]}}
{"timestamp":"2026-01-02T03:04:06.400Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello"}]}}
`

// TestImportedSession: for a session imported from an agent's
// transcript, the step page, its API, the cache chart and the diff page
// say that the request is reconstructed from the transcript and what it
// does not record, and link the session the gateway recorded of the same
// agent session (a request sent through the gateway with Codex's
// Session-Id); the step page does not call its wire bodies what the
// provider received. A session of this engine's own says nothing of it.
func TestImportedSession(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	st, err := sessionlog.Open(ctx, path, &eventlog.Options{NoSync: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := transcript.Open(strings.NewReader(codexRollout), int64(len(codexRollout)), transcript.Codex, transcript.Options{Name: "r.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Import(ctx, s.Header, s); err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"r","object":"response","status":"completed","model":"gpt-6","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello"}]}],"usage":{"input_tokens":5,"output_tokens":1}}`)
	}))
	defer up.Close()
	base, _ := url.Parse(up.URL)
	gw, err := gateway.New(gateway.Options{Store: st, Upstreams: []gateway.Upstream{{Name: "openai", URL: base}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	req, _ := http.NewRequest("POST", srv.URL+"/v1/responses", bytes.NewReader([]byte(`{"model":"gpt-6","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}`)))
	req.Header.Set("Session-Id", "cx-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	srv.Close()
	gw.Wait()
	heads, err := st.Sessions(ctx)
	if err != nil || len(heads) != 2 {
		t.Fatalf("sessions %v, %v", heads, err)
	}
	recorded := heads[0].Header.ID
	if recorded == "cx-1" {
		recorded = heads[1].Header.ID
	}
	u, err := ui.New(st, &ui.Options{Renderers: ui.WireRenderers()})
	if err != nil {
		t.Fatal(err)
	}
	get := func(target string) string {
		rec := httptest.NewRecorder()
		u.ServeHTTP(rec, localRequest(http.MethodGet, target, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", target, rec.Code, rec.Body.String())
		}
		return rec.Body.String()
	}
	note := []string{`id="imported"`, "Reconstructed from the codex transcript this session was imported from",
		"client_metadata", `<a href="/s/` + recorded + `">` + recorded + `</a>`}
	for _, target := range []string{"/s/cx-1/step/1.1", "/s/cx-1/cache", "/s/cx-1/diff"} {
		page := get(target)
		for _, w := range note {
			if !strings.Contains(page, w) {
				t.Errorf("%s lacks %q", target, w)
			}
		}
	}
	if page := get("/s/cx-1/step/1.1"); strings.Contains(page, "would have received") || !strings.Contains(page, "this reconstructed request") {
		t.Errorf("the step page calls its wire bodies what the provider received")
	}
	var api struct {
		Imported *struct {
			Format   string
			Missing  []string
			Recorded []string
		}
	}
	if err := json.Unmarshal([]byte(get("/api/sessions/cx-1/steps/1.1")), &api); err != nil || api.Imported == nil ||
		api.Imported.Format != "codex" || len(api.Imported.Recorded) != 1 || api.Imported.Recorded[0] != recorded || len(api.Imported.Missing) == 0 {
		t.Errorf("the step API's imported: %+v, %v", api.Imported, err)
	}
	if page := get("/s/" + recorded + "/step/1.1"); strings.Contains(page, `id="imported"`) {
		t.Errorf("the recorded session's step page says it is imported")
	}
}
