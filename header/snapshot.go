package header

import (
	"bytes"
	"slices"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog/codec"
)

// Snapshot is a canonical EpochHeader (docs/rules.md#header): the non-history
// part of a request.
//
// INVARIANTS: a Snapshot returned by Decode, Apply or Fold is canonical
// (System "" and empty Tools or Prefix mean absent and are nil) and is
// never modified afterwards; its slices may be shared, and callers must not
// write to them. Every Tool and prefix message holds well-formed stored
// bytes (build them with Decode, ParseTool or ParseMessage).
type Snapshot struct {
	// Config is the call config.
	Config Config
	// System is the system prompt; "" means absent.
	System string
	// Tools is the tool list in request order; nil means absent.
	Tools []Tool
	// Prefix is the session prefix (messagePrefix): each message's JSON
	// text, exactly as stored; nil means absent.
	Prefix [][]byte
}

// Config is a header's call config (docs/rules.md#epochheader). Only the typed fields reach
// a request (docs/rules.md#the-request) and count for equality; Raw carries the stored
// object, unknown keys included, so that a snapshot the engine writes back
// keeps them.
type Config struct {
	// Provider is the provider; HasProvider tells whether it is set (the
	// seed era writes none).
	Provider    string
	HasProvider bool
	// Model is the model name, always present.
	Model string
	// Temperature is the sampling temperature (finite); 0 is a value, not
	// absence.
	Temperature    float64
	HasTemperature bool
	// MaxTokens is the output token limit.
	MaxTokens    int64
	HasMaxTokens bool
	// Stop is the stop-sequence list; HasStop with an empty Stop is the
	// stored "stop":[], which differs from absence.
	Stop    []string
	HasStop bool
	// Wire, Thinking and ReasoningEffort are the wire keys of docs/wire.md#renderers:
	// the renderer a step is sent with, the thinking mode ("enabled" or
	// "disabled") and the reasoning effort. DSH does not define them; they
	// never reach the canonical request, but they count for equality.
	Wire, Thinking, ReasoningEffort          string
	HasWire, HasThinking, HasReasoningEffort bool
	// Raw is the stored config object (msgpack), or nil for a config built
	// in code. Encode writes Raw verbatim while the typed fields still
	// agree with it, and otherwise writes the typed fields followed by
	// Raw's unknown keys in their stored order.
	Raw []byte
}

// Tool is one entry of a header's tools array: its name, the only key the
// engine reads, and the stored object itself. description, parameters and
// any unknown keys stay opaque.
//
// INVARIANTS: Raw and JSON hold the same value (the msgpack image and its
// JSON.stringify text); equality and requests use JSON.
type Tool struct {
	Name string
	Raw  []byte
	JSON []byte
}

// Equal reports whether two configs are equal under docs/rules.md#header-equality: provider,
// model, temperature, maxTokens and the wire keys of docs/wire.md#renderers equal
// (absent equals only absent), stop equal element-wise (absent equals only
// absent). Unknown keys do not count.
func (c Config) Equal(o Config) bool {
	if c.HasProvider != o.HasProvider || (c.HasProvider && c.Provider != o.Provider) {
		return false
	}
	if c.Model != o.Model {
		return false
	}
	if c.HasTemperature != o.HasTemperature || (c.HasTemperature && c.Temperature != o.Temperature) {
		return false
	}
	if c.HasMaxTokens != o.HasMaxTokens || (c.HasMaxTokens && c.MaxTokens != o.MaxTokens) {
		return false
	}
	if c.HasStop != o.HasStop || (c.HasStop && !slices.Equal(c.Stop, o.Stop)) {
		return false
	}
	return optEqual(c.HasWire, c.Wire, o.HasWire, o.Wire) &&
		optEqual(c.HasThinking, c.Thinking, o.HasThinking, o.Thinking) &&
		optEqual(c.HasReasoningEffort, c.ReasoningEffort, o.HasReasoningEffort, o.ReasoningEffort)
}

// optEqual compares two optional strings: absent equals only absent.
func optEqual(hasA bool, a string, hasB bool, b string) bool {
	return hasA == hasB && a == b
}

// Equal reports whether two headers are equal under docs/rules.md#header-equality: configs
// equal, system prompts equal, tools equal position by position by their
// JSON bytes (a reorder is a change), prefixes equal by JSON bytes (absent
// equals empty).
func (s Snapshot) Equal(o Snapshot) bool {
	return s.Config.Equal(o.Config) && s.System == o.System &&
		toolsEqual(s.Tools, o.Tools) && prefixEqual(s.Prefix, o.Prefix)
}

func toolsEqual(a, b []Tool) bool {
	return slices.EqualFunc(a, b, func(x, y Tool) bool { return bytes.Equal(x.JSON, y.JSON) })
}

func prefixEqual(a, b [][]byte) bool {
	return slices.EqualFunc(a, b, bytes.Equal)
}

