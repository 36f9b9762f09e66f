package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/printable"
	"github.com/spf13/cobra"
)

// lsOptions are the flags of logtool ls.
type lsOptions struct {
	g *globalOptions
	// json prints one JSON object per session instead of the table.
	json bool
}

func newLsCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := lsOptions{g: g}
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the sessions in the store",
		Long: `List the sessions in the store, ordered by id: one line per session with its
id, number of events, number of turns, last activity (the time of its last
event, RFC 3339 UTC) and parent session (- when it is no fork).

--json prints one JSON object per line instead, one per session, without
the title line:
{"session":ID,"events":N,"turns":N,"lastActivity":RFC3339|null,"parent":ID|null}`,
		Args: maxArgs(0),
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runLs(cmd.Context(), opts, args, stdout, stderr)
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print one JSON object per session and line")
	return cmd
}

// runLs prints one line per session.
func runLs(ctx context.Context, opts lsOptions, _ []string, stdout, _ io.Writer) (err error) {
	st, err := opts.g.open(openRead)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)
	if opts.json {
		w := bufio.NewWriter(stdout)
		err := eachPage(ctx, st, func(heads []eventlog.Head) error {
			for _, h := range heads {
				var o codec.Object
				o.Str("session", h.Header.ID).Int("events", h.Next).Int("turns", h.Turns)
				o.Value("lastActivity", jsonTimestamp(h.LastTime))
				if p := h.Header.ParentSession; p != "" {
					o.Str("parent", p)
				} else {
					o.Value("parent", codec.AppendNil(nil))
				}
				if err := writeJSONLine(w, o.Bytes()); err != nil {
					return err
				}
			}
			return w.Flush()
		})
		return errors.Wrap(err, "ls")
	}
	tw := tabwriter.NewWriter(opts.g.human(stdout), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tEVENTS\tTURNS\tLAST-ACTIVITY\tPARENT")
	err = eachPage(ctx, st, func(heads []eventlog.Head) error {
		for _, h := range heads {
			parent := "-"
			if p := h.Header.ParentSession; p != "" {
				parent = printable.ID(p)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", printable.ID(h.Header.ID), h.Next, h.Turns, timestamp(h.LastTime), parent)
		}
		// Flushing per page keeps memory bounded; pages are wide enough
		// that the columns rarely shift between them.
		return tw.Flush()
	})
	return errors.Wrap(err, "ls")
}

// lsPage is the number of sessions ls reads and prints at a time.
const lsPage = 512

// pager is a store that lists its sessions a page at a time; both stores
// are.
type pager interface {
	SessionPage(ctx context.Context, after string, n int) ([]eventlog.Head, error)
}

// eachPage calls fn with the heads of st's sessions, in id order, a page
// at a time when st can page (else all at once).
func eachPage(ctx context.Context, st store, fn func([]eventlog.Head) error) error {
	p, ok := st.(pager)
	if !ok {
		heads, err := st.Sessions(ctx)
		if err != nil {
			return err
		}
		return fn(heads)
	}
	after := ""
	for {
		heads, err := p.SessionPage(ctx, after, lsPage)
		if err != nil {
			return err
		}
		if err := fn(heads); err != nil {
			return err
		}
		if len(heads) < lsPage {
			return nil
		}
		after = heads[len(heads)-1].Header.ID
	}
}

// jsonTimestamp is timestamp's value in storage form: the string, or null
// for "-".
func jsonTimestamp(ms float64) []byte {
	if t := timestamp(ms); t != "-" {
		return codec.AppendString(nil, t)
	}
	return codec.AppendNil(nil)
}

// writeJSONLine writes the storage-form value mp as a line of canonical
// JSON (the codec's encoder, docs/format.md#json-text).
func writeJSONLine(w *bufio.Writer, mp []byte) error {
	line, _, err := codec.ToJSON(nil, mp)
	if err != nil {
		return err
	}
	_, err = w.Write(append(line, '\n'))
	return err
}

// timestamp formats epoch milliseconds as RFC 3339 in UTC, to the second;
// a value no clock can have is printed as "-".
func timestamp(ms float64) string {
	const limit = 253402300799999 // 9999-12-31T23:59:59.999Z
	if math.IsNaN(ms) || ms < 0 || ms > limit {
		return "-"
	}
	return time.UnixMilli(int64(ms)).UTC().Format(time.RFC3339)
}
