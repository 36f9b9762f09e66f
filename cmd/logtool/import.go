package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/printable"
	"github.com/sessionlog/sessionlog/transcript"
	"github.com/spf13/cobra"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// importOptions are the flags of logtool import.
type importOptions struct {
	g *globalOptions
	// strict refuses a file that ends in a torn tail instead of dropping
	// the tail.
	strict bool
	// id, when set, is the id the one file is imported under.
	id string
	// tr holds the flags for other agents' transcripts (docs/transcripts.md).
	tr transcriptFlags
}

func newImportCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := importOptions{g: g}
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Import DSH session files, Codex rollouts, Claude Code transcripts and Gemini CLI sessions",
		Long: `Import DSH session files (JSONL, docs/format.md#interchange) into the store, creating it if needed.

Each file is imported atomically: all its events or none. For each imported
file, "SESSION_ID EVENTS" is printed on stdout. A file that ends in a torn tail
(an interrupted write after its last turn/end, docs/format.md#torn-tails) is imported without
the tail, and what was dropped is reported on stderr; --strict refuses such a
file instead. A refused file imports nothing; the other files go on, and the
exit code is 1.

--id NEW imports one file under the session id NEW, so that a session can be
imported next to the one it was (a second copy, or a file whose id the store
holds already). The copy's header names the file's id as parentSession and
its event count as seedLength (docs/rules.md#fork): the request digests recorded in
it were computed under the old id, and verify checks them with that id. The
file is read twice (once to count its events), so it cannot be stdin.

A directory stands for every *.jsonl file under it, with or without --format,
imported in path order; symbolic links to folders and files are followed, and
a folder or file reached twice (a link cycle) is taken once. A directory with
no *.jsonl file under it is an error (not found), and creates no store.

--format codex|claude-code|gemini-cli|auto imports other agents' transcripts
(docs/transcripts.md): every line kept verbatim ('export --format source' writes the file
back), the conversation mapped onto the event model; auto tells DSH, Codex,
Claude Code and Gemini CLI files apart by their first lines, and refuses a
file they do not tell (none says, or two say different formats) with its
name: --format names it then. A report per file goes to stderr.
--skip-existing skips a session the store holds already.

An interrupt (Ctrl-C) stops the import: the file being imported is rolled
back, the files after it are not attempted and say so, and the exit code is
130.`,
		Args: minArgs("FILE"),
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runImport(cmd.Context(), opts, args, stdout, stderr)
		}),
	}
	cmd.Flags().BoolVar(&opts.strict, "strict", false, "refuse a file that ends in a torn tail instead of dropping the tail")
	cmd.Flags().StringVar(&opts.id, "id", "", "import the one FILE under the new session `ID`")
	addTranscriptFlags(cmd, &opts.tr)
	return cmd
}

// runImport imports each file of args into the store.
func runImport(ctx context.Context, opts importOptions, args []string, stdout, stderr io.Writer) (err error) {
	stdout = opts.g.human(stdout)
	if opts.tr == (transcriptFlags{}) && anyDir(args) {
		// A directory stands for the DSH files under it, walked as
		// --format walks it.
		opts.tr.format = string(transcript.DSH)
	}
	if opts.tr != (transcriptFlags{}) {
		return runImportTranscripts(ctx, opts, args, stdout, stderr)
	}
	stdin := 0
	for _, a := range args {
		if a == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return usagef("import: - (stdin) can be given once")
	}
	if opts.id != "" && (len(args) != 1 || stdin > 0) {
		return usagef("import: --id names the session of one FILE (not -, which cannot be read twice)")
	}
	st, err := opts.g.open(openCreate)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)

	failed := 0
	for i, name := range args {
		if ctx.Err() != nil {
			return interrupted("", len(args)-i, len(args))
		}
		id, n, err := importFile(ctx, st, opts, name, stderr)
		if err != nil && ctx.Err() != nil {
			return interrupted(name, len(args)-i-1, len(args))
		}
		if err != nil {
			if len(args) == 1 {
				return err
			}
			failed++
			printError(stderr, err)
			continue
		}
		if _, err := fmt.Fprintf(stdout, "%s %d\n", printable.ID(id), n); err != nil {
			return errors.Wrap(err, "import: write output")
		}
	}
	if failed > 0 {
		return errors.Newf("%d of %d files not imported", errors.Safe(failed), errors.Safe(len(args)))
	}
	return nil
}

