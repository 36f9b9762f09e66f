package audit

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sessionlog/sessionlog/codec"
)

// snippetRunes is how much of a text a one-line summary quotes.
const snippetRunes = 60

// Summary returns a one-line summary of ev, as logtool show and the web
// UI's timeline print it: turn and step numbers, a quoted start of any
// text, tool names, header reasons and byte sizes. It never fails: what it cannot read it leaves out.
func Summary(ev *codec.Event) string {
	var s summary
	switch d := ev.Data.(type) {
	case *codec.TurnStart:
		s.add("turn " + itoa(d.Turn))
		if kind := LookupString(ev.Raw, "data", "trigger", "kind"); kind != "" && kind != "message" {
			s.add(kind)
			if src, ok, _ := Lookup(ev.Raw, "data", "trigger", "source"); ok {
				s.add("from " + sourceName(src))
			}
		}
	case *codec.TurnEnd:
		s.add("turn " + itoa(d.Turn))
		s.add(d.Reason)
		if d.Reason == "error" {
			if code := LookupString(ev.Raw, "data", "reason", "code"); code != "" {
				s.add("code " + code)
			}
		}
	case *codec.StepStart:
		s.add("step " + StepName(d.Turn, d.Step))
	case *codec.StepEnd:
		s.add("step " + StepName(d.Turn, d.Step))
	case *codec.UserMessage:
		s.source(d.Source)
		s.content(d.Content)
	case *codec.PromptBlocked:
		s.source(d.Source)
		s.content(d.Content)
		if r, ok, _ := Lookup(ev.Raw, "data", "reason"); ok {
			s.add("reason " + quoteJSON(JSONOf(r)))
		}
	case *codec.ContextMessage:
		s.source(d.Source)
		if d.Envelope == "raw" {
			s.add("raw")
		}
		s.content(d.Content)
	case *codec.SteeringMessage:
		s.add("turn " + itoa(d.Turn))
		s.source(d.Source)
		s.content(d.Content)
	case *codec.AssistantChunk:
		s.add(StepName(d.Turn, d.Step))
		s.chunk(ev, d)
	case *codec.AssistantMessage:
		s.add(StepName(d.Turn, d.Step))
		s.content(d.Content)
		if len(d.Content.Blocks) == 0 {
			s.add("(empty)")
		}
		if u, ok, _ := Lookup(ev.Raw, "data", "usage"); ok {
			s.add("(" + usageText(u) + ")")
		}
	case *codec.ToolCall:
		s.add(StepName(d.Turn, d.Step))
		s.add(d.Name)
		s.add(d.CallID)
		s.add("args " + quote(d.Arguments))
	case *codec.ToolResult:
		s.add(StepName(d.Turn, d.Step))
		s.add(d.CallID)
		if d.IsError {
			s.add("error")
			if name := LookupString(ev.Raw, "data", "error", "name"); name != "" {
				s.add(name)
			}
		} else {
			s.add("ok")
		}
		s.content(d.Content)
	case *codec.RequestHeader:
		s.add(d.Reason)
		s.header(d.Header)
	case *codec.HeaderDelta:
		s.delta(d.Raw)
	case *codec.RequestDigest:
		s.add(StepName(d.Turn, d.Step))
		s.add("sha256 " + d.SHA256[:min(16, len(d.SHA256))] + "…")
	case *codec.CompactStart:
		s.add("turn " + itoa(d.Turn))
	case *codec.CompactSummary:
		if r, ok, _ := Lookup(ev.Raw, "data", "shadowedRange"); ok {
			s.add("shadows " + JSONOf(r))
		}
		if v, ok, _ := Lookup(ev.Raw, "data", "shadowedTokenCount"); ok {
			s.add(JSONOf(v) + " tokens")
		}
		s.content(d.Summary)
	case *codec.CompactEnd:
		s.add("turn " + itoa(d.Turn))
		if d.HasError {
			s.add("error")
		}
	default:
		if v, ok, _ := Lookup(ev.Raw, "data"); ok {
			s.add(quoteJSON(JSONOf(v)))
		}
	}
	switch ev.Op.Kind {
	case codec.OpReplace:
		s.add("[replaces " + itoa(ev.Op.Start) + ".." + itoa(ev.Op.End) + "]")
	}
	return s.String()
}

// summary collects the parts of a one-line summary.
type summary struct{ parts []string }

func (s *summary) add(p string) {
	if p != "" {
		s.parts = append(s.parts, p)
	}
}

func (s *summary) String() string { return strings.Join(s.parts, " ") }

// source adds a message source unless it is the user.
func (s *summary) source(src codec.Source) {
	switch src.Kind {
	case "user":
	case "plugin":
		s.add("plugin:" + src.Plugin)
	default:
		s.add(src.Kind)
	}
}

// content adds a short description of each block (at most four).
func (s *summary) content(c codec.Content) {
	const maxBlocks = 4
	for i, b := range c.Blocks {
		if i == maxBlocks {
			s.add("+" + itoa(int64(len(c.Blocks)-maxBlocks)) + " blocks")
			return
		}
		switch b.Type {
		case codec.BlockText:
			s.add(quote(b.Text))
		case codec.BlockReasoning:
			s.add("reasoning " + quote(b.Text))
		case codec.BlockToolCall:
			s.add("call " + b.Name)
		case codec.BlockToolResult:
			s.add("result " + b.ToolCallID)
		default:
			s.add("[" + b.Type + " " + size(len(JSONOf(b.Raw))) + "]")
		}
	}
}

