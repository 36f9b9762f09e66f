package codec_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
)

// Benchmarks of the codec's hot paths against encoding/json on structs
// that mirror the typed views, in the same run:
//
//	go test ./codec -run '^$' -bench . -benchtime 1s -count 5
//
// decode: DecodeRecord + DecodeEvent of a stored record, against
// json.Unmarshal of the line. encode: FromJSON + EncodeRecord of the line,
// against json.Marshal of the decoded struct. export: ToJSON of the stored
// payload, against json.Marshal.

// benchMessage is a typical ~1 KB assistant/message: a text block, a
// tool-call block, provenance, usage and sourceEventSeqs.
var benchMessage = `{"type":"assistant/message","seq":1042,"time":1783352209707,"data":{"turn":12,"step":3,"content":[` +
	`{"type":"text","text":"` + strings.Repeat("I'll read the configuration file and check the limits. ", 10) + `"},` +
	`{"type":"tool-call","id":"call_00_6k0oGSliVHxGSgqBmMEO4311","name":"read","arguments":"{\"file_path\":\"/home/dev/project/config/limits.yaml\",\"offset\":0,\"limit\":200}"}],` +
	`"provenance":{"provider":"deepseek","model":"deepseek-v4-flash"},` +
	`"usage":{"inputTokens":48211,"outputTokens":187,"cacheReadTokens":47104,"reasoningTokens":64}},` +
	`"sourceEventSeqs":[1030,1031,1032,1033,1034,1035,1036,1037,1038,1039,1040,1041],"surfaceOp":"append"}`

// benchChunk is a typical assistant/chunk text-delta.
var benchChunk = `{"type":"assistant/chunk","seq":1031,"time":1783352209690,"data":{"turn":12,"step":3,"chunk":{"type":"text-delta","index":0,"text":" the configuration"}}}`

// jsonEvent mirrors the envelope for encoding/json.
type jsonEvent[D any] struct {
	Type            string          `json:"type"`
	Seq             int64           `json:"seq"`
	Time            float64         `json:"time"`
	Data            D               `json:"data"`
	SourceEventSeqs []int64         `json:"sourceEventSeqs,omitempty"`
	SurfaceOp       json.RawMessage `json:"surfaceOp,omitempty"`
}

type jsonBlock struct {
	Type       string      `json:"type"`
	Text       string      `json:"text,omitempty"`
	ID         string      `json:"id,omitempty"`
	Name       string      `json:"name,omitempty"`
	Arguments  string      `json:"arguments,omitempty"`
	ToolCallID string      `json:"toolCallId,omitempty"`
	Content    []jsonBlock `json:"content,omitempty"`
	IsError    *bool       `json:"isError,omitempty"`
}

type jsonProvenance struct {
	Provider    string          `json:"provider"`
	Model       string          `json:"model"`
	ReplayState json.RawMessage `json:"replayState,omitempty"`
}

type jsonUsage struct {
	InputTokens      int64 `json:"inputTokens"`
	OutputTokens     int64 `json:"outputTokens"`
	CacheReadTokens  int64 `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64 `json:"cacheWriteTokens,omitempty"`
	ReasoningTokens  int64 `json:"reasoningTokens,omitempty"`
}

type jsonAssistantMessage struct {
	Turn       int64           `json:"turn"`
	Step       int64           `json:"step"`
	Content    []jsonBlock     `json:"content"`
	Provenance *jsonProvenance `json:"provenance,omitempty"`
	Usage      *jsonUsage      `json:"usage,omitempty"`
}

type jsonChunk struct {
	Turn  int64 `json:"turn"`
	Step  int64 `json:"step"`
	Chunk struct {
		Type  string `json:"type"`
		Index int64  `json:"index"`
		Text  string `json:"text"`
	} `json:"chunk"`
}

var benchSink int

func benchCases() []struct {
	name string
	line string
	json func([]byte) (interface{}, error)
} {
	return []struct {
		name string
		line string
		json func([]byte) (interface{}, error)
	}{
		{name: "assistant-message", line: benchMessage, json: func(b []byte) (interface{}, error) {
			var ev jsonEvent[jsonAssistantMessage]
			err := json.Unmarshal(b, &ev)
			return &ev, err
		}},
		{name: "assistant-chunk", line: benchChunk, json: func(b []byte) (interface{}, error) {
			var ev jsonEvent[jsonChunk]
			err := json.Unmarshal(b, &ev)
			return &ev, err
		}},
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, c := range benchCases() {
		line := []byte(c.line)
		rec := codec.EncodeRecord(nil, mustPayload(b, c.line))
		b.Run(c.name+"/codec", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(rec)))
			for i := 0; i < b.N; i++ {
				payload, err := codec.DecodeRecord(rec)
				if err != nil {
					b.Fatal(err)
				}
				ev, err := codec.DecodeEvent(payload)
				if err != nil {
					b.Fatal(err)
				}
				benchSink += int(ev.Seq)
			}
		})
		b.Run(c.name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for i := 0; i < b.N; i++ {
				if _, err := c.json(line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	for _, c := range benchCases() {
		line := []byte(c.line)
		b.Run(c.name+"/codec", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			var mp, rec []byte
			for i := 0; i < b.N; i++ {
				var err error
				mp, err = codec.FromJSON(mp[:0], line, codec.Limits{})
				if err != nil {
					b.Fatal(err)
				}
				rec = codec.EncodeRecord(rec[:0], mp)
			}
			benchSink += len(rec)
		})
		v, err := c.json(line)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for i := 0; i < b.N; i++ {
				out, err := json.Marshal(v)
				if err != nil {
					b.Fatal(err)
				}
				benchSink += len(out)
			}
		})
	}
}

func BenchmarkExport(b *testing.B) {
	for _, c := range benchCases() {
		line := []byte(c.line)
		payload := mustPayload(b, c.line)
		b.Run(c.name+"/codec", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			var out []byte
			for i := 0; i < b.N; i++ {
				var err error
				out, _, err = codec.ToJSON(out[:0], payload)
				if err != nil {
					b.Fatal(err)
				}
			}
			if string(out) != c.line {
				b.Fatalf("ToJSON = %s, want %s", out, c.line)
			}
		})
		v, err := c.json(line)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for i := 0; i < b.N; i++ {
				out, err := json.Marshal(v)
				if err != nil {
					b.Fatal(err)
				}
				benchSink += len(out)
			}
		})
	}
}

// TestBenchInputs checks that the benchmark inputs are what they claim:
// canonical, ~1 KB for the message, decodable by both sides.
func TestBenchInputs(t *testing.T) {
	if n := len(benchMessage); n < 900 || n > 1400 {
		t.Errorf("benchMessage is %d bytes, want about 1 KB", n)
	}
	for _, c := range benchCases() {
		ev, err := codec.ParseEvent([]byte(c.line), codec.Limits{})
		if err != nil {
			t.Fatalf("%s: ParseEvent = %v", c.name, err)
		}
		out, err := ev.AppendJSON(nil)
		if err != nil || string(out) != c.line {
			t.Errorf("%s: not canonical: %s, %v", c.name, out, err)
		}
		v, err := c.json([]byte(c.line))
		if err != nil {
			t.Fatalf("%s: json.Unmarshal = %v", c.name, err)
		}
		if js, err := json.Marshal(v); err != nil || len(js) < len(c.line)*9/10 {
			t.Errorf("%s: json.Marshal of the mirror = %d bytes, %v; want about %d", c.name, len(js), err, len(c.line))
		}
	}
}