// anyDir reports whether a path of args is a directory (or a link to one).
func anyDir(args []string) bool {
	for _, a := range args {
		if fi, err := os.Stat(a); a != "-" && err == nil && fi.IsDir() {
			return true
		}
	}
	return false
}

// interrupted is the error of an import stopped by an interrupt: the
// file it rolled back ("" for none) and how many were not attempted.
func interrupted(file string, left, total int) error {
	what := "no file was being imported"
	file = printable.Line(file)
	if file == "-" {
		file = "stdin"
	}
	if file != "" {
		what = fmt.Sprintf("%s was rolled back", file)
	}
	return errclass.Mark(errors.Newf("import interrupted: %s; %d of %d %s not attempted",
		errors.Safe(what), errors.Safe(left), errors.Safe(total), errors.Safe(plural(total, "file", "files"))), ErrInterrupted)
}

// importFile imports one file and returns its session id and event count.
func importFile(ctx context.Context, st store, opts importOptions, name string, stderr io.Writer) (id string, n int64, err error) {
	file := printable.Line(name)
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
	if opts.id != "" {
		if h, err = renamed(h, opts.id, name); err != nil {
			return "", 0, errors.Wrapf(err, "import %s", errors.Safe(file))
		}
	}
	src := &importSource{sc: sc, strict: opts.strict, file: file, last: -1}
	n, err = st.Import(ctx, h, src)
	if err != nil {
		return "", 0, src.explain(err, h.ID, opts.g.name())
	}
	if t := src.torn; t.FirstLine != 0 {
		fmt.Fprintf(stderr, "logtool: warning: %s: dropped a torn tail from line %d (%d %s, %d bytes): %v; imported the %d events before it\n",
			file, t.FirstLine, t.Lines, plural(t.Lines, "line", "lines"), t.Bytes, t.Cause, n)
	}
	return h.ID, n, nil
}

// renamed returns h for the copy of file's session under id: its events
// are counted first (a file that does not scan is refused by the import
// that follows, with its line).
func renamed(h codec.SessionHeader, id, name string) (codec.SessionHeader, error) {
	f, err := os.Open(name)
	if err != nil {
		return h, err
	}
	defer func() { _ = f.Close() }() // read-only: nothing to flush
	sc := codec.NewScanner(f, codec.Limits{})
	var n int64
	_, err = sc.Header()
	for err == nil {
		if _, err = sc.Next(); err == nil {
			n++
		}
	}
	return h.Renamed(id, n)
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
			errclass.Mark(errors.Newf("import %s: session %s exists already in %s",
				errors.Safe(s.file), errors.Safe(printable.ID(id)), errors.Safe(db)), eventlog.ErrConflict),
			"a session is imported once; 'logtool export' prints the stored copy, --id NEW imports the file under another id, and --db names another store")
	case s.scanFailed:
		return errors.Wrapf(err, "import %s", errors.Safe(s.file))
	case s.last >= 0 && (errors.Is(err, codec.ErrInvalid) || errors.Is(err, codec.ErrCorrupt)):
		// Line 1 is the header; event seq N is on line N+2 (seqs are
		// contiguous from 0, which the scanner enforces).
		// The store's error names the seq.
		return errors.Wrapf(err, "import %s: line %d", errors.Safe(s.file), errors.Safe(s.last+2))
	}
	return errors.Wrapf(err, "import %s: session %s", errors.Safe(s.file), errors.Safe(printable.ID(id)))
}

// plural returns one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
