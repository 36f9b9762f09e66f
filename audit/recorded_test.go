package audit_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/transcript"
	"github.com/sessionlog/sessionlog/wire/recorded"
)

// exchange is one recorded exchange of a test session: a request body
// and its answer.
type exchange struct {
	api, body, answer string
	streamed          bool
}

// recordedSession stores a session as the recording gateway records it
// (docs/gateway.md#what-is-recorded), built with package recorded's builders: per exchange the
// body's new chunks, the wire/request, the answer's new chunks and the
// wire/response; with mapped, the events a transcript.Lane maps from
// them follow the wire/request and the wire/response, as the gateway's
// mapping writes them.
func recordedSession(t testing.TB, st eventlog.Store, id, parent string, mapped bool, xs ...exchange) eventlog.Head {
	t.Helper()
	var o codec.Object
	o.Str("type", "session").Int("version", 0).Str("id", id).Number("createdAt", 1)
	if parent != "" {
		o.Str("parentSession", parent)
	}
	var gw codec.Object
	gw.Str("upstream", "test")
	o.Value("gateway", gw.Bytes())
	h, err := codec.DecodeSessionHeader(o.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var evs []codec.Event
	have := map[recorded.Digest]int64{} // a chunk's seq
	add := func(typ string, data []byte) int64 {
		ev, err := codec.NewEvent(typ, int64(len(evs)), 1, data, codec.SurfaceOp{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
		return ev.Seq
	}
	// chunks records b's chunks (two halves) the session lacks, and
	// returns the runs of chunk seqs that make b.
	chunks := func(b string) []recorded.Run {
		var runs []recorded.Run
		for _, p := range []string{b[:len(b)/2], b[len(b)/2:]} {
			d := recorded.Sum([]byte(p))
			seq, ok := have[d]
			if !ok {
				var c codec.Object
				recorded.AppendChunk(&c, d, []byte(p))
				seq = add(recorded.TypeChunk, c.Bytes())
				have[d] = seq
			}
			runs = recorded.AppendRun(runs, seq)
		}
		return runs
	}
	lanes := map[string]*transcript.Lane{}
	for _, x := range xs {
		q := recorded.Request{API: x.api, Method: "POST", Path: "/v1/messages", Chunks: chunks(x.body),
			Size: int64(len(x.body)), Digest: recorded.Sum([]byte(x.body))}
		var d codec.Object
		q.AppendData(&d)
		seq := add(recorded.TypeRequest, d.Bytes())
		var lane *transcript.Lane
		if mapped {
			root, err := transcript.Root(x.api, []byte(x.body))
			if err != nil {
				t.Fatal(err)
			}
			if lane = lanes[root]; lane == nil {
				if lane, err = transcript.NewLane(x.api); err != nil {
					t.Fatal(err)
				}
				lanes[root] = lane
			}
			m, _, err := lane.MapRequest([]byte(x.body), seq, int64(len(evs)), 1)
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, m...)
		}
		p := recorded.Response{Request: seq, Status: 200, Body: true, Chunks: chunks(x.answer),
			Size: int64(len(x.answer)), Digest: recorded.Sum([]byte(x.answer)), Streamed: x.streamed}
		d.Reset()
		p.AppendData(&d)
		add(recorded.TypeResponse, d.Bytes())
		if mapped {
			a := transcript.NewAnswer(x.api, 200, x.streamed)
			a.Feed([]byte(x.answer))
			a.End()
			m, err := lane.MapAnswer(a, seq, int64(len(evs)), 1)
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, m...)
		}
	}
	src := events(evs)
	if _, err := st.Import(context.Background(), h, &src); err != nil {
		t.Fatal(err)
	}
	return head(t, st, id)
}

// Anthropic-shaped bodies: tools, a system prompt, messages, cache
// markers that move.
const (
	aTools   = `[{"name":"read","description":"read a file","input_schema":{"type":"object"}}]`
	aTools2  = `[{"name":"read","description":"read a file","input_schema":{"type":"object"}},{"name":"write","input_schema":{"type":"object"}}]`
	aSystem  = `"You are a terse assistant."`
	aSystem2 = `"You are a verbose assistant."`
	aMark    = `,"cache_control":{"type":"ephemeral"}`
)

func anthropicBody(tools, system string, msgs ...string) string {
	return `{"model":"claude","max_tokens":1000,"stream":true,"tools":` + tools + `,"system":` + system + `,"messages":[` + strings.Join(msgs, ",") + `]}`
}

func userText(s string, marked bool) string {
	if marked {
		return `{"role":"user","content":[{"type":"text","text":"` + s + `"` + aMark + `}]}`
	}
	return `{"role":"user","content":"` + s + `"}`
}

func assistantText(s string) string {
	return `{"role":"assistant","content":[{"type":"text","text":"` + s + `"}]}`
}

// anthropicAnswer is a streamed answer whose usage reports cache reads.
func anthropicAnswer(text string, input, read int) string {
	return "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude\",\"content\":[],\"usage\":{\"input_tokens\":" +
		itoa(int64(input)) + ",\"cache_read_input_tokens\":" + itoa(int64(read)) + ",\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + text + "\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
}

// anthropicSession is a Claude Code-shaped session of six requests: the
// marker on the last message moves each time (and the message it left
// becomes a plain string), then the system prompt changes, an earlier
// answer is edited, a tool is added.
func anthropicSession() []exchange {
	u0, a1, u2, a3, u4, a5, u6 := "hello", "hi", "again", "sure", "more", "ok", "last"
	ans := func(text string, in, read int) string { return anthropicAnswer(text, in, read) }
	var xs []exchange
	req := func(tools, system string, msgs ...string) {
		xs = append(xs, exchange{api: transcript.APIAnthropic, body: anthropicBody(tools, system, msgs...), streamed: true})
	}
	req(aTools, aSystem, userText(u0, true))
	req(aTools, aSystem, userText(u0, false), assistantText(a1), userText(u2, true))
	req(aTools, aSystem2, userText(u0, false), assistantText(a1), userText(u2, false), assistantText(a3), userText(u4, true))
	req(aTools, aSystem2, userText(u0, false), assistantText("HI"), userText(u2, false), assistantText(a3), userText(u4, false), assistantText(a5), userText(u6, true))
	req(aTools2, aSystem2, userText(u0, false), assistantText("HI"), userText(u2, false), assistantText(a3), userText(u4, false), assistantText(a5), userText(u6, false), assistantText("done"), userText("bye", true))
	answers := []string{ans(a1, 100, 0), ans(a3, 20, 90), ans(a5, 120, 40), ans("done", 150, 30), ans("bye", 160, 0)}
	for i := range xs {
		xs[i].answer = answers[i]
	}
	return xs
}

// TestCacheRecorded checks the cache report of a recorded session
// (docs/gateway.md#cache-audit): a row per exchange, computed on the recorded bodies; the moved
// marker shares the whole previous request (markers), the changed system
// prompt stops the prefix after the tools and names the offset, the
// edited answer names its index, the new tool shares nothing; the cache
// reads and input tokens are the answers' usage; the totals give the
// reads ÷ input and the bytes re-sent although unchanged. Mapped, each
// row names its step.
func TestCacheRecorded(t *testing.T) {
	for _, mapped := range []bool{false, true} {
		name := "bytes"
		if mapped {
			name = "mapped"
		}
		t.Run(name, func(t *testing.T) {
			st := openStore(t)
			xs := anthropicSession()
			h := recordedSession(t, st, "gw-a", "", mapped, xs...)
			rows, tot := allRows(t, st, h, audit.Window{})
			want := []struct {
				reason        string
				offset, index int
				read, input   float64
			}{
				{reason: "first", index: -1, read: 0, input: 100},
				{reason: "markers", index: -1, read: 90, input: 110},
				{reason: "system", offset: len("You are a "), index: -1, read: 40, input: 160},
				{reason: "edited", index: 1, read: 30, input: 180},
				{reason: "tools", index: -1, read: 0, input: 160},
			}
			if len(rows) != len(want) {
				t.Fatalf("%d rows, want %d", len(rows), len(want))
			}
			for i, w := range want {
				r := rows[i]
				if r.Exchange != i+1 || r.Reason != w.reason || r.Offset != w.offset || r.Index != w.index {
					t.Errorf("row %d: exchange %d %s offset %d index %d, want %s offset %d index %d", i, r.Exchange, r.Reason, r.Offset, r.Index, w.reason, w.offset, w.index)
				}
				if r.Bytes != len(xs[i].body) {
					t.Errorf("row %d: %d bytes, want %d", i, r.Bytes, len(xs[i].body))
				}
				if !r.HasCacheRead || r.CacheRead != w.read || !r.HasInput || r.InputTokens != w.input {
					t.Errorf("row %d: cache read %v (%v), input %v (%v), want %v of %v", i, r.CacheRead, r.HasCacheRead, r.InputTokens, r.HasInput, w.read, w.input)
				}
				if mapped != (r.Start >= 0) || mapped && (r.Step != 1 || i > 0 && r.Turn <= rows[i-1].Turn) {
					t.Errorf("row %d: step %s at %d (mapped %v)", i, r.Ref, r.Start, mapped)
				}
			}
			// markers: everything the previous request held is shared.
			if got, want := rows[1].Reusable, len(aTools)+len(aSystem)+len(userText("hello", false)); got != want {
				t.Errorf("markers row reusable %d, want the tools, system and first message, %d", got, want)
			}
			if rows[2].Reusable != len(aTools) || rows[2].Unchanged == 0 {
				t.Errorf("system row: reusable %d (want the tools, %d), unchanged %d", rows[2].Reusable, len(aTools), rows[2].Unchanged)
			}
			if rows[4].Reusable != 0 || rows[4].Unchanged == 0 || rows[4].UnchangedTokens == 0 {
				t.Errorf("tools row: reusable %d, unchanged %d (%d tokens)", rows[4].Reusable, rows[4].Unchanged, rows[4].UnchangedTokens)
			}
			if !tot.Recorded || tot.Exchanges != 5 || tot.CacheRead != 160 || tot.Input != 710 {
				t.Errorf("totals %+v", tot)
			}
			if r := tot.CacheReadRatio(); r != 160.0/710 {
				t.Errorf("cache read ratio %v", r)
			}
			var sum int64
			for _, r := range rows {
				sum += int64(r.Unchanged)
			}
			if tot.Unchanged != sum || sum == 0 {
				t.Errorf("total unchanged %d, rows sum %d", tot.Unchanged, sum)
			}
			// A window counts exchanges; the totals still name them all.
			part, ptot := allRows(t, st, h, audit.Window{From: 3, Limit: 1})
			if len(part) != 1 || part[0].Exchange != 4 || ptot.Exchanges != 5 || ptot.Requests != 1 {
				t.Errorf("window: %d rows, totals %+v", len(part), ptot)
			}
		})
	}
}

// TestCacheRecordedJSON checks a recorded row's and the totals' JSON
// lines.
func TestCacheRecordedJSON(t *testing.T) {
	st := openStore(t)
	h := recordedSession(t, st, "gw-j", "", false, anthropicSession()[1:3]...)
	rows, tot := allRows(t, st, h, audit.Window{})
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	got := string(rows[1].AppendJSON(nil))
	want := `{"exchange":2,"requestSeq":`
	if !strings.HasPrefix(got, want) || !strings.Contains(got, `"api":"anthropic-messages","turn":null,"step":null,"stepStartSeq":null,"bytes":`) ||
		!strings.Contains(got, `"reason":"system","offset":10,"cacheReadTokens":40,"inputTokens":160}`) {
		t.Errorf("row JSON %s", got)
	}
	if !strings.HasPrefix(string(rows[0].AppendJSON(nil)), `{"exchange":1,`) || !strings.Contains(string(rows[0].AppendJSON(nil)), `"reason":"first"`) {
		t.Errorf("first row JSON %s", rows[0].AppendJSON(nil))
	}
	tj := string(tot.AppendJSON(nil))
	if !strings.HasPrefix(tj, `{"total":{"requests":2,"bytes":`) || !strings.Contains(tj, `"exchanges":2,"unchanged":`) ||
		!strings.HasSuffix(tj, `"cacheReadTokens":130,"inputTokens":270,"cacheReadRatio":0.48148148148148145}}`) {
		t.Errorf("totals JSON %s", tj)
	}
}

// Codex-shaped bodies (Responses, responses-lite): the tools in an
// additional_tools item, a client_metadata map re-ordered per request.
func codexBody(meta string, items ...string) string {
	return `{"model":"gpt-5","instructions":null,"input":[{"type":"additional_tools","tools":[{"type":"function","name":"shell","parameters":{"type":"object"}}]},` +
		`{"type":"message","role":"developer","content":[{"type":"input_text","text":"base prompt"}]},` + strings.Join(items, ",") +
		`],"stream":false,"client_metadata":` + meta + `,"prompt_cache_key":"k"}`
}

func codexAnswer(text string, input, cached int) string {
	return `{"id":"r","object":"response","status":"completed","model":"gpt-5","output":[{"type":"message","id":"m","role":"assistant","status":"completed","content":[{"type":"output_text","text":"` +
		text + `","annotations":[]}]}],"usage":{"input_tokens":` + itoa(int64(input)) + `,"input_tokens_details":{"cached_tokens":` + itoa(int64(cached)) + `},"output_tokens":3,"total_tokens":0}}`
}

// TestCacheRecordedCodex: a re-ordered map outside the conversation is
// no break (none), the whole previous request is shared, and the
// Responses API's cached_tokens are the cache reads; a request of another
// conversation in the session is a new lane, and the first request of a
// session with a parent is one too.
func TestCacheRecordedCodex(t *testing.T) {
	st := openStore(t)
	u0 := `{"type":"message","role":"user","content":[{"type":"input_text","text":"list files"}]}`
	a1 := `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a b"}]}`
	u2 := `{"type":"message","role":"user","content":[{"type":"input_text","text":"thanks"}]}`
	side := `{"type":"message","role":"user","content":[{"type":"input_text","text":"title this"}]}`
	xs := []exchange{
		{api: transcript.APIResponses, body: codexBody(`{"a":"1","b":"2"}`, u0), answer: codexAnswer("a b", 500, 0)},
		{api: transcript.APIResponses, body: codexBody(`{"b":"2","a":"1"}`, u0, a1, u2), answer: codexAnswer("ok", 540, 480)},
		{api: transcript.APIResponses, body: codexBody(`{"a":"1","b":"2"}`, side), answer: codexAnswer("Files", 300, 0)},
	}
	h := recordedSession(t, st, "gw-c", "gw-parent", false, xs...)
	rows, _ := allRows(t, st, h, audit.Window{})
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	if rows[0].Reason != audit.ReasonNewLane || rows[1].Reason != "none" || rows[2].Reason != audit.ReasonNewLane {
		t.Errorf("reasons %s %s %s, want new-lane none new-lane", rows[0].Reason, rows[1].Reason, rows[2].Reason)
	}
	// The items before the assistant's, without the commas between them.
	wantShared := strings.Index(xs[1].body, `,{"type":"message","role":"assistant"`) - strings.Index(xs[1].body, `[{"type":"additional_tools"`) - 1 - 2
	if rows[1].Reusable != wantShared {
		t.Errorf("reusable %d, want %d (the tools, developer and first user items)", rows[1].Reusable, wantShared)
	}
	if rows[1].CacheRead != 480 || rows[1].InputTokens != 540 {
		t.Errorf("cache read %v of %v, want 480 of 540", rows[1].CacheRead, rows[1].InputTokens)
	}
}

// TestCacheRecordedUnmapped: an exchange whose body the mapping refuses
// is a row that shares nothing (unmapped), and the next request of the
// conversation is compared with the last one that mapped; an exchange of
// another API (--record-all) is no row.
func TestCacheRecordedUnmapped(t *testing.T) {
	st := openStore(t)
	xs := anthropicSession()[:2]
	bad := exchange{api: transcript.APIAnthropic, body: `{"model":"claude","messages":"\u001b[2J not a list"}`, answer: anthropicAnswer("x", 1, 0), streamed: true}
	other := exchange{api: recorded.APIOther, body: `{"anything":true}`, answer: `{}`}
	h := recordedSession(t, st, "gw-u", "", false, xs[0], bad, other, xs[1])
	rows, tot := allRows(t, st, h, audit.Window{})
	if len(rows) != 3 || tot.Exchanges != 3 {
		t.Fatalf("%d rows, %d exchanges; want 3", len(rows), tot.Exchanges)
	}
	if rows[1].Reason != audit.ReasonUnmapped || rows[1].Reusable != 0 || rows[1].Exchange != 2 {
		t.Errorf("bad body: %+v", rows[1])
	}
	if rows[2].Reason != "markers" || rows[2].Exchange != 4 || rows[2].Reusable == 0 {
		t.Errorf("after it: %+v", rows[2])
	}
}
