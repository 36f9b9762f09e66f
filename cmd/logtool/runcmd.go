package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/scenario"
	"github.com/spf13/cobra"
)

// runOptions are the flags of logtool run.
type runOptions struct {
	g       *globalOptions
	session string
}

func newRunCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := runOptions{g: g}
	cmd := &cobra.Command{
		Use:   "run SCENARIO.json [--session ID]",
		Short: "Drive the real loop offline against a scripted model",
		Long: `Run a scenario file (SPEC §10.1: prompts, system prompt and tool changes,
injections, prefix contributors, the model's replies and the tools' results)
through the real agent loop, against a scripted model, into the store
(created if missing). On an existing session this is a new loop instance.

Prints one line per request the model received (step T.S of the log,
request bytes, request digest), then the session id. How turns ended, when
not completed, and replies the scenario did not use are reported on stderr,
naming the scenario turn (its place in the file, from 1) and the log turn it
became. The whole file is checked before anything runs: a JSON syntax
error, a value of the wrong type or an unknown key is refused with its line
and column, a malformed content block with its scenario turn, reply and
block.`,
		Args: exactArgs("SCENARIO.json"),
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runRun(cmd.Context(), opts, args, stdout, stderr)
		}),
	}
	cmd.Flags().StringVar(&opts.session, "session", "", "run in session `ID` (default: the scenario's, else a new id)")
	return cmd
}

func runRun(ctx context.Context, opts runOptions, args []string, stdout, stderr io.Writer) (err error) {
	var data []byte
	if args[0] == "-" {
		data, err = io.ReadAll(opts.g.env.stdin)
	} else {
		data, err = os.ReadFile(args[0])
	}
	if err != nil {
		return errors.Wrapf(err, "read scenario %s", errors.Safe(args[0]))
	}
	sc, err := scenario.Parse(data)
	if err != nil {
		// The scenario's errors say "scenario" and where in the file.
		name := args[0]
		if name == "-" {
			name = "stdin"
		}
		return errors.Wrapf(err, "%s", errors.Safe(name))
	}
	st, err := opts.g.open(openCreate)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)
	rep, err := runScenario(ctx, opts.g, st, sc, opts.session)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	for _, s := range rep.Steps {
		fmt.Fprintf(w, "%s %d %s\n", step(s.Turn, s.Step), s.Bytes, hex.EncodeToString(s.Digest[:]))
	}
	fmt.Fprintln(w, rep.Session)
	reportOutcomes(stderr, rep)
	return w.Flush()
}

// runScenario runs sc with the CLI's clock and randomness.
func runScenario(ctx context.Context, g *globalOptions, st store, sc *scenario.Scenario, session string) (scenario.Report, error) {
	if session == "" && sc.Session == "" {
		id, err := newUUID(g.env.random)
		if err != nil {
			return scenario.Report{}, err
		}
		session = id
	}
	now := func() float64 { return float64(g.env.now().UnixMilli()) }
	return scenario.Run(ctx, st, sc, scenario.Options{Session: session, Now: now})
}

// reportOutcomes writes, on stderr, the turns that did not complete and
// the replies left unused. A scenario turn is named by its place in the
// file and by the turn it became in the log, which differ on a session
// that had turns before.
func reportOutcomes(stderr io.Writer, rep scenario.Report) {
	for i, o := range rep.Outcomes {
		if o.Reason == "completed" {
			continue
		}
		if o.Reason == "error" {
			fmt.Fprintf(stderr, "scenario turn %d (log turn %d) ended with an error in step %s: %s (%s)\n",
				i+1, o.Turn, step(o.Turn, o.Step), o.Code, o.Message)
		} else {
			fmt.Fprintf(stderr, "scenario turn %d (log turn %d) ended %s\n", i+1, o.Turn, o.Reason)
		}
	}
	turns := make([]int, 0, len(rep.Unused))
	for i := range rep.Unused {
		turns = append(turns, i)
	}
	sort.Ints(turns)
	for _, i := range turns {
		fmt.Fprintf(stderr, "scenario turn %d: %s not used\n", i+1, count(rep.Unused[i], "reply", "replies"))
	}
}
