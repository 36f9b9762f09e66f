package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/internal/printable"
	"github.com/spf13/cobra"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// Exit codes (docs/cli.md).
const (
	exitOK      = 0 // the command did what was asked
	exitFailure = 1 // a failure, a finding or refused input
	exitUsage   = 2 // the command line could not be run
	// exitInterrupted is the status of a command stopped by SIGINT
	// (128+2, what a shell reports).
	exitInterrupted = 130
)

// defaultDB is the store used when neither --db nor $LOGTOOL_DB names one.
const defaultDB = "sessions.db"

// env is what commands take from their process besides arguments and
// output streams. run uses the real process; tests pass their own so that
// runs are hermetic and their output deterministic.
type env struct {
	stdin  io.Reader
	getenv func(string) string
	now    func() time.Time
	// random supplies the bytes of new session ids.
	random io.Reader
}

// processEnv is the env of the running process.
func processEnv() env {
	return env{stdin: os.Stdin, getenv: os.Getenv, now: time.Now, random: rand.Reader}
}

// globalOptions holds the flags every command takes and the env.
type globalOptions struct {
	env         env
	db          string
	lockTimeout time.Duration
	// keyFile and keyEnv name the key of a store that seals its content
	// (--key-file, --key-env; see keyProvider).
	keyFile, keyEnv string
	// started is set once a command's own code runs; an error returned
	// before that comes from parsing the command line.
	started bool
	// stderr takes warnings.
	stderr io.Writer
	// metaChecked is set once the store's meta pages were checked (see
	// warnMeta); noMetaWarning is set by verify, which reports a damaged
	// meta page as a finding instead.
	metaChecked, noMetaWarning bool
	// dbFlag is the flag that named db, for hints: "" means --db (copy
	// opens its stores as --from and --to).
	dbFlag string
	// rawStderr is the process's stderr itself, for verify's progress
	// line (its own escape sequence, and only when it is a terminal);
	// everything else on stderr goes through an escaping writer.
	rawStderr io.Writer
	// escapers are the escaping writers of the command's output, flushed
	// when it ends.
	escapers []*printable.Writer
}

// human returns w for human-readable output: every control character
// written to it but \n and \t is escaped (package printable), so that
// nothing from a log, a file or a server reaches a terminal raw. JSON and
// raw output is written to w itself.
func (g *globalOptions) human(w io.Writer) io.Writer {
	e := printable.NewWriter(w)
	g.escapers = append(g.escapers, e)
	return e
}

// run executes the command line args and returns the exit code. Errors are
// printed on stderr as "logtool: <message>" with hints on following lines.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runEnv(ctx, processEnv(), args, stdout, stderr)
}

