package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// claudeAnswer is a streamed Anthropic answer whose usage reports 30
// uncached input tokens and 90 cache reads.
const claudeAnswer = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude\",\"content\":[],\"usage\":{\"input_tokens\":30,\"cache_read_input_tokens\":90,\"output_tokens\":1}}}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

// claudeBody is a Claude Code-shaped request: messages first, then the
// system prompt and tools; the last message carries the cache marker.
func claudeBody(system string, msgs ...string) []byte {
	for i, m := range msgs {
		if i == len(msgs)-1 {
			msgs[i] = `{"role":"user","content":[{"type":"text","text":"` + m + `","cache_control":{"type":"ephemeral"}}]}`
		} else if i%2 == 0 {
			msgs[i] = `{"role":"user","content":"` + m + `"}`
		} else {
			msgs[i] = `{"role":"assistant","content":[{"type":"text","text":"` + m + `"}]}`
		}
	}
	return []byte(`{"model":"claude","messages":[` + strings.Join(msgs, ",") + `],"system":[{"type":"text","text":"` + system +
		`"}],"tools":[{"name":"Read","input_schema":{"type":"object"}}],"metadata":{"user_id":"u"},"max_tokens":32000,"stream":true}`)
}

// TestCacheRecordedGateway records a Claude Code-shaped session through
// logtool gateway (a moved marker, then a changed system prompt, then an
// edited answer) and reads its cache audit: logtool cache --json gives a
// row per exchange with its break and the answer's cache reads, then the
// totals; the text form has the same rows and the totals' ratios.
func TestCacheRecordedGateway(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sessions.db")
	model := newFakeModel(t, []byte(claudeAnswer))
	url, stop := startGateway(t, db, "--upstream", "anthropic="+model.URL)
	hdr := map[string]string{"X-Claude-Code-Session-Id": "cc", "Anthropic-Version": "2023-06-01"}
	for _, b := range [][]byte{
		claudeBody("Be terse.", "hello"),
		claudeBody("Be terse.", "hello", "ok 1", "more"),
		claudeBody("Be brief.", "hello", "ok 1", "more", "ok 2", "last"),
		claudeBody("Be brief.", "hello", "OK 1", "more", "ok 2", "last", "ok 3", "end"),
	} {
		postTo(t, url+"/v1/messages?beta=true", hdr, b)
	}
	if code, stderr := stop(); code != 0 {
		t.Fatalf("gateway exit %d: %s", code, stderr)
	}
	_, ls, _ := logtoolOut("--db", db, "ls")
	id := regexp.MustCompile(`gw-[0-9a-f]+`).FindString(string(ls))
	c, out, errs := logtoolOut("--db", db, "cache", id, "--json")
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if c != 0 || len(lines) != 5 {
		t.Fatalf("cache --json: exit %d, %s %s", c, out, errs)
	}
	want := []string{
		`"reason":"first","cacheReadTokens":90,"inputTokens":120}`,
		`"reason":"markers","cacheReadTokens":90,"inputTokens":120}`,
		`"reason":"system","offset":3,"cacheReadTokens":90,"inputTokens":120}`,
		`"reason":"edited","index":1,"cacheReadTokens":90,"inputTokens":120}`,
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], `{"exchange":`+itoa(int64(i+1))+`,"requestSeq":`) || !strings.HasSuffix(lines[i], w) {
			t.Errorf("row %d: %s, want …%s", i+1, lines[i], w)
		}
	}
	if !strings.HasPrefix(lines[4], `{"total":{"requests":4,`) || !strings.HasSuffix(lines[4], `"cacheReadTokens":360,"inputTokens":480,"cacheReadRatio":0.75}}`) {
		t.Errorf("totals: %s", lines[4])
	}
	c, out, errs = logtoolOut("--db", db, "cache", id)
	text := string(out)
	for _, w := range []string{"exchange", " first\n", " markers\n", " system@3\n", " edited#1\n", "reusable over 4 exchanges\n",
		"cache reads: 75.0% of 480 input tokens reported\n", "re-sent although unchanged: "} {
		if !strings.Contains(text, w) {
			t.Errorf("cache text lacks %q:\n%s", w, text)
		}
	}
	if c != 0 || errs != "" {
		t.Errorf("cache: exit %d, stderr %s", c, errs)
	}
}
