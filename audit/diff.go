package audit

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/rebuild"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// Change is one header field that differs between two steps. From and To
// are the values as text (config values as JSON, "(absent)" when absent;
// counts for system and prefix); Detail says more where there is more
// (system: the first different line; tools: what was added, removed,
// changed or reordered, and then From and To are empty).
type Change struct {
	Field, From, To, Detail string
}

// String is the change as logtool diff prints it.
func (c Change) String() string {
	switch {
	case c.From == "" && c.To == "":
		return c.Field + ": " + c.Detail
	case c.Detail != "":
		return fmt.Sprintf("%s: %s → %s, %s", c.Field, c.From, c.To, c.Detail)
	}
	return fmt.Sprintf("%s: %s → %s", c.Field, c.From, c.To)
}

// How the messages of two requests relate.
const (
	MessagesIdentical = "identical"
	MessagesAppended  = "appended"
	MessagesDropped   = "dropped"
	MessagesDiverged  = "diverged"
)

// Diff is what changed between the requests of steps A and B.
type Diff struct {
	Session string
	A, B    Ref
	Header  []Change
	// Messages and Bytes count each request's messages and bytes.
	MessagesA, MessagesB int
	BytesA, BytesB       int
	// Same counts the leading messages the two requests share; Relation
	// is one of the Messages* constants.
	Same     int
	Relation string
	// For MessagesDiverged: the JSON path and byte offset inside message
	// [Same] where they first differ, and both versions of it.
	Path               string
	Offset             int
	MessageA, MessageB []byte
}

