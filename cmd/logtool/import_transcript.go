package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/printable"
	"github.com/sessionlog/sessionlog/transcript"
	"github.com/spf13/cobra"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// transcriptFlags are import's flags for other agents' transcripts
// (docs/transcripts.md).
type transcriptFlags struct {
	// format is "" (DSH JSONL, as without the flag), dsh, codex,
	// claude-code, gemini-cli or auto.
	format       string
	skipExisting bool
}

func addTranscriptFlags(cmd *cobra.Command, f *transcriptFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "", "the files' `FORMAT`: dsh, codex, claude-code, gemini-cli or auto (tells the four apart by their first lines; directories are imported recursively)")
	fl.BoolVar(&f.skipExisting, "skip-existing", false, "skip a transcript whose session id is in the store already instead of failing")
}

// transcriptJob is one file to import.
type transcriptJob struct {
	path string // "-" is stdin
	// parent is the session id of a Claude Code subagent file's parent.
	parent string
	// err, when set, is the job's failure, known before it runs (a
	// directory with nothing to import).
	err error
}

// runImportTranscripts imports files and directory trees under --format.
func runImportTranscripts(ctx context.Context, opts importOptions, args []string, stdout, stderr io.Writer) (err error) {
	f := opts.tr
	if f.format == "" {
		f.format = string(transcript.DSH)
		opts.tr = f
	}
	if f.format != "auto" {
		if _, ok := transcript.ParseFormat(f.format); !ok {
			return usagef("import: --format %q: want dsh, codex, claude-code, gemini-cli or auto", errors.Safe(f.format))
		}
	}
	jobs, err := transcriptJobs(args)
	if err != nil {
		return err
	}
	if opts.id != "" && len(jobs) != 1 {
		return usagef("import: --id names one session; %d files given", errors.Safe(len(jobs)))
	}
	// The store is opened at the first file to import: a directory with
	// nothing in it creates no store.
	var st store
	defer func() {
		if st != nil {
			closeStore(st, &err)
		}
	}()

	failed := 0
	progress := len(jobs) > 1
	for i, job := range jobs {
		if ctx.Err() != nil {
			return interrupted("", len(jobs)-i, len(jobs))
		}
		if progress {
			fmt.Fprintf(stderr, "[%d/%d] %s\n", i+1, len(jobs), printable.Line(job.path))
		}
		err := job.err
		if err == nil && st == nil {
			if st, err = opts.g.open(openCreate); err != nil {
				st = nil
				return err
			}
		}
		if err == nil {
			err = importTranscript(ctx, st, opts, job, stdout, stderr)
		}
		if err != nil && ctx.Err() != nil {
			return interrupted(job.path, len(jobs)-i-1, len(jobs))
		}
		if err != nil {
			if len(jobs) == 1 {
				return err
			}
			failed++
			printError(stderr, err)
		}
	}
	if failed > 0 {
		return errors.Newf("%d of %d files not imported", errors.Safe(failed), errors.Safe(len(jobs)))
	}
	return nil
}

// transcriptJobs expands args: a directory stands for every *.jsonl file
// under it (walkTranscripts), in path order, Claude Code subagent files
// (…/SESSION/subagents/agent-*.jsonl) after the others so that their
// parents are in the store first. A directory with no *.jsonl file under
// it is a job of its own that fails with a not-found error.
func transcriptJobs(args []string) ([]transcriptJob, error) {
	var jobs, subs []transcriptJob
	add := func(path string) {
		if parent, ok := subagentParent(path); ok {
			subs = append(subs, transcriptJob{path: path, parent: parent})
			return
		}
		jobs = append(jobs, transcriptJob{path: path})
	}
	stdin := 0
	for _, a := range args {
		if a == "-" {
			if stdin++; stdin > 1 {
				return nil, usagef("import: - (stdin) can be given once")
			}
			jobs = append(jobs, transcriptJob{path: a})
			continue
		}
		fi, err := os.Stat(a) // follows a symlink: ~/.claude often is one
		if err != nil || !fi.IsDir() {
			// A missing file is reported as that file's failure, so the
			// others go on (as with DSH files): `import --format auto
			// ~/.codex/sessions ~/.claude/projects` works for a user of
			// one tool.
			add(a)
			continue
		}
		found, err := walkTranscripts(a, fi)
		if err != nil {
			return nil, errors.Wrap(err, "import")
		}
		if len(found) == 0 {
			jobs = append(jobs, transcriptJob{path: a, err: errors.WithHint(
				errclass.Mark(errors.Newf("import %s: no *.jsonl file in the directory or under it", errors.Safe(printable.Line(a))), eventlog.ErrNotFound),
				"a directory stands for the *.jsonl files under it (symbolic links followed); name the files, or the directory that holds them")})
			continue
		}
		for _, p := range found {
			add(p)
		}
	}
	return append(jobs, subs...), nil
}

