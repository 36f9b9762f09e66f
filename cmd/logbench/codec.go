package main

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
)

// codecMessage is a typical ~1 KB assistant/message: a text block, a
// tool-call block, provenance, usage and sourceEventSeqs.
var codecMessage = `{"type":"assistant/message","seq":1042,"time":1783352209707,"data":{"turn":12,"step":3,"content":[` +
	`{"type":"text","text":"` + strings.Repeat("I'll read the configuration file and check the limits. ", 10) + `"},` +
	`{"type":"tool-call","id":"call_00_6k0oGSliVHxGSgqBmMEO4311","name":"read","arguments":"{\"file_path\":\"/home/dev/project/config/limits.yaml\",\"offset\":0,\"limit\":200}"}],` +
	`"provenance":{"provider":"deepseek","model":"deepseek-v4-flash"},` +
	`"usage":{"inputTokens":48211,"outputTokens":187,"cacheReadTokens":47104,"reasoningTokens":64}},` +
	`"sourceEventSeqs":[1030,1031,1032,1033,1034,1035,1036,1037,1038,1039,1040,1041],"surfaceOp":"append"}`

// codecChunk is a typical assistant/chunk text delta.
var codecChunk = `{"type":"assistant/chunk","seq":1031,"time":1783352209690,"data":{"turn":12,"step":3,"chunk":{"type":"text-delta","index":0,"text":" the configuration"}}}`

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

// codecCase is one event of the codec measurement.
type codecCase struct {
	name string
	line string
	// unmarshal decodes a line into the event's mirror struct.
	unmarshal func([]byte) (interface{}, error)
}

var codecCases = []codecCase{
	{name: "assistant/message", line: codecMessage, unmarshal: func(b []byte) (interface{}, error) {
		var ev jsonEvent[jsonAssistantMessage]
		err := json.Unmarshal(b, &ev)
		return &ev, err
	}},
	{name: "assistant/chunk", line: codecChunk, unmarshal: func(b []byte) (interface{}, error) {
		var ev jsonEvent[jsonChunk]
		err := json.Unmarshal(b, &ev)
		return &ev, err
	}},
}

// codecResult compares one operation on one event.
type codecResult struct {
	event, op string
	// ours and json are ns per call, per round; ratio is json ÷ ours,
	// per round.
	ours, json, ratio stat
	// Allocations per call (median over rounds).
	oursAllocs, jsonAllocs stat
	// recordBytes is the stored record's size; lineBytes the JSON line's.
	recordBytes, lineBytes int
}

// codecSink keeps results alive so that no call is optimised away.
var codecSink int

// measureCodec times decode and encode of each case against
// encoding/json, interleaved (timePair), one ratio per round.
func measureCodec(ctx context.Context, c config, p progress) ([]codecResult, error) {
	type pair struct {
		res       codecResult
		ours, std func() error
	}
	var pairs []*pair
	for _, cc := range codecCases {
		line := []byte(cc.line)
		mp, err := codec.FromJSON(nil, line, codec.Limits{})
		if err != nil {
			return nil, errors.Wrapf(err, "%s", errors.Safe(cc.name))
		}
		rec := codec.EncodeRecord(nil, mp)
		mirror, err := cc.unmarshal(line)
		if err != nil {
			return nil, errors.Wrapf(err, "%s: encoding/json", errors.Safe(cc.name))
		}
		var mpBuf, recBuf []byte
		pairs = append(pairs,
			&pair{
				res: codecResult{event: cc.name, op: "decode", recordBytes: len(rec), lineBytes: len(line)},
				ours: func() error {
					payload, err := codec.DecodeRecord(rec)
					if err != nil {
						return err
					}
					ev, err := codec.DecodeEvent(payload)
					codecSink += int(ev.Seq)
					return err
				},
				std: func() error {
					_, err := cc.unmarshal(line)
					return err
				},
			},
			&pair{
				res: codecResult{event: cc.name, op: "encode", recordBytes: len(rec), lineBytes: len(line)},
				ours: func() error {
					var err error
					mpBuf, err = codec.FromJSON(mpBuf[:0], line, codec.Limits{})
					recBuf = codec.EncodeRecord(recBuf[:0], mpBuf)
					codecSink += len(recBuf)
					return err
				},
				std: func() error {
					out, err := json.Marshal(mirror)
					codecSink += len(out)
					return err
				},
			})
	}
	samples := make([]struct{ ours, std, ratio, oursAllocs, stdAllocs []float64 }, len(pairs))
	for r := range c.rounds {
		for i, pr := range pairs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			o, s, err := timePair(c.minTime, c.slice, pr.ours, pr.std)
			if err != nil {
				return nil, errors.Wrapf(err, "%s %s", errors.Safe(pr.res.op), errors.Safe(pr.res.event))
			}
			sm := &samples[i]
			sm.ours, sm.std, sm.ratio = append(sm.ours, o.NsPerOp), append(sm.std, s.NsPerOp), append(sm.ratio, s.NsPerOp/o.NsPerOp)
			sm.oursAllocs, sm.stdAllocs = append(sm.oursAllocs, o.AllocsPerOp), append(sm.stdAllocs, s.AllocsPerOp)
		}
		p.printf("  codec round %d/%d done", r+1, c.rounds)
	}
	out := make([]codecResult, len(pairs))
	for i, pr := range pairs {
		sm := samples[i]
		out[i] = pr.res
		out[i].ours, out[i].json, out[i].ratio = summarize(sm.ours), summarize(sm.std), summarize(sm.ratio)
		out[i].oursAllocs, out[i].jsonAllocs = summarize(sm.oursAllocs), summarize(sm.stdAllocs)
	}
	return out, nil
}
