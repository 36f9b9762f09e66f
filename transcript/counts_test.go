package transcript_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/transcript"
)

// counts are what a file holds, or what its import mapped.
type counts struct {
	Prompts, ToolCalls, ToolResults, Compactions int
	Usage                                        transcript.Usage
}

// TestCounts checks that prompts, tool calls, tool results, compactions
// and usage are mapped one for one: the expected counts are computed here
// from the file itself with encoding/json, by the rules of docs/transcripts.md, and
// compared with the events the store holds after import (read back as
// exported JSONL).
func TestCounts(t *testing.T) {
	ctx := context.Background()
	for f, files := range sharedFiles(t) {
		for _, path := range files {
			t.Run(filepath.Base(path), func(t *testing.T) {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				var want counts
				if f == transcript.Codex {
					want = codexCounts(data)
				} else {
					want = claudeCounts(data)
				}
				st := openStore(t)
				s := importFile(t, st, f, path, transcript.Options{})
				got := storedCounts(t, ctx, st, s.Header.ID)
				if got != want {
					t.Errorf("mapped %+v\nfile   %+v", got, want)
				}
				t.Logf("%+v", got)
			})
		}
	}
}

// lines decodes each line of data that is a JSON object (nil otherwise).
func lines(data []byte) []map[string]any {
	var out []map[string]any
	for _, l := range bytes.SplitAfter(data, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var m map[string]any
		d := json.NewDecoder(bytes.NewReader(l))
		d.UseNumber()
		if !utf8.Valid(l) || d.Decode(&m) != nil {
			// Text that is not UTF-8 is not JSON (docs/format.md#json-text).
			m = nil
		}
		out = append(out, m)
	}
	return out
}

func obj(v any, keys ...string) map[string]any {
	m, _ := v.(map[string]any)
	for _, k := range keys {
		m, _ = m[k].(map[string]any)
	}
	return m
}

func str(m map[string]any, k string) (string, bool) {
	s, ok := m[k].(string)
	return s, ok
}

