package main

import (
	"bufio"
	"context"
	"io"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/internal/printable"
	"github.com/spf13/cobra"

	"github.com/sessionlog/sessionlog/internal/atomicfile"
)

// exportOptions are the flags of logtool export.
type exportOptions struct {
	g *globalOptions
	// output is the file to write; "" or "-" means stdout.
	output string
	// format is "" (canonical JSONL) or "source" (an imported
	// transcript's original file, docs/transcripts.md).
	format string
}

func newExportCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := exportOptions{g: g}
	cmd := &cobra.Command{
		Use:   "export SESSION [-o FILE]",
		Short: "Write a session as canonical JSONL",
		Long: `Write a session in the interchange format (DSH session JSONL, docs/format.md#interchange): the
header line, then one line per event, each ending in a newline. Importing a
canonical file and exporting it yields the same bytes.

With -o FILE the output is written to a temporary file next to FILE and
renamed over it once complete, so FILE is never left half-written. A new
FILE is readable by you only (0600), as the store is; a FILE replaced keeps
its permissions.`,
		Args: exactArgs("SESSION"),
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runExport(cmd.Context(), opts, args, stdout, stderr)
		}),
	}
	cmd.Flags().StringVarP(&opts.output, "output", "o", "", "write to `FILE` (atomically) instead of stdout")
	cmd.Flags().StringVar(&opts.format, "format", "", "`source`: write an imported transcript's original file back, byte for byte")
	return cmd
}

// runExport writes session args[0] as JSONL.
func runExport(ctx context.Context, opts exportOptions, args []string, stdout, _ io.Writer) (err error) {
	id := args[0]
	st, err := opts.g.open(openRead)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)
	head, err := sessionHead(ctx, st, opts.g.name(), id)
	if err != nil {
		return err
	}
	if opts.format != "" && opts.format != "source" {
		return usagef("export: --format %q: the only format is source", errors.Safe(opts.format))
	}
	write := func(w io.Writer) (err error) {
		if opts.format == "source" {
			return writeSource(ctx, st, id, w)
		}
		bw := bufio.NewWriterSize(w, 64<<10)
		line, err := head.Header.AppendJSON(nil)
		if err != nil {
			return errors.Wrapf(err, "export %s: header", errors.Safe(printable.ID(id)))
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return errors.Wrap(err, "export: write")
		}
		it, err := st.Scan(ctx, id, 0)
		if err != nil {
			return errors.Wrapf(err, "export %s", errors.Safe(printable.ID(id)))
		}
		defer func() { err = errors.CombineErrors(err, it.Close()) }()
		for {
			ev, err := it.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return errors.Wrapf(err, "export %s", errors.Safe(printable.ID(id)))
			}
			line, err = ev.AppendJSON(line[:0])
			if err != nil {
				return errors.Wrapf(err, "export %s: seq %d", errors.Safe(printable.ID(id)), errors.Safe(ev.Seq))
			}
			line = append(line, '\n')
			if _, err := bw.Write(line); err != nil {
				return errors.Wrap(err, "export: write")
			}
		}
		return errors.Wrap(bw.Flush(), "export: write")
	}
	if opts.output == "" || opts.output == "-" {
		return write(stdout)
	}
	return atomicfile.Write(opts.output, "export", atomicfile.ContentPerm, write)
}
