package main

import (
	"bufio"
	"bytes"
	"context"
	_ "embed" // the demo session
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/spf13/cobra"
)

// demoLog is the built-in example session: two turns of a small coding
// task in DSH's format, with an initial header snapshot, a tool call and
// a header delta.
//
//go:embed testdata/demo.jsonl
var demoLog []byte

// demoOptions are the flags of logtool demo.
type demoOptions struct {
	g *globalOptions
}

func newDemoCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := demoOptions{g: g}
	return &cobra.Command{
		Use:   "demo",
		Short: "Import a built-in example session and show it",
		Long: `Import a built-in example session into the store (creating the store if
needed) under a new random id, with its times moved to now, then print its
header events, its events as 'logtool show' prints them, and a summary.`,
		Args: maxArgs(0),
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runDemo(cmd.Context(), opts, args, stdout, stderr)
		}),
	}
}

// runDemo imports the demo session and prints it.
func runDemo(ctx context.Context, opts demoOptions, _ []string, stdout, stderr io.Writer) (err error) {
	id, err := newUUID(opts.g.env.random)
	if err != nil {
		return err
	}
	sc := codec.NewScanner(bytes.NewReader(demoLog), codec.Limits{})
	orig, err := sc.Header()
	if err != nil {
		return errors.Wrap(err, "demo: built-in session")
	}
	now := float64(opts.g.env.now().UnixMilli())
	h := codec.NewSessionHeader(id, now, orig.Cwd, "", 0)
	src := &retimed{sc: sc, shift: now - orig.CreatedAt}

	st, err := opts.g.open(openCreate)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)
	if _, err := st.Import(ctx, h, src); err != nil {
		return errors.Wrapf(err, "demo: import the built-in session as %s", errors.Safe(id))
	}
	head, err := sessionHead(ctx, st, opts.g.db, id)
	if err != nil {
		return err
	}

	w := bufio.NewWriter(stdout)
	fmt.Fprintf(w, "Imported the demo session %s into %s.\n", id, opts.g.db)
	var headers, events []string
	var steps, calls, nHeaders int64
	width := len(strconv.FormatInt(max(head.Next-1, 0), 10))
	err = scanRange(ctx, st, id, 0, head.Next-1, func(ev *codec.Event) error {
		events = append(events, eventLine(ev, width))
		switch d := ev.Data.(type) {
		case *codec.RequestHeader:
			nHeaders++
			headers = append(headers, headerBlock(ev, d.Header)...)
		case *codec.HeaderDelta:
			nHeaders++
			headers = append(headers, headerBlock(ev, d.Raw)...)
		case *codec.StepStart:
			steps++
		case *codec.ToolCall:
			calls++
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nHeader events (what every request carries besides the history):\n\n")
	for _, l := range headers {
		fmt.Fprintf(w, "  %s\n", l)
	}
	fmt.Fprintf(w, "\nEvents (logtool show %s):\n\n", id)
	for _, l := range events {
		fmt.Fprintf(w, "  %s\n", l)
	}
	fmt.Fprintf(w, "\nSession %s: %d events, %d turns, %d steps, %d tool %s, %d header %s.\n",
		id, head.Next, head.Turns, steps, calls, plural(int(calls), "call", "calls"),
		nHeaders, plural(int(nHeaders), "event", "events"))
	if err := w.Flush(); err != nil {
		return errors.Wrap(err, "demo: write")
	}
	fmt.Fprintf(stderr, "try: logtool show %s --turn 2; logtool stat %s; logtool export %s\n", id, id, id)
	return nil
}

// headerBlock renders a request/header or request/header-delta for
// reading: a title line, then one line per key of the header (or delta),
// string values with their lines shown as lines, tool lists by name.
func headerBlock(ev *codec.Event, obj []byte) []string {
	title := "seq " + itoa(ev.Seq) + " " + ev.Type
	if d, ok := ev.Data.(*codec.RequestHeader); ok {
		title += " (" + d.Reason + ")"
	}
	lines := []string{title}
	_ = eachField(obj, func(k string, v []byte) error {
		label := fmt.Sprintf("  %-14s", k)
		switch t := scalar(v); {
		case t.Kind == codec.KindString:
			for i, l := range strings.Split(string(t.Str), "\n") {
				if i > 0 {
					label = strings.Repeat(" ", len(label))
				}
				lines = append(lines, label+l)
			}
		case k == "tools" && t.Kind == codec.KindArray:
			lines = append(lines, label+toolNames(v))
		case k == "tools" && t.Kind == codec.KindObject:
			_ = eachField(v, func(op string, list []byte) error {
				lines = append(lines, label+op+": "+toolNames(list))
				label = strings.Repeat(" ", len(label))
				return nil
			})
		default:
			lines = append(lines, label+jsonOf(v))
		}
		return nil
	})
	return lines
}

// toolNames lists the names in a stored array of tools (or of names).
func toolNames(list []byte) string {
	r := codec.NewReader(list)
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindArray {
		return jsonOf(list)
	}
	names := make([]string, 0, t.N)
	for i := 0; i < t.N; i++ {
		v, err := r.Value(maxDepth)
		if err != nil {
			break
		}
		if s := scalar(v); s.Kind == codec.KindString {
			names = append(names, string(s.Str))
		} else {
			names = append(names, lookupString(v, "name"))
		}
	}
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, ", ")
}

// retimed feeds the demo's events to Store.Import with their times moved
// by shift milliseconds, so the demo session looks as if it just ran.
type retimed struct {
	sc    *codec.Scanner
	shift float64
}

// Next implements eventlog.Source.
func (s *retimed) Next() (codec.Event, error) {
	ev, err := s.sc.Next()
	if err != nil {
		return ev, err
	}
	raw, err := setField(ev.Raw, "time", codec.AppendNumber(nil, ev.Time+s.shift))
	if err != nil {
		return codec.Event{}, errors.Wrapf(err, "demo: seq %d", errors.Safe(ev.Seq))
	}
	return codec.DecodeEvent(raw)
}

// setField returns a copy of the object image obj with the value of key
// replaced by the stored image val, keys in their order.
func setField(obj []byte, key string, val []byte) ([]byte, error) {
	r := codec.NewReader(obj)
	t, err := r.Next()
	if err != nil || t.Kind != codec.KindObject {
		return nil, errors.New("demo: event is not an object")
	}
	out := codec.AppendMapHeader(make([]byte, 0, len(obj)+8), t.N)
	for i := 0; i < t.N; i++ {
		k, err := r.Next()
		if err != nil {
			return nil, errors.Wrap(err, "demo: read key")
		}
		v, err := r.Value(maxDepth)
		if err != nil {
			return nil, errors.Wrap(err, "demo: read value")
		}
		out = codec.AppendString(out, string(k.Str))
		if string(k.Str) == key {
			v = val
		}
		out = append(out, v...)
	}
	return out, nil
}
