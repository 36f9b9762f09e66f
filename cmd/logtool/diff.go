package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/spf13/cobra"
)

// diffOptions are the flags of logtool diff.
type diffOptions struct {
	g *globalOptions
}

func newDiffCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := diffOptions{g: g}
	return &cobra.Command{
		Use:   "diff SESSION A B",
		Short: "Show what changed between the requests of two steps",
		Long: `Rebuild the requests of steps A and B (each named T.S) and show what
changed between them: the header fields that differ (config, system prompt,
tools, session prefix), the number of messages, and the first message where
they diverge, with its index, the JSON path and both versions.`,
		Args: exactArgs("SESSION", "A", "B"),
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runDiff(cmd.Context(), opts, args, stdout, stderr)
		}),
	}
}

func runDiff(ctx context.Context, opts diffOptions, args []string, stdout, _ io.Writer) (err error) {
	id := args[0]
	a, err := parseStep(args[1])
	if err != nil {
		return err
	}
	b, err := parseStep(args[2])
	if err != nil {
		return err
	}
	st, err := opts.g.open(openRead)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)
	var sa, sb *rebuild.Step
	err = eachStep(ctx, st, opts.g.name(), id, true, func(s rebuild.Step) error {
		n := stepName{s.Turn, s.Step}
		if n == a && sa == nil {
			sa = &s
		}
		if n == b && sb == nil {
			s := s
			sb = &s
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, c := range []struct {
		s *rebuild.Step
		n stepName
	}{{sa, a}, {sb, b}} {
		if c.s == nil {
			return errors.Mark(errors.Newf("session %s has no step %s", errors.Safe(id), errors.Safe(c.n.String())), eventlog.ErrNotFound)
		}
		if c.s.Null {
			return errors.Newf("step %s of session %s has no request (no header was in force)", errors.Safe(c.n.String()), errors.Safe(id))
		}
	}
	w := bufio.NewWriter(stdout)
	fmt.Fprintf(w, "diff %s → %s in session %s\n", a, b, id)
	writeHeaderDiff(w, &sa.Header, &sb.Header)
	if err := writeMessageDiff(w, sa, sb); err != nil {
		return err
	}
	return w.Flush()
}

// writeHeaderDiff writes the header fields that differ.
func writeHeaderDiff(w *bufio.Writer, a, b *header.Snapshot) {
	var lines []string
	ca, cb := &a.Config, &b.Config
	field := func(name string, has1 bool, v1 string, has2 bool, v2 string) {
		if has1 != has2 || v1 != v2 {
			lines = append(lines, fmt.Sprintf("  %s: %s → %s", name, optional(has1, v1), optional(has2, v2)))
		}
	}
	field("provider", ca.HasProvider, string(codec.AppendJSONString(nil, []byte(ca.Provider))), cb.HasProvider, string(codec.AppendJSONString(nil, []byte(cb.Provider))))
	field("model", true, string(codec.AppendJSONString(nil, []byte(ca.Model))), true, string(codec.AppendJSONString(nil, []byte(cb.Model))))
	field("temperature", ca.HasTemperature, string(codec.AppendJSONNumber(nil, ca.Temperature)), cb.HasTemperature, string(codec.AppendJSONNumber(nil, cb.Temperature)))
	field("maxTokens", ca.HasMaxTokens, itoa(ca.MaxTokens), cb.HasMaxTokens, itoa(cb.MaxTokens))
	field("stop", ca.HasStop, quoteList(ca.Stop), cb.HasStop, quoteList(cb.Stop))
	quoted := func(s string) string { return string(codec.AppendJSONString(nil, []byte(s))) }
	field("wire", ca.HasWire, quoted(ca.Wire), cb.HasWire, quoted(cb.Wire))
	field("thinking", ca.HasThinking, quoted(ca.Thinking), cb.HasThinking, quoted(cb.Thinking))
	field("reasoningEffort", ca.HasReasoningEffort, quoted(ca.ReasoningEffort), cb.HasReasoningEffort, quoted(cb.ReasoningEffort))
	if a.System != b.System {
		la, lb := strings.Split(a.System, "\n"), strings.Split(b.System, "\n")
		first := 0
		for first < len(la) && first < len(lb) && la[first] == lb[first] {
			first++
		}
		lines = append(lines, fmt.Sprintf("  system: %s → %s, first different line %d", count(len(la), "line", "lines"), count(len(lb), "line", "lines"), first+1))
	}
	if t := toolsDiff(a.Tools, b.Tools); t != "" {
		lines = append(lines, "  tools: "+t)
	}
	if !equalJSONs(a.Prefix, b.Prefix) {
		lines = append(lines, fmt.Sprintf("  prefix: %s → %s", count(len(a.Prefix), "message", "messages"), count(len(b.Prefix), "message", "messages")))
	}
	if len(lines) == 0 {
		w.WriteString("header: unchanged\n")
		return
	}
	w.WriteString("header:\n")
	for _, l := range lines {
		w.WriteString(l + "\n")
	}
}

func optional(has bool, v string) string {
	if !has {
		return "(absent)"
	}
	return v
}

// toolsDiff describes how tool list b differs from a, by name.
func toolsDiff(a, b []header.Tool) string {
	byName := func(ts []header.Tool) map[string][]byte {
		m := make(map[string][]byte, len(ts))
		for _, t := range ts {
			m[t.Name] = t.JSON
		}
		return m
	}
	ma, mb := byName(a), byName(b)
	var added, removed, changed []string
	for _, t := range b {
		if old, ok := ma[t.Name]; !ok {
			added = append(added, t.Name)
		} else if !bytes.Equal(old, t.JSON) {
			changed = append(changed, t.Name)
		}
	}
	for _, t := range a {
		if _, ok := mb[t.Name]; !ok {
			removed = append(removed, t.Name)
		}
	}
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"added", added}, {"removed", removed}, {"changed", changed}} {
		if len(p.names) > 0 {
			parts = append(parts, p.what+" "+strings.Join(p.names, ", "))
		}
	}
	if len(parts) == 0 && !sameOrder(a, b) {
		parts = append(parts, "reordered")
	}
	return strings.Join(parts, "; ")
}