// AppendToolsJSON appends the tools array as JSON text ("[]" when absent),
// each tool exactly as stored.
func (s Snapshot) AppendToolsJSON(dst []byte) []byte {
	dst = append(dst, '[')
	for i, t := range s.Tools {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, t.JSON...)
	}
	return append(dst, ']')
}

// AppendPrefixJSON appends the prefix messages as JSON texts separated by
// commas, without brackets (nothing when absent), for splicing in front of
// the derived history in a request's messages array.
func (s Snapshot) AppendPrefixJSON(dst []byte) []byte {
	for i, m := range s.Prefix {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, m...)
	}
	return dst
}

// Decode decodes the msgpack image of a header object (what
// codec.RequestHeader.Header holds) into its canonical Snapshot. It checks
// every key the engine reads: config is an object with a string model, a
// string provider, a number temperature, an integer maxTokens and an array
// of strings stop, and strings wire, thinking and reasoningEffort
// (docs/wire.md#renderers), each optional but model; system is a string; tools an
// array of objects with a string name; messagePrefix an array of messages
// (objects with a string role and a content array of typed blocks). An
// explicit null for any of these keys is refused. Unknown keys are ignored
// (unknown config keys are kept in Config.Raw). Errors name the key, never
// the content, and are marked ErrInvalid (ErrCorrupt for bytes that are not
// one stored value).
//
// The Snapshot does not alias mp.
func Decode(mp []byte) (Snapshot, error) {
	if err := whole(mp, "header"); err != nil {
		return Snapshot{}, err
	}
	mp = bytes.Clone(mp)
	var s Snapshot
	var have seen
	f := codec.NewFields(mp, codec.PrefixHeader)
	err := f.Object("EpochHeader", func(k []byte) error {
		key := string(k)
		var err error
		switch key {
		case "config":
			if err = have.mark(1, "config"); err == nil {
				s.Config, err = decodeConfig(f, "config")
			}
		case "system":
			if err = have.mark(2, "system"); err == nil {
				s.System, err = f.Str("system")
			}
		case "tools":
			if err = have.mark(4, "tools"); err == nil {
				s.Tools, err = decodeTools(f, "tools")
			}
		case "messagePrefix":
			if err = have.mark(8, "messagePrefix"); err == nil {
				s.Prefix, err = decodeMessages(f, "messagePrefix")
			}
		default:
			err = f.Skip()
		}
		return err
	})
	if err != nil {
		return Snapshot{}, err
	}
	if have&1 == 0 {
		return Snapshot{}, invalidf("header: missing key config")
	}
	return s.canonical(), nil
}

// canonical returns s with empty tools and prefix as nil (absent).
func (s Snapshot) canonical() Snapshot {
	if len(s.Tools) == 0 {
		s.Tools = nil
	}
	if len(s.Prefix) == 0 {
		s.Prefix = nil
	}
	return s
}

// decodeConfig reads a config object. Raw aliases the reader's buffer.
func decodeConfig(f codec.Fields, path string) (Config, error) {
	raw, err := f.Raw(path)
	if err != nil {
		return Config{}, err
	}
	c, err := parseConfig(raw, path)
	c.Raw = raw
	return c, err
}

// parseConfig decodes the typed fields of a stored config object.
func parseConfig(raw []byte, path string) (Config, error) {
	var c Config
	var have seen
	f := codec.NewFields(raw, codec.PrefixHeader)
	err := f.Object(path, func(k []byte) error {
		key := string(k)
		var err error
		switch key {
		case "provider":
			if err = have.mark(1, join(path, key)); err == nil {
				c.HasProvider = true
				c.Provider, err = f.Str(join(path, key))
			}
		case "model":
			if err = have.mark(2, join(path, key)); err == nil {
				c.Model, err = f.Str(join(path, key))
			}
		case "temperature":
			if err = have.mark(4, join(path, key)); err == nil {
				c.HasTemperature = true
				c.Temperature, err = f.Number(join(path, key))
			}
		case "maxTokens":
			if err = have.mark(8, join(path, key)); err == nil {
				c.HasMaxTokens = true
				c.MaxTokens, err = f.Integer(join(path, key))
			}
		case "stop":
			if err = have.mark(16, join(path, key)); err == nil {
				c.HasStop = true
				c.Stop, err = decodeStrings(f, join(path, key))
			}
		case "wire":
			if err = have.mark(32, join(path, key)); err == nil {
				c.HasWire = true
				c.Wire, err = f.Str(join(path, key))
			}
		case "thinking":
			if err = have.mark(64, join(path, key)); err == nil {
				c.HasThinking = true
				c.Thinking, err = f.Str(join(path, key))
			}
		case "reasoningEffort":
			if err = have.mark(128, join(path, key)); err == nil {
				c.HasReasoningEffort = true
				c.ReasoningEffort, err = f.Str(join(path, key))
			}
		default:
			err = f.Skip()
		}
		return err
	})
	if err != nil {
		return Config{}, err
	}
	if have&2 == 0 {
		return Config{}, invalidf("header: %s: missing key model", errors.Safe(path))
	}
	return c, nil
}

