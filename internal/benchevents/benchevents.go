package benchevents

import (
	"encoding/json"
	"strings"
)

// Message is a typical ~1 KB assistant/message: a text block, a
// tool-call block, provenance, usage and sourceEventSeqs.
var Message = `{"type":"assistant/message","seq":1042,"time":1783352209707,"data":{"turn":12,"step":3,"content":[` +
	`{"type":"text","text":"` + strings.Repeat("I'll read the configuration file and check the limits. ", 10) + `"},` +
	`{"type":"tool-call","id":"call_00_6k0oGSliVHxGSgqBmMEO4311","name":"read","arguments":"{\"file_path\":\"/home/dev/project/config/limits.yaml\",\"offset\":0,\"limit\":200}"}],` +
	`"provenance":{"provider":"deepseek","model":"deepseek-v4-flash"},` +
	`"usage":{"inputTokens":48211,"outputTokens":187,"cacheReadTokens":47104,"reasoningTokens":64}},` +
	`"sourceEventSeqs":[1030,1031,1032,1033,1034,1035,1036,1037,1038,1039,1040,1041],"surfaceOp":"append"}`

// Chunk is a typical assistant/chunk text delta.
var Chunk = `{"type":"assistant/chunk","seq":1031,"time":1783352209690,"data":{"turn":12,"step":3,"chunk":{"type":"text-delta","index":0,"text":" the configuration"}}}`

// jsonEvent mirrors the event envelope for encoding/json: what a host
// without the codec would decode a line into.
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

// Case is one event of the codec measurement.
type Case struct {
	Name string
	Line string
	// Unmarshal decodes a line into the event's mirror struct with
	// encoding/json.
	Unmarshal func([]byte) (interface{}, error)
}

// Cases are the events the codec is measured on.
var Cases = []Case{
	{Name: "assistant/message", Line: Message, Unmarshal: func(b []byte) (interface{}, error) {
		var ev jsonEvent[jsonAssistantMessage]
		err := json.Unmarshal(b, &ev)
		return &ev, err
	}},
	{Name: "assistant/chunk", Line: Chunk, Unmarshal: func(b []byte) (interface{}, error) {
		var ev jsonEvent[jsonChunk]
		err := json.Unmarshal(b, &ev)
		return &ev, err
	}},
}