func sameOrder(a, b []header.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}

func equalJSONs(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// requestMessages returns the JSON of each message of a request.
func requestMessages(req []byte) ([][]byte, error) {
	mp, err := codec.FromJSON(nil, req, codec.Limits{})
	if err != nil {
		return nil, err
	}
	msgs, _, err := lookup(mp, "messages")
	if err != nil {
		return nil, err
	}
	r := codec.NewReader(msgs)
	t, err := r.Next()
	if err != nil {
		return nil, err
	}
	out := make([][]byte, 0, t.N)
	for i := 0; i < t.N; i++ {
		js, err := r.AppendJSON(nil)
		if err != nil {
			return nil, err
		}
		out = append(out, js)
	}
	return out, nil
}

// writeMessageDiff writes the message counts and the first divergence.
func writeMessageDiff(w *bufio.Writer, a, b *rebuild.Step) error {
	ma, err := requestMessages(a.Request)
	if err != nil {
		return err
	}
	mb, err := requestMessages(b.Request)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "messages: %d → %d (request %d → %d bytes)\n", len(ma), len(mb), len(a.Request), len(b.Request))
	i := 0
	for i < len(ma) && i < len(mb) && bytes.Equal(ma[i], mb[i]) {
		i++
	}
	switch {
	case i == len(ma) && i == len(mb):
		w.WriteString("the messages are identical\n")
	case i == len(ma):
		fmt.Fprintf(w, "the first %d messages are identical; %s appended\n", i, count(len(mb)-i, "message", "messages"))
	case i == len(mb):
		fmt.Fprintf(w, "the first %d messages are identical; %s dropped\n", i, count(len(ma)-i, "message", "messages"))
	default:
		off := rebuild.FirstDifference(ma[i], mb[i])
		fmt.Fprintf(w, "first diverging message: [%d] at %s (byte %d of the message)\n", i, pathOrWhole(rebuild.PathAt(ma[i], off)), off)
		fmt.Fprintf(w, "  %s: %s\n  %s: %s\n", stepName{a.Turn, a.Step}, ma[i], stepName{b.Turn, b.Step}, mb[i])
	}
	return nil
}

func pathOrWhole(p string) string {
	if p == "" {
		return "the message itself"
	}
	return p
}
