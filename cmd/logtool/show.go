package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/printable"
	"github.com/spf13/cobra"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// showOptions are the flags of logtool show.
type showOptions struct {
	g *globalOptions
	// types keeps only events of these types; empty keeps all.
	types []string
	// from and to bound the seqs shown (to inclusive) when set.
	from, to       int64
	hasFrom, hasTo bool
	// turn selects the events of one turn when hasTurn.
	turn    int64
	hasTurn bool
	// json prints canonical JSON lines instead of summaries.
	json bool
}

func newShowCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := showOptions{g: g}
	cmd := &cobra.Command{
		Use:   "show SESSION [--type TYPE,...] [--from SEQ] [--to SEQ] [--turn T] [--json]",
		Short: "Print a session's events, one per line",
		Long: `Print a session's events, one per line: seq, type and a short summary (turn
and step numbers as T.S, the start of any text with newlines escaped, tool
names, header reasons, sizes in bytes). --json prints the events as canonical
JSON lines instead, exactly as export writes them.

--from and --to bound the seqs (both inclusive). --turn T selects the events
from turn T's turn/start to its turn/end. --type keeps only the listed types.
The filters combine.`,
		Args: exactArgs("SESSION"),
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			opts.hasFrom, opts.hasTo, opts.hasTurn = f.Changed("from"), f.Changed("to"), f.Changed("turn")
			return runShow(cmd.Context(), opts, args, stdout, stderr)
		}),
	}
	f := cmd.Flags()
	f.StringSliceVar(&opts.types, "type", nil, "show only events of these `TYPES` (comma-separated or repeated)")
	f.Int64Var(&opts.from, "from", 0, "first `SEQ` to show")
	f.Int64Var(&opts.to, "to", 0, "last `SEQ` to show")
	f.Int64Var(&opts.turn, "turn", 0, "show turn `T`, from its turn/start to its turn/end")
	f.BoolVar(&opts.json, "json", false, "print canonical JSON lines")
	return cmd
}

// runShow prints the selected events of session args[0].
func runShow(ctx context.Context, opts showOptions, args []string, stdout, stderr io.Writer) (err error) {
	id := args[0]
	switch {
	case opts.hasFrom && opts.from < 0:
		return usagef("show: --from must not be negative")
	case opts.hasTo && opts.to < 0:
		return usagef("show: --to must not be negative")
	case opts.hasFrom && opts.hasTo && opts.to < opts.from:
		return usagef("show: --to %d is before --from %d", errors.Safe(opts.to), errors.Safe(opts.from))
	case opts.hasTurn && opts.turn < 1:
		return usagef("show: --turn counts from 1")
	}
	types := map[string]bool{}
	for _, t := range opts.types {
		if t == "" {
			return usagef("show: --type has an empty type name")
		}
		types[t] = true
		if !knownType(t) {
			fmt.Fprintf(stderr, "logtool: note: %s is no event type the engine knows; only events of that exact type match\n", printable.ID(t))
		}
	}

	st, err := opts.g.open(openRead)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)
	head, err := sessionHead(ctx, st, opts.g.name(), id)
	if err != nil {
		return err
	}
	if opts.hasFrom && opts.from >= head.Next {
		return errors.WithHintf(
			errclass.Mark(errors.Newf("show: --from %d is past the end of session %s (%s)",
				errors.Safe(opts.from), errors.Safe(printable.ID(id)), errors.Safe(seqRange(head.Next))), eventlog.ErrNotFound),
			"'logtool ls' shows how many events each session has")
	}
	from, to := int64(0), head.Next-1
	if opts.hasFrom {
		from = max(from, opts.from)
	}
	if opts.hasTo {
		to = min(to, opts.to)
	}
	if opts.hasTurn {
		start, end, err := turnRange(ctx, st, id, opts.turn)
		if err != nil {
			return err
		}
		from, to = max(from, start), min(to, end)
	}
	if from > to {
		return nil
	}
	if !opts.json {
		stdout = opts.g.human(stdout)
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	width := len(strconv.FormatInt(max(head.Next-1, 0), 10))
	err = scanRange(ctx, st, id, from, to, func(ev *codec.Event) error {
		if len(types) > 0 && !types[ev.Type] {
			return nil
		}
		if opts.json {
			line, err := ev.AppendJSON(nil)
			if err != nil {
				return errors.Wrapf(err, "show %s: seq %d", errors.Safe(printable.ID(id)), errors.Safe(ev.Seq))
			}
			_, err = w.Write(append(line, '\n'))
			return errors.Wrap(err, "show: write")
		}
		_, err := fmt.Fprintf(w, "%s\n", eventLine(ev, width))
		return errors.Wrap(err, "show: write")
	})
	if err != nil {
		return err
	}
	return errors.Wrap(w.Flush(), "show: write")
}

// seqRange describes the seqs of a session of n events.
func seqRange(n int64) string {
	if n == 0 {
		return "it has no events"
	}
	return fmt.Sprintf("its seqs are 0..%d", n-1)
}

// eventLine is the line show prints for ev: seq (right-aligned to width),
// type, summary.
func eventLine(ev *codec.Event, width int) string {
	line := fmt.Sprintf("%*d  %-20s  %s", width, ev.Seq, printable.ID(ev.Type), printable.Line(audit.Summary(ev)))
	for len(line) > 0 && line[len(line)-1] == ' ' {
		line = line[:len(line)-1]
	}
	return line
}

// scanRange calls fn for the events of session id with seqs from..to.
func scanRange(ctx context.Context, st store, id string, from, to int64, fn func(*codec.Event) error) error {
	return audit.Scan(ctx, st, id, from, to, fn)
}

// turnRange returns the seqs of turn's turn/start and of its turn/end: the
// first turn/end of that turn after it, else the event before the next
// turn/start (a turn a crash left open), else the last event.
func turnRange(ctx context.Context, st store, id string, turn int64) (start, end int64, err error) {
	start, end = -1, -1
	var last int64 = -1
	err = scanRange(ctx, st, id, 0, 1<<62, func(ev *codec.Event) error {
		last = ev.Seq
		switch d := ev.Data.(type) {
		case *codec.TurnStart:
			if start >= 0 {
				end = ev.Seq - 1
				return errFound
			}
			if d.Turn == turn {
				start = ev.Seq
			}
		case *codec.TurnEnd:
			if start >= 0 && d.Turn == turn {
				end = ev.Seq
				return errFound
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFound) {
		return 0, 0, err
	}
	if start < 0 {
		return 0, 0, errors.WithHintf(errors.Newf("session %s has no turn %d", errors.Safe(printable.ID(id)), errors.Safe(turn)),
			"'logtool show %s --type turn/start' lists its turns", errors.Safe(printable.ID(id)))
	}
	if end < 0 {
		end = last
	}
	return start, end, nil
}

// knownType reports whether t is an event type of docs/format.md#event-types.
func knownType(t string) bool {
	switch t {
	case codec.TypeTurnStart, codec.TypeTurnEnd, codec.TypeStepStart, codec.TypeStepEnd,
		codec.TypeUserMessage, codec.TypePromptBlocked, codec.TypeContextMessage, codec.TypeSteeringMessage,
		codec.TypeAssistantChunk, codec.TypeAssistantMessage, codec.TypeToolCall, codec.TypeToolResult,
		codec.TypeRequestHeader, codec.TypeHeaderDelta, codec.TypeRequestDigest,
		codec.TypeCompactStart, codec.TypeCompactSummary, codec.TypeCompactEnd:
		return true
	}
	return false
}
