package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/errclass"
	"github.com/sessionlog/sessionlog/internal/printable"
	"github.com/sessionlog/sessionlog/verify"
)

// verifyOptions are the flags of logtool verify.
type verifyOptions struct {
	g      *globalOptions
	strict bool
}

func newVerifyCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := verifyOptions{g: g}
	cmd := &cobra.Command{
		Use:   "verify [SESSION…] [--strict]",
		Short: "Check records, chain hashes, log rules, rebuilds and digests",
		Long: `Check the named sessions (all sessions when none is named) end to end:
every record's frame and CRC, that its key is its seq, the chain hash and
event count of the session's head, every rule of the log, the turn and step
structure, that every step rebuilds, and that every recorded request digest
matches the rebuilt request (inherited ones through the fork lineage). In
a session the recording gateway wrote (logtool gateway): that its
recorded bytes add up (every chunk's digest, every body's chunks, size
and digest, every chunk used; an exchange without an answer is a
warning), and that its mapped events are the mapping of those bytes,
re-run (a "mapping" finding at the first event that differs). A request
the gateway recorded with --redact is checked against the redacted body
its chunks hold, and its digest (of the body sent) is reported "not
checkable (redacted content)", class "redacted": never a mismatch.

Findings are printed one per line with session and seq, then a summary line.
Breaks of the turn structure and redactions are warnings unless --strict. A store a crash
left with writes in its write-ahead log gets a line saying how many records
are to replay, and a warning naming the segment and offset of a torn tail
the open dropped (a write never acknowledged). The exit status
is 1 when there is any finding. Progress goes to stderr when it is a
terminal.`,
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runVerify(cmd.Context(), opts, args, stdout, stderr)
		}),
	}
	cmd.Flags().BoolVar(&opts.strict, "strict", false, "count turn-structure breaks and redactions as findings")
	return cmd
}

// lister lists the sessions of a store; *boltlog.Log is one.
type lister interface {
	SessionIDs(ctx context.Context) ([]string, error)
}

func runVerify(ctx context.Context, opts verifyOptions, args []string, stdout, stderr io.Writer) (err error) {
	opts.g.noMetaWarning = true // verify.CheckStore reports it as a finding
	st, err := opts.g.open(openRead)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)
	vs, ok := st.(verify.Store)
	ls, ok2 := st.(lister)
	if !ok || !ok2 {
		return errors.AssertionFailedf("logtool: the store cannot be verified")
	}
	ids := args
	if len(ids) == 0 {
		if ids, err = ls.SessionIDs(ctx); err != nil {
			return err
		}
	}
	// Progress is our own line, rewritten in place with \r and an
	// erase sequence: written to the terminal itself.
	progress := isTerminal(opts.g.rawStderr)
	w := bufio.NewWriter(opts.g.human(stdout))
	var sessions, findings, warnings, steps, digests, inherited int
	var events int64
	// The store's own structures first: bbolt opens a store whose newest
	// meta page is damaged one commit back, which nothing else can tell.
	if sc, ok := st.(verify.StoreChecker); ok {
		for _, f := range verify.CheckStore(sc) {
			findings++
			fmt.Fprintln(w, printable.Line(f.String()))
		}
	}
	// The write-ahead log a crash left: what the read-only Open replayed
	// into memory, and a torn tail it dropped (a warning).
	if wr, ok := st.(verify.WALReporter); ok {
		wal, fs := verify.CheckWAL(wr)
		if wal.Segments > 0 {
			fmt.Fprintf(w, "store: write-ahead log: %s to replay, in %s\n",
				count(wal.Replay, "record", "records"), count(wal.Segments, "segment", "segments"))
		}
		for _, f := range fs {
			warnings++
			fmt.Fprintln(w, printable.Line(f.String()))
		}
	}
	// A named session that is not in the store gets the not-found
	// message and hint of every other command; the others are verified
	// and the summary line counts it.
	var missing []error
	for i, id := range ids {
		if progress {
			fmt.Fprintf(opts.g.rawStderr, "\rverifying %d/%d", i+1, len(ids))
		}
		if _, err := sessionHead(ctx, st, opts.g.name(), id); errors.Is(err, eventlog.ErrNotFound) {
			missing = append(missing, err)
			continue
		}
		res, err := verify.Session(ctx, vs, id, verify.Options{Strict: opts.strict})
		if err != nil {
			if progress {
				fmt.Fprintln(opts.g.rawStderr)
			}
			w.Flush()
			return errors.Wrapf(err, "verify %s", errors.Safe(printable.ID(id)))
		}
		sessions++
		events += res.Events
		steps += res.Steps
		digests += res.Digests
		inherited += res.Inherited
		for _, f := range res.Findings {
			if f.Warning {
				warnings++
			} else {
				findings++
			}
			fmt.Fprintln(w, printable.Line(f.String()))
		}
	}
	if progress {
		fmt.Fprint(opts.g.rawStderr, "\r\033[K")
	}
	fmt.Fprintf(w, "verified %s, %s, %s, %s", count(sessions, "session", "sessions"),
		count(int(events), "event", "events"), count(steps, "step", "steps"), count(digests, "digest", "digests"))
	if inherited > 0 {
		fmt.Fprintf(w, " (%d inherited and unverifiable)", inherited)
	}
	fmt.Fprintf(w, ": %s, %s", count(findings, "finding", "findings"), count(warnings, "warning", "warnings"))
	if len(missing) > 0 {
		fmt.Fprintf(w, ", %d not found", len(missing))
	}
	fmt.Fprintln(w)
	if err := w.Flush(); err != nil {
		return err
	}
	if len(missing) > 0 {
		// Like import: each refusal is printed, and the last one is the
		// command's error.
		for _, err := range missing[:len(missing)-1] {
			printError(stderr, err)
		}
		return missing[len(missing)-1]
	}
	if findings > 0 {
		return errclass.Mark(errors.Newf("verify: %s", errors.Safe(count(findings, "finding", "findings"))), ErrFindings)
	}
	return nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
