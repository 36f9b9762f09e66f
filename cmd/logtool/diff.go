package main

import (
	"context"
	"io"

	"github.com/sessionlog/sessionlog/audit"
	"github.com/spf13/cobra"
)

// diffOptions are the flags of logtool diff.
type diffOptions struct {
	g    *globalOptions
	json bool
}

func newDiffCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := diffOptions{g: g}
	cmd := &cobra.Command{
		Use:   "diff SESSION A B [--json]",
		Short: "Show what changed between the requests of two steps",
		Long: `Rebuild the requests of steps A and B (each named T.S) and show what
changed between them: the header fields that differ (config, system prompt,
tools, session prefix), the number of messages, and the first message where
they diverge, with its index, the JSON path and both versions.

--json prints the same as one JSON object on one line:
{"session":ID,"a":"T.S","b":"T.S","header":[{"field":F,"from":TEXT,
"to":TEXT,"detail":TEXT}],"messages":[A,B],"bytes":[A,B],"same":N,
"relation":"identical"|"appended"|"dropped"|"diverged","path":P,
"offset":N,"messageA":{…},"messageB":{…}}, where same counts the leading
messages both requests share, from/to/detail are the texts the plain
output prints ("" when a change has none), and path, offset, messageA and
messageB (the first diverging message of each, as JSON) are present only
when relation is "diverged".`,
		Args: exactArgs("SESSION", "A", "B"),
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runDiff(cmd.Context(), opts, args, stdout, stderr)
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the diff as one JSON object")
	return cmd
}

func runDiff(ctx context.Context, opts diffOptions, args []string, stdout, _ io.Writer) (err error) {
	id := args[0]
	a, err := parseStep(args[1])
	if err != nil {
		return err
	}
	b, err := parseStep(args[2])
	if err != nil {
		return err
	}
	st, err := opts.g.open(openRead)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)
	head, err := sessionHead(ctx, st, opts.g.name(), id)
	if err != nil {
		return err
	}
	noteImported(ctx, opts.g, st, head, "the requests of %s are")
	d, err := audit.DiffSteps(ctx, st, head, audit.Ref{Turn: a.turn, Step: a.step}, audit.Ref{Turn: b.turn, Step: b.step})
	if err != nil {
		return err
	}
	var out []byte
	if opts.json {
		out = append(d.AppendJSON(nil), '\n')
	} else {
		out = d.AppendText(nil)
		stdout = opts.g.human(stdout)
	}
	_, err = stdout.Write(out)
	return err
}