// runEnv is run with an explicit env.
func runEnv(ctx context.Context, e env, args []string, stdout, stderr io.Writer) int {
	g := &globalOptions{env: e, rawStderr: stderr}
	stderr = g.human(stderr)
	g.stderr = stderr
	defer func() {
		for _, e := range g.escapers {
			_ = e.Flush() // a write error shows in the command's own writes
		}
	}()
	root := newRootCmd(g, stdout, stderr)
	if args == nil {
		args = []string{} // cobra reads os.Args when given nil
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	if !g.started && !errors.Is(err, ErrUsage) {
		err = errclass.Mark(err, ErrUsage)
	}
	if errors.Is(err, ErrUsage) {
		path := root.CommandPath()
		if cmd != nil {
			path = cmd.CommandPath()
		}
		err = errors.WithHintf(err, "run '%s --help' for usage", path)
	}
	printError(stderr, err)
	switch {
	case errors.Is(err, ErrUsage):
		return exitUsage
	case errors.Is(err, ErrInterrupted):
		return exitInterrupted
	}
	return exitFailure
}

// printError writes err as "logtool: <message>", then each of its hints
// on a line of its own.
func printError(w io.Writer, err error) {
	printWithHints(w, "logtool: ", err)
}

// printWithHints writes prefix and err's message on a line, then each of
// its hints on a line of its own.
//
// A message may hold what a server or a file said: its control characters
// are escaped, as everything on stderr is, and a line of it after the
// first is indented by a tab, so that no line it holds can pass for one of
// logtool's own ("logtool: …", "hint: …").
func printWithHints(w io.Writer, prefix string, err error) {
	msg := strings.TrimRight(err.Error(), " \n\t")
	fmt.Fprintf(w, "%s%s\n", prefix, indentLines(msg))
	hints := errors.FlattenHints(err)
	if hints == "" {
		return
	}
	for _, h := range strings.Split(hints, "\n--\n") {
		fmt.Fprintf(w, "hint: %s\n", indentLines(h))
	}
}

// indentLines returns s with its control characters escaped but for \n
// and \t, and a tab before each line after the first that is not empty
// and does not start with one.
func indentLines(s string) string {
	s = printable.Text(s)
	if !strings.Contains(s, "\n") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i := 1; i < len(lines); i++ {
		if lines[i] != "" && !strings.HasPrefix(lines[i], "\t") {
			lines[i] = "\t" + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// newRootCmd builds the command tree. Output goes to stdout and stderr;
// help is requested output and goes to stdout.
func newRootCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "logtool",
		Short: "Inspect and maintain a sessionlog store",
		Long: `logtool imports, exports and inspects the session logs in a sessionlog store
(a bbolt file, or a PostgreSQL database named by a postgres:// URL, holding
any number of sessions), runs the agent loop against a scripted or a real
model, and serves a read-only audit UI.

The store is --db, else $LOGTOOL_DB, else sessions.db in the current directory.
Commands that only read open it read-only and never create it.
Exit codes: 0 ok, 1 failure or refused input, 2 usage, 130 interrupted.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: g.action(func(*cobra.Command, []string) error {
			return usagef("no command given")
		}),
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetIn(g.env.stdin)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return errclass.Mark(err, ErrUsage)
	})
	pf := root.PersistentFlags()
	// No flag default: the help shows the one rule, and action applies it.
	pf.StringVar(&g.db, "db", "", "the store: a file `PATH` or a postgres:// URL (default: $LOGTOOL_DB, else "+defaultDB+")")
	pf.DurationVar(&g.lockTimeout, "lock-timeout", time.Second,
		"how long to wait for a store held by another process (0: do not wait)")
	addKeyFlags(g, root)

	root.AddCommand(
		newImportCmd(g, stdout, stderr),
		newExportCmd(g, stdout, stderr),
		newLsCmd(g, stdout, stderr),
		newShowCmd(g, stdout, stderr),
		newStatCmd(g, stdout, stderr),
		newForkCmd(g, stdout, stderr),
		newDemoCmd(g, stdout, stderr),
		newReplayCmd(g, stdout, stderr),
		newVerifyCmd(g, stdout, stderr),
		newDiffCmd(g, stdout, stderr),
		newCompareCmd(g, stdout, stderr),
		newCacheCmd(g, stdout, stderr),
		newServeCmd(g, stdout, stderr),
		newRunCmd(g, stdout, stderr),
		newSalvageCmd(g, stdout, stderr),
		newCopyCmd(g, stdout, stderr),
		newGatewayCmd(g, stdout, stderr),
		newKeysCmd(g, stdout, stderr),
	)
	return root
}

// action wraps a command's code so that runEnv can tell its errors from
// those cobra returns while parsing the command line.
func (g *globalOptions) action(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		g.started = true
		if g.lockTimeout < 0 {
			return usagef("--lock-timeout must not be negative")
		}
		switch f := cmd.Flag("db"); {
		case f != nil && f.Changed && g.db == "":
			return usagef("--db must name a file")
		case g.db == "":
			g.db = defaultDB
			if v := g.env.getenv("LOGTOOL_DB"); v != "" {
				g.db = v
			}
		}
		return fn(cmd, args)
	}
}

// exactArgs accepts exactly the named positional arguments.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < len(names):
			return usagef("%s: missing %s", errors.Safe(cmd.Name()), errors.Safe(strings.Join(names[len(args):], " ")))
		case len(args) > len(names):
			return usagef("%s: unexpected argument %q", errors.Safe(cmd.Name()), errors.Safe(args[len(names)]))
		}
		return nil
	}
}

// maxArgs accepts up to n positional arguments.
func maxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return usagef("%s: unexpected argument %q", errors.Safe(cmd.Name()), errors.Safe(args[n]))
		}
		return nil
	}
}

// minArgs needs at least one positional argument, described by what.
func minArgs(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usagef("%s: missing %s", errors.Safe(cmd.Name()), errors.Safe(what))
		}
		return nil
	}
}