// walkTranscripts returns the *.jsonl files under the directory root (fi
// its FileInfo), in path order. Symbolic links to directories and to files
// are followed; a directory reached a second time (a link cycle, or two
// links to one directory) is walked once, and a file reached twice is
// listed once. A link that leads nowhere is skipped unless its name ends
// in .jsonl: then it is listed, and its import fails with its own error.
func walkTranscripts(root string, fi os.FileInfo) ([]string, error) {
	var found []string
	var seen sameFiles
	seen.add(fi)
	var walk func(dir string) error
	walk = func(dir string) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			jsonl := strings.HasSuffix(e.Name(), ".jsonl")
			t := e.Type()
			if t&fs.ModeSymlink == 0 && !t.IsDir() && !t.IsRegular() {
				continue // a device, socket or pipe
			}
			if t&fs.ModeSymlink == 0 && t.IsRegular() {
				if !jsonl {
					continue
				}
				// A file and a link to it are one file.
				if fi, err := e.Info(); err != nil || seen.add(fi) {
					found = append(found, p)
				}
				continue
			}
			fi, err := os.Stat(p) // follows a link
			switch {
			case err != nil && t&fs.ModeSymlink != 0:
				if jsonl {
					found = append(found, p) // fails on import, naming it
				}
				continue
			case err != nil:
				return err
			case fi.IsDir():
				if seen.add(fi) {
					if err := walk(p); err != nil {
						return err
					}
				}
			case fi.Mode().IsRegular() && jsonl && seen.add(fi):
				found = append(found, p)
			}
		}
		return nil
	}
	if err := walk(root); err != nil {
		return nil, err
	}
	sort.Strings(found)
	return found, nil
}

// sameFiles is a set of files told apart by os.SameFile, bucketed by
// modification time (one file has one).
type sameFiles map[int64][]os.FileInfo

// add adds fi and reports whether it was not in the set yet.
func (s *sameFiles) add(fi os.FileInfo) bool {
	if *s == nil {
		*s = sameFiles{}
	}
	k := fi.ModTime().UnixNano()
	for _, o := range (*s)[k] {
		if os.SameFile(o, fi) {
			return false
		}
	}
	(*s)[k] = append((*s)[k], fi)
	return true
}

// subagentParent returns the parent session of a Claude Code subagent
// file: the directory SESSION of SESSION/subagents/agent-*.jsonl.
func subagentParent(path string) (string, bool) {
	dir := filepath.Dir(path)
	if filepath.Base(dir) != "subagents" || !strings.HasPrefix(filepath.Base(path), "agent-") {
		return "", false
	}
	parent := filepath.Base(filepath.Dir(dir))
	return parent, parent != "." && parent != string(filepath.Separator)
}

// importTranscript imports one file: DSH through the DSH importer, a
// transcript through package transcript, with a report on stderr.
func importTranscript(ctx context.Context, st store, opts importOptions, job transcriptJob, stdout, stderr io.Writer) error {
	name := printable.Line(job.path)
	if job.path == "-" {
		name = "stdin"
	}
	format := transcript.Format(opts.tr.format)
	var data []byte
	if format != transcript.DSH {
		// A DSH file is streamed; a transcript is read whole (Open reads
		// it twice), and so is a file whose format is to be detected.
		var err error
		if data, err = readInput(opts, job.path); err != nil {
			return err
		}
	}
	if opts.tr.format == "auto" {
		var err error
		if format, err = transcript.Detect(data); err != nil {
			return errors.WithHint(errors.Wrapf(err, "import %s", errors.Safe(name)),
				"--format names the format when the first lines cannot tell")
		}
	}
	if format == transcript.DSH {
		if job.path == "-" && data != nil {
			opts.g.env.stdin = bytes.NewReader(data) // read already
		}
		id, n, err := importFile(ctx, st, opts, job.path, stderr)
		if err != nil && opts.tr.skipExisting && errors.Is(err, eventlog.ErrConflict) {
			fmt.Fprintf(stderr, "%s: the session exists already: skipped\n", name)
			return nil
		}
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s %d\n", printable.ID(id), n)
		return errors.Wrap(err, "import: write output")
	}
	s, err := transcript.Open(bytes.NewReader(data), int64(len(data)), format,
		transcript.Options{ID: opts.id, Parent: job.parent, Name: name})
	if err != nil {
		return errors.Wrapf(err, "import")
	}
	id := s.Header.ID
	if format == transcript.GeminiCLI && opts.id == "" && job.parent == "" {
		// Gemini CLI starts a new file when a resumed run begins in
		// another minute than the file's: a later file of a session in
		// the store already (whose first line is another) is imported as
		// its own session, named after the file, its parent the
		// session's first.
		if _, err := st.Head(ctx, id); err == nil && !sameFirstLine(ctx, st, id, data) {
			if s, err = transcript.Open(bytes.NewReader(data), int64(len(data)), format,
				transcript.Options{Parent: id, Name: name}); err != nil {
				return errors.Wrapf(err, "import")
			}
			job.parent, id = s.Header.ParentSession, s.Header.ID
		}
	}
	if _, err := st.Head(ctx, id); err == nil {
		if opts.tr.skipExisting {
			fmt.Fprintf(stderr, "%s: session %s exists already: skipped\n", name, printable.ID(id))
			return nil
		}
		return errors.WithHint(
			errclass.Mark(errors.Newf("import %s: session %s exists already in %s",
				errors.Safe(name), errors.Safe(printable.ID(id)), errors.Safe(opts.g.name())), eventlog.ErrConflict),
			"--skip-existing skips it, --id stores it under another id")
	} else if !errors.Is(err, eventlog.ErrNotFound) {
		return errors.Wrapf(err, "import %s", errors.Safe(name))
	}
	n, err := st.Import(ctx, s.Header, s)
	if err != nil {
		if errors.Is(err, eventlog.ErrConflict) && opts.tr.skipExisting {
			fmt.Fprintf(stderr, "%s: session %s exists already: skipped\n", name, printable.ID(id))
			return nil
		}
		return errors.Wrapf(err, "import %s", errors.Safe(name))
	}
	if _, err := fmt.Fprintf(stdout, "%s %d\n", printable.ID(id), n); err != nil {
		return errors.Wrap(err, "import: write output")
	}
	reportTranscript(stderr, name, format, job.parent, s.Stats())
	return nil
}

