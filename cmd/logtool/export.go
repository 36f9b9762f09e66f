package main

import (
	"bufio"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"

	"github.com/sessionlog/sessionlog/eventlog"
)

// exportOptions are the flags of logtool export.
type exportOptions struct {
	g *globalOptions
	// output is the file to write; "" or "-" means stdout.
	output string
	// format is "" (canonical JSONL) or "source" (an imported
	// transcript's original file, SPEC §13).
	format string
}

func newExportCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := exportOptions{g: g}
	cmd := &cobra.Command{
		Use:   "export SESSION [-o FILE]",
		Short: "Write a session as canonical JSONL",
		Long: `Write a session in the interchange format (DSH session JSONL, SPEC §2): the
header line, then one line per event, each ending in a newline. Importing a
canonical file and exporting it yields the same bytes.

With -o FILE the output is written to a temporary file next to FILE and
renamed over it once complete, so FILE is never left half-written.`,
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
			return errors.Wrapf(err, "export %s: header", errors.Safe(id))
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return errors.Wrap(err, "export: write")
		}
		it, err := st.Scan(ctx, id, 0)
		if err != nil {
			return errors.Wrapf(err, "export %s", errors.Safe(id))
		}
		defer func() { err = errors.CombineErrors(err, it.Close()) }()
		for {
			ev, err := it.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return errors.Wrapf(err, "export %s", errors.Safe(id))
			}
			line, err = ev.AppendJSON(line[:0])
			if err != nil {
				return errors.Wrapf(err, "export %s: seq %d", errors.Safe(id), errors.Safe(ev.Seq))
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
	return writeFileAtomic(opts.output, write)
}

// writeFileAtomic writes path through a temporary file in the same
// directory, synced and renamed over path only when write succeeded. A
// file that exists keeps its permissions; a new one gets 0644.
func writeFileAtomic(path string, write func(io.Writer) error) (err error) {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return errors.Newf("export: %s is not a regular file", errors.Safe(path))
		}
		mode = fi.Mode().Perm()
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return errors.Wrapf(err, "export to %s", errors.Safe(path))
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()      // may be closed already; the error is secondary
			_ = os.Remove(tmp) // best effort: the temp file holds nothing of value
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		return errors.Wrapf(err, "export to %s", errors.Safe(path))
	}
	if err := f.Sync(); err != nil {
		return errors.Wrapf(err, "export to %s", errors.Safe(path))
	}
	if err := f.Close(); err != nil {
		return errors.Wrapf(err, "export to %s", errors.Safe(path))
	}
	if err := os.Rename(tmp, path); err != nil {
		return errors.Wrapf(err, "export to %s", errors.Safe(path))
	}
	// The rename is durable only once the directory is synced: a failure
	// here is a failure of the export.
	return errors.Wrapf(eventlog.SyncDir(dir), "export to %s", errors.Safe(path))
}
