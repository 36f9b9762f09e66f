package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/pglog"
	"github.com/sessionlog/sessionlog/internal/printable"
	"github.com/sessionlog/sessionlog/salvage"
	"github.com/spf13/cobra"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// salvageOptions are the flags of logtool salvage.
type salvageOptions struct {
	g *globalOptions
	// out is the new store to create.
	out string
}

func newSalvageCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := salvageOptions{g: g}
	cmd := &cobra.Command{
		Use:   "salvage -o NEW",
		Short: "Copy every record that still verifies into a new store",
		Long: `Copy what still verifies out of a damaged store (--db) into a new store NEW,
and report what was lost. The damaged store is opened read-only and never
changed; NEW must not exist, and appears only once it is complete.

A session is a sequence that means nothing past a hole, so each session is
copied as the longest prefix of its events whose records pass their frame
and CRC check, decode, sit under their own seq with none missing, and obey
the rules of the log. A session whose header record is damaged is lost whole.
Where the store's own reader fails on a damaged page, salvage reads the
bbolt file again session by session, so damage costs only what it hits;
warnings on stderr say when it had to.

The report on stdout has one line per session: "ID ok", "ID damaged" with
the seqs lost as a range [first,end) and why (crc, frame, decode, gap, key,
fold rule, unreadable, missing, …), or "ID lost"; then a summary line. The
exit status is 1 when anything was lost or found wrong, 0 when every session
was copied whole.`,
		Args: maxArgs(0),
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runSalvage(cmd.Context(), opts, stdout, stderr)
		}),
	}
	cmd.Flags().StringVarP(&opts.out, "output", "o", "", "the new store `NEW` to create (it must not exist)")
	return cmd
}

// runSalvage copies the store at --db into a new store.
func runSalvage(ctx context.Context, opts salvageOptions, stdout, stderr io.Writer) (err error) {
	if opts.out == "" {
		return usagef("salvage: missing -o NEW, the new store to create")
	}
	path := opts.g.db
	if pglog.IsURL(path) {
		return runSalvageURL(ctx, opts, stdout)
	}
	if err := opts.g.checkPath(true); err != nil {
		return err
	}
	wait := opts.g.lockTimeout
	if wait == 0 {
		wait = time.Nanosecond // one attempt; salvage reads 0 as its default
	}
	st, err := salvage.Open(path, &salvage.FileOptions{LockTimeout: wait})
	switch {
	case errors.Is(err, eventlog.ErrNotFound):
		return errclass.Mark(err, ErrNoStore)
	case errors.Is(err, eventlog.ErrLocked):
		return opts.g.locked(err)
	case err != nil:
		return err
	}
	defer func() { err = errors.CombineErrors(err, st.Close()) }()
	for _, w := range st.Warnings {
		fmt.Fprintf(stderr, "logtool: warning: %v\n", w)
	}
	if st.Meta != nil {
		fmt.Fprintf(stderr, "logtool: warning: %v\n", st.Meta)
	}
	walDamaged := st.WAL != nil && st.WAL.Damage != nil
	if walDamaged {
		fmt.Fprintf(stderr, "logtool: warning: %v\n", st.WAL.Damage)
	}
	rep, err := salvage.Into(ctx, st, opts.out, nil)
	if err != nil {
		return err
	}
	for _, n := range st.Notes() {
		fmt.Fprintf(stderr, "logtool: warning: %s\n", n)
	}
	return salvageReport(rep, opts, stdout, st.Meta != nil, walDamaged)
}

// runSalvageURL copies what still verifies out of a PostgreSQL store,
// read through read-only transactions, into a new bbolt file.
func runSalvageURL(ctx context.Context, opts salvageOptions, stdout io.Writer) (err error) {
	st, err := opts.g.open(openRead)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)
	src, ok := st.(salvage.Source)
	if !ok {
		return errors.AssertionFailedf("logtool: the store cannot be salvaged")
	}
	rep, err := salvage.Into(ctx, src, opts.out, nil)
	if err != nil {
		return err
	}
	return salvageReport(rep, opts, stdout, false, false)
}

// salvageReport prints the report of a salvage; metaDamaged says that a
// bbolt meta page was found damaged, walDamaged the write-ahead log.
func salvageReport(rep salvage.Report, opts salvageOptions, stdout io.Writer, metaDamaged, walDamaged bool) error {
	w := bufio.NewWriter(opts.g.human(stdout))
	for i := range rep.Sessions {
		fmt.Fprintln(w, rep.Sessions[i].String())
	}
	fmt.Fprintf(w, "%s; new store %s\n", rep.Summary(), printable.Line(opts.out))
	if err := w.Flush(); err != nil {
		return errors.Wrap(err, "salvage: write the report")
	}
	if !rep.Damaged() && !metaDamaged && !walDamaged {
		return nil
	}
	t := rep.Totals()
	var what []string
	if n := t.Damaged + t.Lost; n > 0 {
		lost := fmt.Sprintf("%d", t.LostEvents)
		if t.Unknown {
			lost = "at least " + lost
		}
		what = append(what, fmt.Sprintf("%s not copied whole, %s %s lost", count(n, "session", "sessions"), lost,
			plural(int(t.LostEvents), "event", "events")))
	}
	if rep.List != nil {
		what = append(what, "the session list is damaged")
	}
	if metaDamaged {
		what = append(what, "a bbolt meta page is damaged: the store reads as it was one commit earlier")
	}
	if walDamaged {
		what = append(what, "the write-ahead log is damaged: its writes after the damage are lost")
	}
	return errors.WithHintf(errclass.Mark(errors.Newf("salvage: %s", errors.Safe(strings.Join(what, "; "))), ErrFindings),
		"the lines above name each session's lost seqs and why; %s holds the rest, and 'logtool --db %s verify' checks it",
		errors.Safe(printable.Line(opts.out)), errors.Safe(printable.Line(opts.out)))
}