// sameFirstLine reports whether session id's first source line is the
// first line of data: the session was imported from this file (or an
// earlier state of it).
func sameFirstLine(ctx context.Context, st store, id string, data []byte) bool {
	it, err := st.Scan(ctx, id, 0)
	if err != nil {
		return false
	}
	defer it.Close()
	ev, err := it.Next()
	if err != nil {
		return false
	}
	l, ok, err := transcript.SourceLine(&ev)
	if !ok || err != nil {
		return false
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	return bytes.Equal(l.Text, first)
}

// readInput reads a whole file (or stdin for "-"): Open reads it twice.
func readInput(opts importOptions, path string) ([]byte, error) {
	if path == "-" {
		data, err := io.ReadAll(opts.g.env.stdin)
		return data, errors.Wrap(err, "import stdin")
	}
	data, err := os.ReadFile(path)
	return data, errors.Wrap(err, "import")
}

// reportTranscript writes what an import made of a file: lines mapped,
// kept unmapped and unknown, by kind, and the mapped counts.
func reportTranscript(w io.Writer, name string, f transcript.Format, parent string, s transcript.Stats) {
	fmt.Fprintf(w, "%s: %s, %d %s: %d mapped, %d kept unmapped, %d unknown; %d turns, %d steps, %d prompts, %d tool calls, %d tool results, %d compactions",
		name, f, s.Lines, plural(s.Lines, "line", "lines"), s.Mapped, s.Kept, s.Unknown,
		s.Turns, s.Steps, s.Prompts, s.ToolCalls, s.ToolResults, s.Compactions)
	if s.Requests > 0 {
		fmt.Fprintf(w, "; %d %s recorded by the source: %d rebuilt from the file, %d with the digest it recorded",
			s.Requests, plural(s.Requests, "request", "requests"), s.Rebuilt, s.Verified)
	}
	switch {
	case parent != "" && f == transcript.GeminiCLI:
		fmt.Fprintf(w, "; a later file of session %s", printable.ID(parent))
	case parent != "":
		fmt.Fprintf(w, "; subagent of %s", printable.ID(parent))
	}
	fmt.Fprintln(w)
	kinds := make([]string, 0, len(s.Kinds))
	for k, c := range s.Kinds {
		if c.Kept+c.Unknown > 0 {
			kinds = append(kinds, k)
		}
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		c := s.Kinds[k]
		switch {
		case c.Unknown > 0:
			fmt.Fprintf(w, "  unknown  %-40s %d\n", printable.ID(k), c.Unknown)
		default:
			fmt.Fprintf(w, "  kept     %-40s %d\n", printable.ID(k), c.Kept)
		}
	}
	if s.Torn {
		fmt.Fprintf(w, "logtool: warning: %s: the last line (%d) is torn (no newline, not a whole JSON object): kept as a source line, not mapped\n",
			name, s.Lines)
	}
}

// writeSource writes the original file of an imported transcript from its
// source/line events (export --format source).
func writeSource(ctx context.Context, st store, id string, w io.Writer) (err error) {
	it, err := st.Scan(ctx, id, 0)
	if err != nil {
		return errors.Wrapf(err, "export %s", errors.Safe(printable.ID(id)))
	}
	defer func() { err = errors.CombineErrors(err, it.Close()) }()
	if err := transcript.WriteSource(w, it); err != nil {
		return errors.WithHint(errors.Wrapf(err, "export %s --format source", errors.Safe(printable.ID(id))),
			"without --format, export writes the session as canonical JSONL")
	}
	return nil
}
