package wire_test

import (
	"bytes"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/wire"
)

// FuzzTranslate feeds arbitrary bytes to every translator, whole and in
// two pieces split anywhere: no panic, the same chunks and error either
// way, and every block-end or delta names a block that is open. The
// bytes are also read as a Responses answer that was not streamed.
func FuzzTranslate(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\",\"tool_calls\":[{\"index\":3,\"id\":\"a\",\"function\":{\"name\":\"n\",\"arguments\":\"{\"}}]},\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":5}}\n\ndata: [DONE]\n\n"), uint16(17))
	f.Add([]byte("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\"}}\n\nevent: message_stop\ndata: {}\n\n"), uint16(40))
	f.Add([]byte("data: {\"error\":{\"type\":\"x\"}}\r\n\r\n"), uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		for name, r := range translators() {
			whole := translate(r, [][]byte{data})
			k := int(split) % (len(data) + 1)
			if got := translate(r, [][]byte{data[:k], data[k:]}); got != whole {
				t.Fatalf("%s: split at %d:\n%s\nwhole:\n%s", name, k, got, whole)
			}
			tr := r()
			chunks, _ := tr.Feed(nil, data)
			chunks, _ = tr.End(chunks)
			checkChunks(t, name, chunks)
		}
		chunks, _ := wire.TranslateResponsesJSON(nil, data)
		checkChunks(t, "openai-responses JSON", chunks)
	})
}

// checkChunks checks that every delta and block-end names a block that
// was started and not ended yet, and that a block-end's block is JSON.
func checkChunks(t *testing.T, name string, chunks []wire.Chunk) {
	t.Helper()
	started, ended := map[int64]bool{}, map[int64]bool{}
	for _, c := range chunks {
		switch c.Type {
		case wire.ChunkBlockStart:
			started[c.Index] = true
		case wire.ChunkBlockEnd, wire.ChunkTextDelta, wire.ChunkReasoningDelta, wire.ChunkToolCallDelta:
			if !started[c.Index] || ended[c.Index] {
				t.Fatalf("%s: %s of block %d, which is not open", name, c.Type, c.Index)
			}
		}
		if c.Type == wire.ChunkBlockEnd {
			ended[c.Index] = true
			if _, err := codec.FromJSON(nil, c.Block, codec.Limits{}); err != nil {
				t.Fatalf("%s: block-end block is not JSON: %v", name, err)
			}
		}
	}
}

// FuzzRender renders arbitrary requests with both renderers: no panic; a
// body, when there is one, is valid JSON and the same on every render.
func FuzzRender(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a\ud83d"},{"type":"text","text":"\ude00"},{"type":"tool-result","toolCallId":"c","content":[]}]},{"role":"assistant","content":[{"type":"tool-call","id":"c","name":"n","arguments":"{\"a\":1}"}]}],"system":"s","tools":[{"name":"t"}],"maxTokens":9,"stop":[],"sessionId":"x"}`), true)
	f.Add([]byte(`{"model":1,"messages":[{"role":"system","content":[{"type":"text","text":7}]}]}`), false)
	f.Fuzz(func(t *testing.T, request []byte, thinking bool) {
		cfg := `{"config":{"model":"m"}}`
		if thinking {
			cfg = `{"config":{"model":"m","thinking":"enabled","reasoningEffort":"x"}}`
		}
		mp, err := codec.FromJSON(nil, []byte(cfg), codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		h, err := header.Decode(mp)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range wire.Names() {
			r, _ := wire.Lookup(name)
			body, err := r.AppendBody(nil, request, &h)
			if err != nil {
				continue
			}
			if _, err := codec.FromJSON(nil, body, codec.Limits{}); err != nil {
				t.Fatalf("%s: the body is not JSON: %v\n%s", name, err, body)
			}
			again, _ := r.AppendBody([]byte("prefix"), request, &h)
			if !bytes.Equal(again[len("prefix"):], body) {
				t.Fatalf("%s: two renders differ", name)
			}
		}
	})
}
