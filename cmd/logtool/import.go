package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/spf13/cobra"
)

// importOptions are the flags of logtool import.
type importOptions struct {
	g *globalOptions
	// strict refuses a file that ends in a torn tail instead of dropping
	// the tail.
	strict bool
}

func newImportCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := importOptions{g: g}
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Import DSH session files (JSONL; - reads stdin)",
		Long: `Import DSH session files (JSONL, SPEC §2) into the store, creating it if needed.

Each file is imported atomically: all its events or none. For each imported
file, "SESSION_ID EVENTS" is printed on stdout. A file that ends in a torn tail
(an interrupted write after its last turn/end, SPEC §2.3) is imported without
the tail, and what was dropped is reported on stderr; --strict refuses such a
file instead. A refused file imports nothing; the other files go on, and the
exit code is 1.`,
		Args: minArgs("FILE"),
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runImport(cmd.Context(), opts, args, stdout, stderr)
		}),
	}
	cmd.Flags().BoolVar(&opts.strict, "strict", false, "refuse a file that ends in a torn tail instead of dropping the tail")
	return cmd
}

// runImport imports each file of args into the store.
func runImport(ctx context.Context, opts importOptions, args []string, stdout, stderr io.Writer) (err error) {
	stdin := 0
	for _, a := range args {
		if a == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return usagef("import: - (stdin) can be given once")
	}
	st, err := opts.g.open(openCreate)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)

	failed := 0
	for _, name := range args {
		if err := ctx.Err(); err != nil {
			return errors.Wrap(err, "import")
		}
		id, n, err := importFile(ctx, st, opts, name, stderr)
		if err != nil {
			if len(args) == 1 {
				return err
			}
			failed++
			printError(stderr, err)
			continue
		}
		if _, err := fmt.Fprintf(stdout, "%s %d\n", id, n); err != nil {
			return errors.Wrap(err, "import: write output")
		}
	}
	if failed > 0 {
		return errors.Newf("%d of %d files not imported", errors.Safe(failed), errors.Safe(len(args)))
	}
	return nil
}

// importFile imports one file and returns its session id and event count.
func importFile(ctx context.Context, st store, opts importOptions, name string, stderr io.Writer) (id string, n int64, err error) {
	file := name
	var r io.Reader = opts.g.env.stdin
	if name == "-" {
		file = "stdin"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return "", 0, errors.Wrap(err, "import")
		}
		defer func() { _ = f.Close() }() // read-only: nothing to flush
		r = f
	}
	sc := codec.NewScanner(r, codec.Limits{})
	h, err := sc.Header()
	if err != nil {
		return "", 0, errors.Wrapf(err, "import %s", errors.Safe(file))
	}
	src := &importSource{sc: sc, strict: opts.strict, file: file, last: -1}
	n, err = st.Import(ctx, h, src)
	if err != nil {
		return "", 0, src.explain(err, h.ID, opts.g.db)
	}
	if t := src.torn; t.FirstLine != 0 {
		fmt.Fprintf(stderr, "logtool: warning: %s: dropped a torn tail from line %d (%d %s, %d bytes): %v; imported the %d events before it\n",
			file, t.FirstLine, t.Lines, plural(t.Lines, "line", "lines"), t.Bytes, t.Cause, n)
	}
	return h.ID, n, nil
}

// importSource feeds a file's events to Store.Import and remembers where
// it stopped, so that a refusal can name the file, line and seq.
type importSource struct {
	sc     *codec.Scanner
	strict bool
	file   string
	// last is the seq of the last event handed out; -1 before the first.
	last int64
	// scanFailed is set when the scanner (or --strict) refused the file;
	// its errors already name the line and seq.
	scanFailed bool
	torn       codec.Torn
}

// Next implements eventlog.Source.
func (s *importSource) Next() (codec.Event, error) {
	ev, err := s.sc.Next()
	switch {
	case err == io.EOF:
		s.torn = s.sc.Torn()
		if s.strict && s.torn.FirstLine != 0 {
			s.scanFailed = true
			t := s.torn
			return codec.Event{}, errors.WithHintf(
				codec.NamesSeq(tornTailf("torn tail from line %d (%d %s, %d bytes, after seq %d): %v",
					errors.Safe(t.FirstLine), errors.Safe(t.Lines), errors.Safe(plural(t.Lines, "line", "lines")),
					errors.Safe(t.Bytes), errors.Safe(s.last), t.Cause)),
				"the file ends in an interrupted write; without --strict, the %d complete events before line %d are imported",
				errors.Safe(s.last+1), errors.Safe(t.FirstLine))
		}
		return codec.Event{}, io.EOF
	case err != nil:
		s.scanFailed = true
		return codec.Event{}, err
	}
	s.last = ev.Seq
	return ev, nil
}

// explain turns an Import error into the error logtool reports: it names
// the file, and the line and seq where the store refused an event.
func (s *importSource) explain(err error, id, db string) error {
	switch {
	case errors.Is(err, eventlog.ErrConflict):
		return errors.WithHint(
			errors.Mark(errors.Newf("import %s: session %s exists already in %s",
				errors.Safe(s.file), errors.Safe(id), errors.Safe(db)), eventlog.ErrConflict),
			"a session is imported once; 'logtool export' prints the stored copy, and --db names another store")
	case s.scanFailed:
		return errors.Wrapf(err, "import %s", errors.Safe(s.file))
	case s.last >= 0 && (errors.Is(err, codec.ErrInvalid) || errors.Is(err, codec.ErrCorrupt)):
		// Line 1 is the header; event seq N is on line N+2 (seqs are
		// contiguous from 0, which the scanner enforces).
		// The store's error names the seq.
		return errors.Wrapf(err, "import %s: line %d", errors.Safe(s.file), errors.Safe(s.last+2))
	}
	return errors.Wrapf(err, "import %s: session %s", errors.Safe(s.file), errors.Safe(id))
}

// plural returns one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
