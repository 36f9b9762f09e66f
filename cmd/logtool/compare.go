package main

import (
	"context"
	"fmt"
	"io"

	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/printable"
	"github.com/spf13/cobra"
)

// compareOptions are the flags of logtool compare.
type compareOptions struct {
	g    *globalOptions
	json bool
}

func newCompareCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := compareOptions{g: g}
	cmd := &cobra.Command{
		Use:   "compare TRANSCRIPT-SESSION WIRE-SESSION [--json]",
		Short: "Compare what an agent's transcript says the model saw with what the gateway recorded",
		Long: `Compare a session imported from an agent's own transcript ('import
--format codex|claude-code|gemini-cli') with the session the recording gateway
recorded of the same conversation ('gateway': the one whose header names the
transcript's session id as its agent session): how faithful the transcript is.

Both sessions are rebuilt step by step, and their steps paired in order: the
request the transcript says the model saw against the request the model
received. In each pair the messages are compared in a normal form (role and
content; tool-call arguments as canonical JSON; provenance left out) and
aligned, and each that differs is printed by its index in the recorded
request: missing (the transcript lacks it), altered (with the JSON path and
byte offset of the first difference, and an excerpt of both versions), or
extra ([tN], by its index in the transcript's request: the model never saw
it). The system prompt and the tools are compared where the transcript
records them ("not recorded" where it does not and the gateway has them), and
the model always. Totals close the report. Differences are findings, not
errors: the exit code is 0.

--json prints the same as one JSON object on one line:
{"transcript":ID,"wire":ID,"format":F,"totals":{"stepsTranscript",
"stepsWire","paired","messages","identical","altered","missing","extra",
"systemCompared","systemAltered","toolsCompared","toolsAltered",
"modelsAltered"},"steps":[{"transcript":"T.S"|null,"wire":"T.S"|null,
"messages":[T,W],"system","systemOffset"?,"tools","toolsDetail"?,
"models":[T,W],"diffs":[{"kind":"missing"|"altered"|"extra","wire":I,
"transcript":I,"path"?,"offset"?,"wireMessage"?,"transcriptMessage"?}]}]}
(an index is -1 on the side that lacks the message; system, tools and models
are present when both sessions have the step).`,
		Args: exactArgs("TRANSCRIPT-SESSION", "WIRE-SESSION"),
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runCompare(cmd.Context(), opts, args, stdout, stderr)
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the comparison as one JSON object")
	return cmd
}

func runCompare(ctx context.Context, opts compareOptions, args []string, stdout, _ io.Writer) (err error) {
	st, err := opts.g.open(openRead)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)
	tr, err := sessionHead(ctx, st, opts.g.name(), args[0])
	if err != nil {
		return err
	}
	wire, err := sessionHead(ctx, st, opts.g.name(), args[1])
	if err != nil {
		return err
	}
	if p, err := audit.SessionProvenance(ctx, st, tr); err == nil && !p.Imported() {
		fmt.Fprintf(opts.g.stderr, "logtool: warning: %s was not imported from a transcript\n", printable.ID(tr.Header.ID))
	}
	if !audit.Recorded(wire.Header) {
		fmt.Fprintf(opts.g.stderr, "logtool: warning: %s is not a session the gateway recorded\n", printable.ID(wire.Header.ID))
	}
	c, err := audit.CompareTranscript(ctx, st, tr, wire)
	if err != nil {
		return err
	}
	var out []byte
	if opts.json {
		out = append(c.AppendJSON(nil), '\n')
	} else {
		out = c.AppendText(nil)
		stdout = opts.g.human(stdout)
	}
	_, err = stdout.Write(out)
	return err
}

// noteImported says on stderr, for a session imported from an agent's
// transcript, that what is shown of it (what: "the requests of %s are",
// %s its id) is reconstructed from the transcript, what the transcript
// does not record, and where the gateway recorded the same session.
// Nothing for a session of another origin, or when that cannot be read.
func noteImported(ctx context.Context, g *globalOptions, st store, head eventlog.Head, what string) {
	p, err := audit.SessionProvenance(ctx, st, head)
	if err != nil || !p.Imported() {
		return
	}
	fmt.Fprintf(g.stderr, "logtool: note: "+what+" %s\n", printable.ID(head.Header.ID), p.Note())
}
