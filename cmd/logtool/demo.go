package main

import (
	"bufio"
	"context"
	_ "embed" // the demo scenario
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/scenario"
	"github.com/sessionlog/sessionlog/verify"
	"github.com/spf13/cobra"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// demoScenario is the built-in scenario of logtool demo: a small coding
// task with a session prefix, tool calls, an injected notice, a system
// prompt change and a compaction.
//
//go:embed demo.json
var demoScenario []byte

// demoOptions are the flags of logtool demo.
type demoOptions struct {
	g *globalOptions
}

func newDemoCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := demoOptions{g: g}
	return &cobra.Command{
		Use:   "demo",
		Short: "Run a built-in scenario through the loop, then replay and verify it",
		Long: `Run the built-in scenario through the real agent loop against a scripted
model, into the store (created if needed), under a new session id: a coding
task with a session prefix, tool calls, an injected notice, a system prompt
change and a compaction. Then print the requests the model received, the
session's header events, the compaction, every request as rebuilt from the
log alone (logtool replay), and a verify summary.`,
		Args: maxArgs(0),
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runDemo(cmd.Context(), opts, args, stdout, stderr)
		}),
	}
}

// runDemo runs the demo scenario and shows what the log holds.
func runDemo(ctx context.Context, opts demoOptions, _ []string, stdout, stderr io.Writer) (err error) {
	sc, err := scenario.Parse(demoScenario)
	if err != nil {
		return errors.Wrap(err, "demo: built-in scenario")
	}
	st, err := opts.g.open(openCreate)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)
	rep, err := runScenario(ctx, opts.g, st, sc, "", nil)
	if err != nil {
		return errors.Wrap(err, "demo")
	}
	id := rep.Session
	w := bufio.NewWriter(opts.g.human(stdout))
	fmt.Fprintf(w, "The agent loop ran a scripted coding session into %s as session %s.\n", opts.g.name(), id)
	fmt.Fprintf(w, "Every request it sent is recorded by its digest, and rebuilt below from the log alone.\n")
	fmt.Fprintf(w, "\nRequests the model received (logtool run prints these):\n\n")
	for _, s := range rep.Steps {
		fmt.Fprintf(w, "  %s  %5d bytes  sha256 %s\n", step(s.Turn, s.Step), s.Bytes, hex.EncodeToString(s.Digest[:]))
	}
	if err := demoEvents(ctx, st, opts.g.name(), id, w); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nReplay (logtool replay %s):\n\n", id)
	if err := eachStep(ctx, st, opts.g.name(), id, true, func(s rebuild.Step) error { return writeStepText(w, s, nil) }); err != nil {
		return err
	}
	vs, ok := st.(verify.Store)
	if !ok {
		return errors.AssertionFailedf("demo: the store cannot be verified")
	}
	res, err := verify.Session(ctx, vs, id, verify.Options{Strict: true})
	if err != nil {
		return err
	}
	for _, f := range res.Findings {
		fmt.Fprintln(w, f.String())
	}
	fmt.Fprintf(w, "verify (logtool verify %s --strict): %s, %s, %s checked: %s\n", id,
		count(int(res.Events), "event", "events"), count(res.Steps, "step", "steps"),
		count(res.Digests, "digest", "digests"), count(len(res.Findings), "finding", "findings"))
	if err := w.Flush(); err != nil {
		return errors.Wrap(err, "demo: write")
	}
	reportOutcomes(stderr, rep)
	fmt.Fprintf(stderr, "try: logtool show %s; logtool cache %s; logtool diff %s 1.1 3.1; logtool replay %s --format json\n", id, id, id, id)
	if res.Failed() {
		return errclass.Mark(errors.New("demo: verify found problems"), ErrFindings)
	}
	return nil
}

// demoEvents prints the session's header events and compactions.
func demoEvents(ctx context.Context, st store, db, id string, w *bufio.Writer) error {
	head, err := sessionHead(ctx, st, db, id)
	if err != nil {
		return err
	}
	var headers, compactions []string
	width := len(strconv.FormatInt(max(head.Next-1, 0), 10))
	err = scanRange(ctx, st, id, 0, head.Next-1, func(ev *codec.Event) error {
		switch d := ev.Data.(type) {
		case *codec.RequestHeader:
			headers = append(headers, headerBlock(ev, d.Header)...)
		case *codec.HeaderDelta:
			headers = append(headers, headerBlock(ev, d.Raw)...)
		case *codec.CompactStart, *codec.CompactSummary, *codec.CompactEnd:
			compactions = append(compactions, eventLine(ev, width))
		case *codec.UserMessage:
			if ev.Op.Kind == codec.OpReplace {
				compactions = append(compactions, eventLine(ev, width))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nHeader events (what every request carries besides the history; the prefix is in messagePrefix):\n\n")
	for _, l := range headers {
		fmt.Fprintf(w, "  %s\n", l)
	}
	fmt.Fprintf(w, "\nCompaction (the head of the history replaced by a summary; header and prefix untouched):\n\n")
	for _, l := range compactions {
		fmt.Fprintf(w, "  %s\n", l)
	}
	fmt.Fprintf(w, "\nSession %s: %d events in %d turns.\n", id, head.Next, head.Turns)
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