// DiffSteps rebuilds the requests of steps a and b of the session of head
// and compares them. A step the session does not have is
// eventlog.ErrNotFound; a step with no request is ErrNullRequest.
func DiffSteps(ctx context.Context, st Store, head eventlog.Head, a, b Ref) (*Diff, error) {
	id := head.Header.ID
	var sa, sb *rebuild.Step
	keep := map[int64]bool{}
	visit := func(ev *codec.Event) error {
		if d, ok := ev.Data.(*codec.StepStart); ok {
			if r := (Ref{d.Turn, d.Step}); r == a || r == b {
				keep[ev.Seq] = true
			}
		}
		return nil
	}
	opts := rebuild.BuilderOptions{Requests: true, Keep: func(start int64) bool { return keep[start] }}
	err := Steps(ctx, st, head, opts, visit, func(s rebuild.Step) error {
		r := Ref{s.Turn, s.Step}
		if r == a && sa == nil {
			sa = &s
		}
		if r == b && sb == nil {
			s := s
			sb = &s
		}
		if sa != nil && sb != nil {
			return ErrStop
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, c := range []struct {
		s *rebuild.Step
		r Ref
	}{{sa, a}, {sb, b}} {
		if c.s == nil {
			return nil, errclass.Mark(errors.Newf("session %s has no step %s", errors.Safe(id), errors.Safe(c.r.String())), eventlog.ErrNotFound)
		}
		if c.s.Null {
			return nil, errclass.Mark(errors.Newf("step %s of session %s has no request (no header was in force)", errors.Safe(c.r.String()), errors.Safe(id)), ErrNullRequest)
		}
	}
	return Compare(id, sa, sb)
}

// Compare compares the requests of two rebuilt steps of session id.
func Compare(id string, a, b *rebuild.Step) (*Diff, error) {
	d := &Diff{Session: id, A: Ref{a.Turn, a.Step}, B: Ref{b.Turn, b.Step}, Header: HeaderChanges(&a.Header, &b.Header)}
	ma, err := Messages(a.Request)
	if err != nil {
		return nil, errors.Wrapf(err, "step %s", errors.Safe(d.A.String()))
	}
	mb, err := Messages(b.Request)
	if err != nil {
		return nil, errors.Wrapf(err, "step %s", errors.Safe(d.B.String()))
	}
	d.MessagesA, d.MessagesB, d.BytesA, d.BytesB = len(ma), len(mb), len(a.Request), len(b.Request)
	i := 0
	for i < len(ma) && i < len(mb) && bytes.Equal(ma[i], mb[i]) {
		i++
	}
	d.Same = i
	switch {
	case i == len(ma) && i == len(mb):
		d.Relation = MessagesIdentical
	case i == len(ma):
		d.Relation = MessagesAppended
	case i == len(mb):
		d.Relation = MessagesDropped
	default:
		d.Relation = MessagesDiverged
		d.Offset = rebuild.FirstDifference(ma[i], mb[i])
		d.Path = rebuild.PathAt(ma[i], d.Offset)
		d.MessageA, d.MessageB = ma[i], mb[i]
	}
	return d, nil
}

// HeaderChanges returns the header fields that differ from a to b.
func HeaderChanges(a, b *header.Snapshot) []Change {
	var out []Change
	ca, cb := &a.Config, &b.Config
	field := func(name string, has1 bool, v1 string, has2 bool, v2 string) {
		if has1 != has2 || v1 != v2 {
			out = append(out, Change{Field: name, From: optional(has1, v1), To: optional(has2, v2)})
		}
	}
	str := func(s string) string { return string(codec.AppendJSONString(nil, []byte(s))) }
	field("provider", ca.HasProvider, str(ca.Provider), cb.HasProvider, str(cb.Provider))
	field("model", true, str(ca.Model), true, str(cb.Model))
	field("temperature", ca.HasTemperature, string(codec.AppendJSONNumber(nil, ca.Temperature)), cb.HasTemperature, string(codec.AppendJSONNumber(nil, cb.Temperature)))
	field("maxTokens", ca.HasMaxTokens, strconv.FormatInt(ca.MaxTokens, 10), cb.HasMaxTokens, strconv.FormatInt(cb.MaxTokens, 10))
	field("stop", ca.HasStop, QuoteList(ca.Stop), cb.HasStop, QuoteList(cb.Stop))
	field("wire", ca.HasWire, str(ca.Wire), cb.HasWire, str(cb.Wire))
	field("thinking", ca.HasThinking, str(ca.Thinking), cb.HasThinking, str(cb.Thinking))
	field("reasoningEffort", ca.HasReasoningEffort, str(ca.ReasoningEffort), cb.HasReasoningEffort, str(cb.ReasoningEffort))
	if a.System != b.System {
		la, lb := strings.Split(a.System, "\n"), strings.Split(b.System, "\n")
		first := 0
		for first < len(la) && first < len(lb) && la[first] == lb[first] {
			first++
		}
		out = append(out, Change{Field: "system", From: Count(len(la), "line", "lines"), To: Count(len(lb), "line", "lines"),
			Detail: "first different line " + strconv.Itoa(first+1)})
	}
	if t := toolsDiff(a.Tools, b.Tools); t != "" {
		out = append(out, Change{Field: "tools", Detail: t})
	}
	if !slices.EqualFunc(a.Prefix, b.Prefix, bytes.Equal) {
		out = append(out, Change{Field: "prefix", From: Count(len(a.Prefix), "message", "messages"), To: Count(len(b.Prefix), "message", "messages")})
	}
	return out
}

// QuoteList writes strings as a JSON array.
func QuoteList(ss []string) string {
	b := []byte{'['}
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = codec.AppendJSONString(b, []byte(s))
	}
	return string(append(b, ']'))
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

// PathText is Path, or "the message itself" when the messages differ at
// their start.
func (d *Diff) PathText() string {
	if d.Path == "" {
		return "the message itself"
	}
	return d.Path
}

// AppendText appends the diff as logtool diff prints it.
func (d *Diff) AppendText(b []byte) []byte {
	b = fmt.Appendf(b, "diff %s → %s in session %s\n", d.A, d.B, d.Session)
	if len(d.Header) == 0 {
		b = append(b, "header: unchanged\n"...)
	} else {
		b = append(b, "header:\n"...)
		for _, c := range d.Header {
			b = append(b, "  "+c.String()+"\n"...)
		}
	}
	b = fmt.Appendf(b, "messages: %d → %d (request %d → %d bytes)\n", d.MessagesA, d.MessagesB, d.BytesA, d.BytesB)
	switch d.Relation {
	case MessagesIdentical:
		b = append(b, "the messages are identical\n"...)
	case MessagesAppended:
		b = fmt.Appendf(b, "the first %d messages are identical; %s appended\n", d.Same, Count(d.MessagesB-d.Same, "message", "messages"))
	case MessagesDropped:
		b = fmt.Appendf(b, "the first %d messages are identical; %s dropped\n", d.Same, Count(d.MessagesA-d.Same, "message", "messages"))
	default:
		b = fmt.Appendf(b, "first diverging message: [%d] at %s (byte %d of the message)\n", d.Same, d.PathText(), d.Offset)
		b = fmt.Appendf(b, "  %s: %s\n  %s: %s\n", d.A, d.MessageA, d.B, d.MessageB)
	}
	return b
}

// AppendJSON appends the diff as one JSON object (logtool diff --json,
// the UI's /api/ diff), keys in this order:
// {"session","a","b","header":[{"field","from","to","detail"}],
// "messages":[A,B],"bytes":[A,B],"same":N,"relation":R,
// "path"?,"offset"?,"messageA"?,"messageB"?}, where a change's from, to
// and detail are its texts ("" when it has none), path, offset and both
// versions of the first diverging message (as JSON values) are present
// when relation is "diverged".
func (d *Diff) AppendJSON(b []byte) []byte {
	str := func(s string) { b = codec.AppendJSONString(b, []byte(s)) }
	b = append(b, `{"session":`...)
	str(d.Session)
	b = append(b, `,"a":`...)
	str(d.A.String())
	b = append(b, `,"b":`...)
	str(d.B.String())
	b = append(b, `,"header":[`...)
	for i, c := range d.Header {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"field":`...)
		str(c.Field)
		b = append(b, `,"from":`...)
		str(c.From)
		b = append(b, `,"to":`...)
		str(c.To)
		b = append(b, `,"detail":`...)
		str(c.Detail)
		b = append(b, '}')
	}
	b = fmt.Appendf(b, `],"messages":[%d,%d],"bytes":[%d,%d],"same":%d,"relation":`, d.MessagesA, d.MessagesB, d.BytesA, d.BytesB, d.Same)
	str(d.Relation)
	if d.Relation == MessagesDiverged {
		b = append(b, `,"path":`...)
		str(d.Path)
		b = fmt.Appendf(b, `,"offset":%d,"messageA":`, d.Offset)
		b = append(b, d.MessageA...)
		b = append(b, `,"messageB":`...)
		b = append(b, d.MessageB...)
	}
	return append(b, '}')
}