// chunk describes an assistant/chunk by its chunk type.
func (s *summary) chunk(ev *codec.Event, d *codec.AssistantChunk) {
	s.add(d.Kind)
	switch d.Kind {
	case "text-delta", "reasoning-delta":
		s.add(quote(d.Text))
	case "block-start":
		s.add(LookupString(ev.Raw, "data", "chunk", "blockType"))
	case "block-end":
		s.add(LookupString(ev.Raw, "data", "chunk", "block", "type"))
	case "tool-call-delta":
		s.add(LookupString(ev.Raw, "data", "chunk", "name"))
		s.add(quote(LookupString(ev.Raw, "data", "chunk", "argumentsDelta")))
	case "usage":
		if u, ok, _ := Lookup(ev.Raw, "data", "chunk", "usage"); ok {
			s.add(usageText(u))
		}
	case "finish":
		s.add(LookupString(ev.Raw, "data", "chunk", "reason", "kind"))
	}
}

// header describes a stored EpochHeader: model, and the size of each part.
func (s *summary) header(h []byte) {
	provider := LookupString(h, "config", "provider")
	model := LookupString(h, "config", "model")
	if provider != "" {
		model = provider + "/" + model
	}
	parts := []string{model}
	_ = EachField(h, func(k string, v []byte) error {
		switch k {
		case "system":
			text := string(Scalar(v).Str)
			parts = append(parts, "system "+size(len(text))+" in "+Count(strings.Count(text, "\n")+1, "line", "lines"))
		case "tools":
			parts = append(parts, Count(Scalar(v).N, "tool", "tools")+" "+size(len(JSONOf(v))))
		case "messagePrefix":
			parts = append(parts, "prefix of "+Count(Scalar(v).N, "message", "messages")+" "+size(len(JSONOf(v))))
		}
		return nil
	})
	s.add(strings.Join(parts, ", ") + "; header " + size(len(JSONOf(h))))
}

// delta describes a request/header-delta by the parts it changes.
func (s *summary) delta(d []byte) {
	var parts []string
	_ = EachField(d, func(k string, v []byte) error {
		switch k {
		case "system":
			keepStart, _, _ := Lookup(v, "keepStart")
			keepEnd, _, _ := Lookup(v, "keepEnd")
			insert, _, _ := Lookup(v, "insert")
			parts = append(parts, "system keeps "+JSONOf(keepStart)+" first and "+JSONOf(keepEnd)+
				" last lines, inserts "+itoa(int64(Scalar(insert).N)))
		case "tools":
			var ops []string
			for _, f := range []struct{ key, sign string }{{"added", "+"}, {"removed", "-"}, {"changed", "~"}} {
				if a, ok, _ := Lookup(v, f.key); ok {
					ops = append(ops, f.sign+itoa(int64(Scalar(a).N)))
				}
			}
			parts = append(parts, "tools "+strings.Join(ops, " "))
		case "config":
			parts = append(parts, "config "+LookupString(v, "model"))
		case "messagePrefix":
			if n := Scalar(v).N; n > 0 {
				parts = append(parts, "prefix of "+Count(n, "message", "messages"))
			} else {
				parts = append(parts, "prefix removed")
			}
		default:
			parts = append(parts, k)
		}
		return nil
	})
	s.add(strings.Join(parts, ", ") + "; delta " + size(len(JSONOf(d))))
}

// usageText describes a stored usage object by its token buckets.
func usageText(u []byte) string {
	var parts []string
	_ = EachField(u, func(k string, v []byte) error {
		name := map[string]string{
			"inputTokens": "in", "outputTokens": "out", "cacheReadTokens": "cache-read",
			"cacheWriteTokens": "cache-write", "reasoningTokens": "reasoning",
		}[k]
		if name != "" {
			parts = append(parts, name+" "+JSONOf(v))
		}
		return nil
	})
	return strings.Join(parts, " ")
}

// sourceName names a stored source object: user, plugin:NAME or its kind.
func sourceName(src []byte) string {
	kind := LookupString(src, "kind")
	if kind == "plugin" {
		return "plugin:" + LookupString(src, "plugin")
	}
	return kind
}

// Count returns n and the noun that fits it.
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// StepName names a step T.S (turn.step).
func StepName(turn, step int64) string { return itoa(turn) + "." + itoa(step) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// size formats a byte count.
func size(n int) string { return strconv.Itoa(n) + " B" }

// quote returns the start of text as a JSON string (newlines and other
// control characters escaped), cut after snippetRunes characters with an
// ellipsis.
func quote(text string) string {
	cut, more := truncate(text, snippetRunes)
	q := codec.AppendJSONString(nil, []byte(cut))
	if more {
		q = append(q[:len(q)-1], "…\""...)
	}
	return string(q)
}

// quoteJSON returns the start of a JSON text, unquoted, cut like quote.
func quoteJSON(text string) string {
	cut, more := truncate(text, snippetRunes)
	if more {
		return cut + "…"
	}
	return cut
}

// truncate returns the first n characters of s and whether s is longer.
// It never splits a UTF-8 sequence, nor the three-byte WTF-8 form of a lone
// surrogate that stored strings may hold.
func truncate(s string, n int) (string, bool) {
	i := 0
	for k := 0; k < n; k++ {
		if i >= len(s) {
			return s, false
		}
		_, w := utf8.DecodeRuneInString(s[i:])
		if w == 1 && s[i] == 0xed && i+2 < len(s) && s[i+1]&0xe0 == 0xa0 && s[i+2]&0xc0 == 0x80 {
			w = 3 // WTF-8 surrogate
		}
		i += w
	}
	if i >= len(s) {
		return s, false
	}
	return s[:i], true
}
