package ui_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/gateway"
	"github.com/sessionlog/sessionlog/ui"
)

// recordedAnswer is a streamed Anthropic answer reporting 40 cache reads
// of 100 input tokens.
const recordedAnswer = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude\",\"content\":[],\"usage\":{\"input_tokens\":60,\"cache_read_input_tokens\":40,\"output_tokens\":1}}}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

// recordedStore records three Anthropic requests through the recording
// gateway (gateway.New over a bbolt store, an httptest upstream): the
// first, one whose cache marker moved, one with a new tool whose system
// prompt carries hostile text. It returns the store, reopened read-only,
// and the session's id.
func recordedStore(t *testing.T) (eventlog.Store, string) {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, recordedAnswer)
	}))
	defer up.Close()
	path := filepath.Join(t.TempDir(), "sessions.db")
	st, err := sessionlog.Open(context.Background(), path, &eventlog.Options{NoSync: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse(up.URL)
	gw, err := gateway.New(gateway.Options{Store: st, Upstreams: []gateway.Upstream{{Name: "anthropic", URL: base}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	tool := `{"name":"read","input_schema":{"type":"object"}}`
	sys := `"` + strings.ReplaceAll(hostileSystem, `"`, `\"`) + `"`
	for _, b := range []string{
		`{"model":"claude","max_tokens":100,"tools":[` + tool + `],"system":"s","messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]}`,
		`{"model":"claude","max_tokens":100,"tools":[` + tool + `],"system":"s","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"},{"role":"user","content":[{"type":"text","text":"more","cache_control":{"type":"ephemeral"}}]}]}`,
		`{"model":"claude","max_tokens":100,"tools":[` + tool + `,{"name":"write"}],"system":` + sys + `,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"},{"role":"user","content":"more"},{"role":"assistant","content":"ok"},{"role":"user","content":"end"}]}`,
	} {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", bytes.NewReader([]byte(b)))
		req.Header.Set("X-Claude-Code-Session-Id", "cc")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("gateway answered %d", resp.StatusCode)
		}
	}
	srv.Close()
	gw.Wait()
	ids, err := st.Sessions(context.Background())
	if err != nil || len(ids) != 1 {
		t.Fatalf("sessions %v, %v", ids, err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := boltlog.Open(path, &eventlog.Options{ReadOnly: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	return ro, ids[0].Header.ID
}

// TestCacheRecordedPage: the cache chart and its API show a recorded
// session's rows, one per exchange, named by the step the gateway mapped
// it to, with their breaks and the cache
// reads the answers reported, and a page of them.
func TestCacheRecordedPage(t *testing.T) {
	st, id := recordedStore(t)
	srv, err := ui.New(st, &ui.Options{})
	if err != nil {
		t.Fatal(err)
	}
	get := func(target string) (int, string) {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, localRequest(http.MethodGet, target, nil))
		return rec.Code, rec.Body.String()
	}
	code, page := get("/s/" + id + "/cache")
	for _, w := range []string{"<svg", "1.1 first", "2.1 markers", "3.1 tools", "<td>markers</td>", "recorded exchanges",
		"cache-read tokens of 300 input tokens (40.0%)", "Exchanges 1–3 of 3"} {
		if !strings.Contains(page, w) {
			t.Errorf("cache page lacks %q", w)
		}
	}
	if code != 200 {
		t.Errorf("cache page: %d", code)
	}
	for _, m := range markers {
		if strings.Contains(page, m) {
			t.Errorf("cache page holds %q", m)
		}
	}
	code, page = get("/s/" + id + "/cache?from=1&limit=1")
	if code != 200 || !strings.Contains(page, "2.1 markers") || strings.Contains(page, "1.1 first") || !strings.Contains(page, "for the exchanges shown") {
		t.Errorf("cache page 2: %d\n%s", code, page)
	}
	code, api := get("/api/sessions/" + id + "/cache")
	if code != 200 || strings.Count(api, `{"exchange":`) != 3 || !strings.Contains(api, `"reason":"markers","cacheReadTokens":40,"inputTokens":100}`) ||
		!strings.Contains(api, `"cacheReadRatio":0.4`) {
		t.Errorf("api cache: %d %s", code, api)
	}
}