func num(m map[string]any, k string) (int64, bool) {
	n, ok := m[k].(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return int64(f), err == nil
}

// codexCounts: user message items are prompts; function, custom tool
// and local shell calls with a call id, a name and arguments (input,
// action) are calls, and so is an mcp_tool_call_end whose call id no
// call had, with its result; an output is a result when it answers a
// call of the same turn; compacted records are compactions; usage is the
// sum of each new token_count's last_token_usage or token_usage_record's
// usage (cached input apart), a line whose cumulative total repeats the
// last one not counted. In a turn (the lines up to a task_complete or
// turn_aborted) without response_item messages, calls and outputs, its
// user_message events are the prompts.
func codexCounts(data []byte) counts {
	var c counts
	ls := lines(data)
	// The turns that hold response_item conversation lines.
	var itemTurns []bool
	turn := 0
	for _, m := range ls {
		typ, _ := str(m, "type")
		pt, _ := str(obj(m, "payload"), "type")
		for len(itemTurns) <= turn {
			itemTurns = append(itemTurns, false)
		}
		switch {
		case typ == "event_msg" && (pt == "task_complete" || pt == "turn_aborted"):
			turn++
		case typ == "response_item" && pt != "additional_tools" && pt != "ghost_snapshot" && pt != "tool_search_call" &&
			pt != "tool_search_output" && pt != "image_generation_call" && pt != "agent_message" && pt != "":
			itemTurns[turn] = true
		}
	}
	open := map[string]bool{}
	called := map[string]bool{}
	var lastTotal string
	turn = 0
	for _, m := range ls {
		typ, _ := str(m, "type")
		p := obj(m, "payload")
		pt, _ := str(p, "type")
		events := turn >= len(itemTurns) || !itemTurns[turn]
		switch {
		case typ == "compacted":
			if _, ok := str(p, "message"); ok {
				c.Compactions++
			}
			open = map[string]bool{}
		case typ == "event_msg" && (pt == "task_started" || pt == "task_complete" || pt == "turn_aborted"):
			open = map[string]bool{}
			if pt != "task_started" {
				turn++
			}
		case typ == "response_item" && pt == "message" && p["role"] == "user":
			c.Prompts++
		case typ == "event_msg" && pt == "user_message" && events:
			if _, ok := str(p, "message"); ok {
				c.Prompts++
			}
		case typ == "response_item" && (pt == "function_call" || pt == "custom_tool_call" || pt == "local_shell_call"):
			id, ok := str(p, "call_id")
			_, okName := str(p, "name")
			var okArgs bool
			switch pt {
			case "custom_tool_call":
				_, okArgs = str(p, "input")
			case "local_shell_call":
				if !ok {
					id, ok = str(p, "id")
				}
				okName = true
				okArgs = obj(p, "action") != nil
			default:
				_, okArgs = str(p, "arguments")
			}
			if ok && okName && okArgs && id != "" && !called[id] {
				c.ToolCalls++
				open[id], called[id] = true, true
			}
		case typ == "event_msg" && pt == "mcp_tool_call_end":
			id, ok := str(p, "call_id")
			inv := obj(p, "invocation")
			_, ok1 := str(inv, "server")
			_, ok2 := str(inv, "tool")
			res := obj(p, "result")
			_, isErr := res["Err"]
			_, isList := obj(res, "Ok")["content"].([]any)
			if ok && ok1 && ok2 && id != "" && !called[id] && (isErr || isList) {
				c.ToolCalls++
				c.ToolResults++
				called[id] = true
			}
		case typ == "response_item" && (pt == "function_call_output" || pt == "custom_tool_call_output" || pt == "local_shell_call_output"):
			id, _ := str(p, "call_id")
			if open[id] {
				c.ToolResults++
				delete(open, id)
			}
		case typ == "event_msg" && pt == "token_count", typ == "token_usage_record":
			last, totalObj := obj(p, "info", "last_token_usage"), obj(p, "info", "total_token_usage")
			if typ == "token_usage_record" {
				last, totalObj = obj(p, "usage"), obj(p, "thread_token_usage")
			}
			in, ok1 := num(last, "input_tokens")
			out, ok2 := num(last, "output_tokens")
			if !ok1 || !ok2 {
				continue
			}
			var totals []int64
			for _, k := range []string{"input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens"} {
				n, _ := num(totalObj, k)
				totals = append(totals, n)
			}
			total, _ := json.Marshal(totals)
			if totalObj != nil && string(total) == lastTotal {
				continue
			}
			if totalObj != nil {
				lastTotal = string(total)
			}
			cached, _ := num(last, "cached_input_tokens")
			write, _ := num(last, "cache_write_input_tokens")
			r, _ := num(last, "reasoning_output_tokens")
			c.Usage.Input += max(in-cached-write, 0)
			c.Usage.Output += out
			c.Usage.CacheRead += cached
			c.Usage.CacheWrite += write
			c.Usage.Reasoning += r
		}
	}
	return c
}

// claudeCounts walks the branch that ends at the last line's leaf (a
// parent is the latest earlier line with its uuid, else the line before),
// then counts on it: user lines with plain content, every block an object
// with a type (prompts), tool_use
// blocks, tool_result blocks answering a call not answered yet,
// isCompactSummary lines, and the usage of the last line of each
// message.id.
func claudeCounts(data []byte) counts {
	ls := lines(data)
	parent := make([]int, len(ls))
	latest := map[string]int{}
	leaf, lastUUID, main := -1, -1, 0
	for i, m := range ls {
		if m == nil {
			parent[i] = -1
			continue
		}
		if m["type"] == "last-prompt" {
			if l, ok := latest[m["leafUuid"].(string)]; ok {
				leaf = l
			}
			parent[i] = -1
			continue
		}
		uuid, _ := str(m, "uuid")
		if uuid == "" {
			parent[i] = -1
			continue
		}
		p, ok := str(m, "parentUuid")
		if !ok {
			p, _ = str(m, "logicalParentUuid")
		}
		if l, ok := latest[p]; ok && p != "" {
			parent[i] = l
		} else {
			parent[i] = lastUUID
		}
		latest[uuid], lastUUID = i, i
		if m["isSidechain"] != true {
			leaf = i
			main++
		}
	}
	if main == 0 && leaf < 0 {
		leaf = lastUUID
	}
	on := make([]bool, len(ls))
	for i := leaf; i >= 0; i = parent[i] {
		on[i] = true
	}
	var c counts
	calls := map[string]bool{}
	usage := map[string]map[string]any{}
	var order []string
	for i, m := range ls {
		if !on[i] || m["isSidechain"] == true && main > 0 {
			continue
		}
		msg := obj(m, "message")
		switch m["type"] {
		case "user":
			if m["isCompactSummary"] == true {
				c.Compactions++
				continue
			}
			blocks, isArr := msg["content"].([]any)
			_, isStr := msg["content"].(string)
			plain := isStr
			if isArr {
				plain = true
				for _, b := range blocks {
					bm, _ := b.(map[string]any)
					if _, ok := str(bm, "type"); !ok {
						// Not a content block (docs/format.md#content-blocks): the line is kept.
						plain = false
					}
					if bm["type"] == "tool_result" {
						plain = false
						if id, _ := str(bm, "tool_use_id"); calls[id] {
							c.ToolResults++
							delete(calls, id)
						}
					}
				}
			}
			if plain {
				c.Prompts++
			}
		case "assistant":
			blocks, _ := msg["content"].([]any)
			for _, b := range blocks {
				bm, _ := b.(map[string]any)
				if bm["type"] != "tool_use" {
					continue
				}
				id, ok1 := str(bm, "id")
				_, ok2 := str(bm, "name")
				if ok1 && ok2 && id != "" && bm["input"] != nil {
					c.ToolCalls++
					calls[id] = true
				}
			}
			if u := obj(msg, "usage"); u != nil {
				key, _ := str(msg, "id")
				if key == "" {
					key = string(rune(i)) + "\x00line"
				}
				if _, seen := usage[key]; !seen {
					order = append(order, key)
				}
				usage[key] = u
			}
		}
	}
	for _, k := range order {
		u := usage[k]
		in, ok1 := num(u, "input_tokens")
		out, ok2 := num(u, "output_tokens")
		if !ok1 || !ok2 {
			continue
		}
		r, _ := num(u, "cache_read_input_tokens")
		w, _ := num(u, "cache_creation_input_tokens")
		c.Usage.Input += in
		c.Usage.Output += out
		c.Usage.CacheRead += r
		c.Usage.CacheWrite += w
	}
	return c
}

// storedCounts reads the session back as canonical JSONL and counts its
// mapped events.
func storedCounts(t *testing.T, ctx context.Context, st *boltlog.Log, id string) counts {
	t.Helper()
	it, err := st.Scan(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var c counts
	for {
		ev, err := it.Next()
		if err == io.EOF {
			return c
		}
		if err != nil {
			t.Fatal(err)
		}
		line, err := ev.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Type string
			Data struct {
				Source struct{ Kind, Plugin string }
				Usage  map[string]int64
				Origin *struct {
					Format string
					Line   int
				}
			}
		}
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatal(err)
		}
		if e.Type != transcript.TypeSourceLine && e.Data.Origin == nil {
			t.Errorf("seq %d: mapped %s without origin", ev.Seq, e.Type)
		}
		switch e.Type {
		case "user/message":
			if e.Data.Source.Plugin != "compact" {
				c.Prompts++
			}
		case "tool/call":
			c.ToolCalls++
		case "tool/result":
			c.ToolResults++
		case "compact/summary":
			c.Compactions++
		case "assistant/message":
			u := e.Data.Usage
			c.Usage.Input += u["inputTokens"]
			c.Usage.Output += u["outputTokens"]
			c.Usage.CacheRead += u["cacheReadTokens"]
			c.Usage.CacheWrite += u["cacheWriteTokens"]
			c.Usage.Reasoning += u["reasoningTokens"]
		}
	}
}
