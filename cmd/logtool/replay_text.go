package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/internal/printable"
	"github.com/sessionlog/sessionlog/rebuild"
)

// writeStepText writes a step for people: a title line, the header
// (config, system prompt, tools, prefix size), then one block per message
// of the request, in wire order. With prev (the messages of the previous
// step's request, from stepMessages) only the messages after the prefix
// the two requests share are written: what is new in this step.
func writeStepText(w *bufio.Writer, s rebuild.Step, prev *prevStep) error {
	fmt.Fprintf(w, "== step %s (step/start at seq %d)", step(s.Turn, s.Step), s.Start)
	if s.Null {
		fmt.Fprintf(w, ": no header in force, so no request could have been sent\n\n")
		if prev != nil {
			*prev = prevStep{}
		}
		return nil
	}
	fmt.Fprintf(w, "  digest %s\n", hex.EncodeToString(s.Digest[:]))
	writeHeaderText(w, &s.Header, s.HeaderSeq, s.LastReason)
	msgs, err := stepMessages(s)
	if err != nil {
		return err
	}
	from := 0
	if prev != nil {
		for from < len(msgs) && from < len(prev.msgs) && bytes.Equal(msgs[from], prev.msgs[from]) {
			from++
		}
		if from > 0 {
			fmt.Fprintf(w, "(messages [0]..[%d] as in step %s)\n", from-1, prev.name)
		}
		*prev = prevStep{name: step(s.Turn, s.Step), msgs: msgs}
	}
	for i := from; i < len(msgs); i++ {
		m := msgs[i]
		where := ""
		if i < len(s.Header.Prefix) {
			where = " (session prefix)"
		}
		fmt.Fprintf(w, "[%d] %s%s\n", i, printable.Line(lookupString(m, "role")), where)
		if prov, ok, _ := lookup(m, "provenance"); ok {
			fmt.Fprintf(w, "    provenance: %s\n", jsonOf(prov))
		}
		content, _, _ := lookup(m, "content")
		writeBlocks(w, content, "    ")
	}
	_, err = w.WriteString("\n")
	return err
}

// prevStep is what replay --new remembers of the previous step.
type prevStep struct {
	name string
	msgs [][]byte
}

// stepMessages returns the storage form of each message of s's request.
func stepMessages(s rebuild.Step) ([][]byte, error) {
	mp, err := codec.FromJSON(nil, s.Request, codec.Limits{})
	if err != nil {
		return nil, err
	}
	msgs, ok, err := lookup(mp, "messages")
	if err != nil || !ok {
		return nil, err
	}
	r := codec.NewReader(msgs)
	t, err := r.Next()
	if err != nil {
		return nil, err
	}
	out := make([][]byte, 0, t.N)
	for i := 0; i < t.N; i++ {
		m, err := r.Value(maxDepth)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func writeHeaderText(w *bufio.Writer, h *header.Snapshot, seq int64, reason string) {
	c := &h.Config
	fmt.Fprintf(w, "header  ")
	if c.HasProvider {
		fmt.Fprintf(w, "provider=%s ", printable.ID(c.Provider))
	}
	fmt.Fprintf(w, "model=%s", printable.ID(c.Model))
	if c.HasTemperature {
		fmt.Fprintf(w, " temperature=%s", codec.AppendJSONNumber(nil, c.Temperature))
	}
	if c.HasMaxTokens {
		fmt.Fprintf(w, " maxTokens=%d", c.MaxTokens)
	}
	if c.HasStop {
		fmt.Fprintf(w, " stop=%s", quoteList(c.Stop))
	}
	for _, k := range []struct {
		has       bool
		name, val string
	}{{c.HasWire, "wire", c.Wire}, {c.HasThinking, "thinking", c.Thinking}, {c.HasReasoningEffort, "reasoningEffort", c.ReasoningEffort}} {
		if k.has {
			fmt.Fprintf(w, " %s=%s", k.name, printable.ID(k.val))
		}
	}
	fmt.Fprintf(w, "  (folded up to seq %d; last snapshot: %s)\n", seq, printable.Line(reason))
	if h.System == "" {
		fmt.Fprintf(w, "system  (none)\n")
	} else {
		writeIndented(w, "system  ", "        ", h.System)
	}
	var names []string
	for _, t := range h.Tools {
		names = append(names, printable.ID(t.Name))
	}
	if len(names) == 0 {
		fmt.Fprintf(w, "tools   (none)\n")
	} else {
		fmt.Fprintf(w, "tools   %s\n", strings.Join(names, ", "))
	}
	fmt.Fprintf(w, "prefix  %s\n", count(len(h.Prefix), "message", "messages"))
}

// writeBlocks writes a content array's blocks, one per line or more.
func writeBlocks(w *bufio.Writer, content []byte, indent string) {
	r := codec.NewReader(content)
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindArray {
		return
	}
	for i := 0; i < t.N; i++ {
		b, err := r.Value(maxDepth)
		if err != nil {
			return
		}
		typ := lookupString(b, "type")
		switch typ {
		case codec.BlockText, codec.BlockReasoning:
			writeIndented(w, indent+typ+": ", indent+strings.Repeat(" ", len(typ)+2), lookupString(b, "text"))
		case codec.BlockToolCall:
			fmt.Fprintf(w, "%stool-call %s %s (id %s)\n", indent, printable.ID(lookupString(b, "name")),
				printable.Line(lookupString(b, "arguments")), printable.ID(lookupString(b, "id")))
		case codec.BlockToolResult:
			errText := ""
			if v, ok, _ := lookup(b, "isError"); ok && scalar(v).Bool {
				errText = " (error)"
			}
			fmt.Fprintf(w, "%stool-result for %s%s:\n", indent, printable.ID(lookupString(b, "toolCallId")), errText)
			inner, _, _ := lookup(b, "content")
			writeBlocks(w, inner, indent+"  ")
		default:
			fmt.Fprintf(w, "%s%s\n", indent, jsonOf(b))
		}
	}
}

// writeIndented writes text's lines, the first after first, the others
// after rest: replayed text keeps its lines and tabs, and every other
// control character is escaped.
func writeIndented(w *bufio.Writer, first, rest, text string) {
	for i, line := range strings.Split(text, "\n") {
		if i == 0 {
			w.WriteString(first)
		} else {
			w.WriteString(rest)
		}
		w.WriteString(printable.Text(line)) // its tabs kept, other controls escaped
		w.WriteByte('\n')
	}
}

// quoteList writes strings as a JSON array.
var quoteList = audit.QuoteList
