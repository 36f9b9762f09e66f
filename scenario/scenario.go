package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/header"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// ErrInvalid marks a scenario file that cannot be run. It is
// codec.ErrInvalid, so errors.Is works with either name.
var ErrInvalid = codec.ErrInvalid

// Scenario is a parsed scenario file (docs/cli.md#scenario-files). Opaque parts (messages,
// blocks, tool schemas, configs) are kept as the file's JSON bytes and
// only ever decoded by the engine's own codec.
type Scenario struct {
	Session    string
	Config     header.Config
	System     string
	Tools      []ToolSpec
	Prefix     [][][]byte // per contributor, its messages (JSON)
	Compaction *Compaction
	Turns      []Turn
}

// ToolSpec is a tool the scenario offers.
type ToolSpec struct {
	Name, Description string
	Parameters        []byte
}

// Compaction configures the gate and the scripted summarizer.
type Compaction struct {
	ContextWindow  int
	ThresholdRatio float64
	RetainTokens   int
	CharsPerToken  int
	Summary        string
}

// Turn is one scripted turn.
type Turn struct {
	Prompt string
	// System, Tools and Config, when set, change the host's answer from
	// this turn on.
	System *string
	Tools  *[]ToolSpec
	Config *header.Config
	// Inject is context injected (idle) before the turn's prompt.
	Inject []string
	// Replies are the model's answers, one per step: content-block arrays.
	Replies [][]byte
	// ToolResults maps call ids, else tool names, to scripted results.
	ToolResults map[string]ToolResult
}

// ToolResult is a scripted tool result.
type ToolResult struct {
	Content []byte
	IsError bool
}

// file mirrors the JSON of a scenario; json.RawMessage keeps opaque parts
// as the file's bytes.
type file struct {
	Session    string              `json:"session"`
	Config     json.RawMessage     `json:"config"`
	System     string              `json:"system"`
	Tools      []toolFile          `json:"tools"`
	Prefix     [][]json.RawMessage `json:"prefix"`
	Compaction *compactionFile     `json:"compaction"`
	Turns      []turnFile          `json:"turns"`
}

type toolFile struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

type compactionFile struct {
	ContextWindow  int     `json:"contextWindow"`
	ThresholdRatio float64 `json:"thresholdRatio"`
	RetainTokens   int     `json:"retainTokens"`
	CharsPerToken  int     `json:"charsPerToken"`
	Summary        string  `json:"summary"`
}

type turnFile struct {
	Prompt      string                    `json:"prompt"`
	System      *string                   `json:"system"`
	Tools       *[]toolFile               `json:"tools"`
	Config      json.RawMessage           `json:"config"`
	Inject      []string                  `json:"inject"`
	Replies     []json.RawMessage         `json:"replies"`
	ToolResults map[string]toolResultFile `json:"toolResults"`
}

type toolResultFile struct {
	Content json.RawMessage `json:"content"`
	IsError bool            `json:"isError"`
}

// DefaultConfig is the config of a scenario that names none.
const DefaultConfig = `{"provider":"scripted","model":"scripted-1"}`

// Parse reads and checks a whole scenario file before anything runs. JSON
// syntax errors, values of the wrong type and unknown keys (refused, so
// that a typo does not silently change what runs) name their line and
// column; a malformed content block names its scenario turn, reply and
// block (counted from 1). Errors are marked ErrInvalid.
func Parse(data []byte) (*Scenario, error) {
	sc, err := parse(data)
	if err != nil && !errors.Is(err, ErrInvalid) {
		// Whatever a lower layer refuses in a scenario file (codec's text
		// rules, a header message's shape) is the file's fault.
		err = asInvalid(err)
	}
	return sc, err
}

func parse(data []byte) (*Scenario, error) {
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return nil, decodeError(data, err)
	}
	if dec.More() {
		return nil, invalidf("scenario: %s: text after the scenario object", errors.Safe(position(data, dec.InputOffset())))
	}
	if err := checkKeys(data); err != nil {
		return nil, errclass.Mark(err, ErrInvalid)
	}
	if len(f.Turns) == 0 {
		return nil, errclass.Mark(errors.New("scenario: no turns"), ErrInvalid)
	}
	sc := &Scenario{Session: f.Session, System: f.System}
	cfg := []byte(f.Config)
	if len(cfg) == 0 {
		cfg = []byte(DefaultConfig)
	}
	var err error
	if sc.Config, err = parseConfig(cfg); err != nil {
		return nil, err
	}
	sc.Tools = tools(f.Tools)
	for i, c := range f.Prefix {
		var msgs [][]byte
		for j, m := range c {
			pm, err := header.ParseMessage(m)
			if err != nil {
				return nil, asInvalid(errors.Wrapf(err, "scenario prefix %d, message %d", errors.Safe(i+1), errors.Safe(j+1)))
			}
			msgs = append(msgs, pm)
		}
		sc.Prefix = append(sc.Prefix, msgs)
	}
	if c := f.Compaction; c != nil {
		sc.Compaction = &Compaction{ContextWindow: c.ContextWindow, ThresholdRatio: c.ThresholdRatio,
			RetainTokens: c.RetainTokens, CharsPerToken: c.CharsPerToken, Summary: c.Summary}
	}
	for i, t := range f.Turns {
		turn, err := parseTurn(t, i+1)
		if err != nil {
			return nil, err
		}
		sc.Turns = append(sc.Turns, turn)
	}
	return sc, nil
}

// parseTurn checks turn n (counted from 1) of the file.
func parseTurn(t turnFile, n int) (Turn, error) {
	turn := Turn{Prompt: t.Prompt, System: t.System, Inject: t.Inject}
	if t.Tools != nil {
		ts := tools(*t.Tools)
		turn.Tools = &ts
	}
	if len(t.Config) > 0 {
		c, err := parseConfig(t.Config)
		if err != nil {
			return turn, errors.Wrapf(err, "scenario turn %d", errors.Safe(n))
		}
		turn.Config = &c
	}
	for i, r := range t.Replies {
		if _, err := checkContent(r, fmt.Sprintf("scenario turn %d, reply %d", n, i+1)); err != nil {
			return turn, err
		}
		turn.Replies = append(turn.Replies, r)
	}
	for id, r := range t.ToolResults {
		content := []byte(r.Content)
		if len(content) == 0 {
			content = []byte(`[]`)
		}
		if _, err := checkContent(content, fmt.Sprintf("scenario turn %d, toolResults[%q]", n, id)); err != nil {
			return turn, err
		}
		if turn.ToolResults == nil {
			turn.ToolResults = make(map[string]ToolResult)
		}
		turn.ToolResults[id] = ToolResult{Content: content, IsError: r.IsError}
	}
	return turn, nil
}

func tools(fs []toolFile) []ToolSpec {
	out := make([]ToolSpec, 0, len(fs))
	for _, t := range fs {
		out = append(out, ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	return out
}

// parseConfig decodes a config object with the header package's rules.
func parseConfig(cfg []byte) (header.Config, error) {
	doc := append(append([]byte(`{"config":`), cfg...), '}')
	mp, err := codec.FromJSON(nil, doc, codec.Limits{})
	if err != nil {
		// The file parsed as JSON already; what codec's stricter text
		// rules refuse here (invalid UTF-8, say) is a malformed scenario.
		return header.Config{}, errclass.Mark(errors.Wrap(err, "scenario: config"), codec.ErrInvalid)
	}
	s, err := header.Decode(mp)
	if err != nil {
		return header.Config{}, errors.Wrap(err, "scenario: config")
	}
	return s.Config, nil
}