// decodeStrings reads an array of strings; an empty array gives a non-nil
// empty slice.
func decodeStrings(f codec.Fields, path string) ([]string, error) {
	out := []string{}
	err := f.Array(path, func(i int) error {
		s, err := f.Str(index(path, i))
		out = append(out, s)
		return err
	})
	return out, err
}

// decodeTools reads an array of tool objects.
func decodeTools(f codec.Fields, path string) ([]Tool, error) {
	var out []Tool
	err := f.Array(path, func(i int) error {
		t, err := decodeTool(f, index(path, i))
		out = append(out, t)
		return err
	})
	return out, err
}

// decodeTool reads one tool object: a string name; description, parameters
// and other keys are carried, not read.
func decodeTool(f codec.Fields, path string) (Tool, error) {
	raw, err := f.Raw(path)
	if err != nil {
		return Tool{}, err
	}
	t := Tool{Raw: raw}
	var have seen
	g := codec.NewFields(raw, codec.PrefixHeader)
	err = g.Object(path, func(k []byte) error {
		key := string(k)
		if key != "name" {
			return g.Skip()
		}
		if err := have.mark(1, join(path, key)); err != nil {
			return err
		}
		var err error
		t.Name, err = g.Str(join(path, key))
		return err
	})
	if err != nil {
		return Tool{}, err
	}
	if have == 0 {
		return Tool{}, invalidf("header: %s: missing key name", errors.Safe(path))
	}
	t.JSON, _, err = codec.ToJSON(nil, raw)
	return t, corrupt(err)
}

// decodeMessages reads an array of messages and returns their JSON texts.
func decodeMessages(f codec.Fields, path string) ([][]byte, error) {
	var out [][]byte
	err := f.Array(path, func(i int) error {
		m, err := decodeMessage(f, index(path, i))
		out = append(out, m)
		return err
	})
	return out, err
}

// decodeMessage reads one message object (docs/format.md#content-blocks): a string role and a
// content array whose blocks are objects with a string type. Everything
// else (block fields, provenance, unknown keys) is carried as is.
func decodeMessage(f codec.Fields, path string) ([]byte, error) {
	raw, err := f.Raw(path)
	if err != nil {
		return nil, err
	}
	var have seen
	g := codec.NewFields(raw, codec.PrefixHeader)
	err = g.Object(path, func(k []byte) error {
		key := string(k)
		switch key {
		case "role":
			if err := have.mark(1, join(path, key)); err != nil {
				return err
			}
			_, err := g.Str(join(path, key))
			return err
		case "content":
			if err := have.mark(2, join(path, key)); err != nil {
				return err
			}
			return decodeBlocks(g, join(path, key))
		}
		return g.Skip()
	})
	if err != nil {
		return nil, err
	}
	switch {
	case have&1 == 0:
		return nil, invalidf("header: %s: missing key role", errors.Safe(path))
	case have&2 == 0:
		return nil, invalidf("header: %s: missing key content", errors.Safe(path))
	}
	out, _, err := codec.ToJSON(nil, raw)
	return out, corrupt(err)
}

// decodeBlocks checks a content array: objects, each with a string type.
func decodeBlocks(f codec.Fields, path string) error {
	return f.Array(path, func(i int) error {
		p := index(path, i)
		typed := false
		err := f.Object(p, func(k []byte) error {
			key := string(k)
			if key != "type" {
				return f.Skip()
			}
			typed = true
			_, err := f.Str(join(p, key))
			return err
		})
		if err == nil && !typed {
			err = invalidf("header: %s: missing key type", errors.Safe(p))
		}
		return err
	})
}

// ParseTool decodes one tool from its JSON text, with the checks Decode
// applies to a tools entry. It is how code builds a Tool for a header it
// composes.
func ParseTool(text []byte) (Tool, error) {
	raw, err := codec.FromJSON(nil, text, codec.Limits{})
	if err != nil {
		return Tool{}, errors.Wrap(err, "header: tool")
	}
	return decodeTool(codec.NewFields(raw, codec.PrefixHeader), "tool")
}

// ParseMessage checks one prefix message given as JSON text, with the checks
// Decode applies to a messagePrefix entry, and returns its canonical JSON
// text (as JSON.stringify writes it).
func ParseMessage(text []byte) ([]byte, error) {
	raw, err := codec.FromJSON(nil, text, codec.Limits{})
	if err != nil {
		return nil, errors.Wrap(err, "header: message")
	}
	return decodeMessage(codec.NewFields(raw, codec.PrefixHeader), "message")
}
