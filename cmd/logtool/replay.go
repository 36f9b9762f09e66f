package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"io"
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/printable"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/spf13/cobra"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// replayOptions are the flags of logtool replay.
type replayOptions struct {
	g      *globalOptions
	step   string
	format string
	// new writes, per step, only the messages the previous step's
	// request did not have (text format).
	new bool
	// wire is set by --wire: a renderer's name, or wireFromHeader.
	wire string
	// recorded prints the bytes a gateway recorded (docs/gateway.md#what-is-recorded), per
	// exchange; response the answers instead of the requests; exchange
	// is --exchange N (0: all).
	recorded, response bool
	exchange           int
}

// wireFromHeader is --wire without a name (or --wire auto): each step's
// config wire. It is no renderer's name, and --help shows it as NAME's
// default.
const wireFromHeader = "auto"

func newReplayCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := replayOptions{g: g}
	cmd := &cobra.Command{
		Use:   "replay SESSION [--step T.S] [--format text|json] [--new] | replay SESSION --wire [NAME] [--step T.S] [--format json|raw|text]",
		Short: "Rebuild the requests of a session's steps",
		Long: `Rebuild, from the log alone, the request every step of a session sent
(docs/rules.md#requests): the header in force, the session prefix and the derived history.

--format text (the default) prints each step readably: its header first,
then one block per message. --format json prints one line per step:
{"turn":T,"step":S,"stepStartSeq":B,"digest":HEX|null,"request":{…}|null},
where request is the request's canonical JSON, exactly the bytes whose
SHA-256 is digest. A step with no header in force has a null request.

For a session imported from an agent's transcript (import --format), the
requests are reconstructed from what the transcript records: a note on
stderr says so, what it does not record, and which session the gateway
recorded of the same agent session, if any (its --wire --recorded bytes are
what the model received).

--new (text format) shows, for each step, only the messages that are new
since the previous step: those after the longest run of leading messages
the two requests share. With --step, the previous step is still the one
before it in the log.

--wire [NAME] prints instead the bytes a provider received for each step
(docs/wire.md), rendered by the wire renderer NAME (openai-chat or
anthropic-messages; auto, the default: the one the step's config names in
"wire").
--format json (the default with --wire) prints one line per step:
{"turn":T,"step":S,"stepStartSeq":B,"body":STRING|null}, body the exact
body as a JSON string; raw prints the body bytes of one step alone (needs
--step); text prints method, path and headers (the key left out), then the
body.

--wire --recorded prints, from a session the recording gateway wrote
(logtool gateway, docs/gateway.md), the bytes recorded for each exchange, in
the same forms; exchanges are numbered from 1 in log order (--exchange N
selects one, --step T.S the one whose request began step T.S; raw needs
one of them). json lines are
{"exchange":N,"seq":S,"body":STRING|null}; text shows method, path and
the recorded headers, then the body, with control characters escaped.
--response prints the answers instead: seq is the wire/response's, body
null when none was recorded; text shows status, headers and cut. A
request the gateway recorded with its redactor (--redact) is printed as
recorded, "[REDACTED]" where a span was replaced, which is not the bytes
the upstream was sent: stderr says so for each such exchange.`,
		Args: replayArgs,
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("step") && opts.step == "" {
				return usagef("replay: --step needs a step T.S (turn.step, from 1.1)")
			}
			if opts.wire != "" && len(args) == 2 {
				opts.wire = args[1] // --wire NAME, the name given apart
			}
			if opts.recorded && opts.wire == "" {
				opts.wire = wireFromHeader
			}
			if opts.wire != "" && !cmd.Flags().Changed("format") {
				opts.format = "json"
			}
			return runReplay(cmd.Context(), opts, args[:1], stdout, stderr)
		}),
	}
	cmd.Flags().StringVar(&opts.step, "step", "", "only the step `T.S` (turn.step)")
	cmd.Flags().BoolVar(&opts.new, "new", false, "text format: show only the messages new since the previous step")
	cmd.Flags().StringVar(&opts.format, "format", "text", "output `FORMAT`: text or json; with --wire: json, raw or text")
	cmd.Flags().StringVar(&opts.wire, "wire", "", "print the provider body rendered by wire `NAME` (auto: each step's config wire)")
	cmd.Flags().Lookup("wire").NoOptDefVal = wireFromHeader
	cmd.Flags().BoolVar(&opts.recorded, "recorded", false, "with --wire: the bytes the recording gateway recorded, per exchange")
	cmd.Flags().BoolVar(&opts.response, "response", false, "with --recorded: the answers instead of the requests")
	cmd.Flags().IntVar(&opts.exchange, "exchange", 0, "with --recorded: only exchange `N` (from 1)")
	return cmd
}

// replayArgs takes SESSION, and with a bare --wire an optional NAME after
// it (--wire NAME, which the flag parser leaves as an argument).
func replayArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 2 {
		if v, _ := cmd.Flags().GetString("wire"); v == wireFromHeader {
			return nil
		}
	}
	return exactArgs("SESSION")(cmd, args)
}

// stepName is a step's T.S name.
type stepName struct{ turn, step int64 }

func (s stepName) String() string { return step(s.turn, s.step) }

// parseStep parses T.S.
func parseStep(s string) (stepName, error) {
	t, st, ok := strings.Cut(s, ".")
	turn, err1 := strconv.ParseInt(t, 10, 64)
	stp, err2 := strconv.ParseInt(st, 10, 64)
	if !ok || err1 != nil || err2 != nil || turn < 1 || stp < 1 {
		return stepName{}, usagef("a step is named T.S (turn.step, from 1.1), not %q", errors.Safe(s))
	}
	return stepName{turn, stp}, nil
}

func runReplay(ctx context.Context, opts replayOptions, args []string, stdout, stderr io.Writer) error {
	if opts.recorded {
		return runReplayRecorded(ctx, opts, args[0], stdout, stderr)
	}
	if opts.response || opts.exchange != 0 {
		return usagef("replay: --response and --exchange go with --wire --recorded")
	}
	if opts.wire != "" {
		return runReplayWire(ctx, opts, args, stdout)
	}
	if opts.format != "text" && opts.format != "json" {
		return usagef("--format is text or json, not %q", errors.Safe(opts.format))
	}
	if opts.new && opts.format != "text" {
		return usagef("replay: --new is for --format text; the json lines hold whole requests")
	}
	var prev *prevStep
	var skipped func(rebuild.Step) error
	if opts.new {
		// --step with --new: remember the step before it.
		prev = &prevStep{}
		skipped = func(s rebuild.Step) error {
			if s.Null {
				*prev = prevStep{}
				return nil
			}
			msgs, err := stepMessages(s)
			*prev = prevStep{name: step(s.Turn, s.Step), msgs: msgs}
			return err
		}
	}
	if opts.format == "text" {
		stdout = opts.g.human(stdout)
	}
	return replaySteps(ctx, opts, args[0], stdout, skipped, func(w *bufio.Writer, s rebuild.Step) error {
		if opts.format == "json" {
			return writeStepJSON(w, s)
		}
		return writeStepText(w, s, prev)
	})
}

// replaySteps is what every replay form does: it opens the store and
// rebuilds session id, hands fn each step (or only --step's) with the
// buffered stdout, and fails with a not-found error when --step names a
// step the session lacks. With --step, skipped (if not nil) sees the
// steps passed over.
func replaySteps(ctx context.Context, opts replayOptions, id string, stdout io.Writer,
	skipped func(rebuild.Step) error, fn func(*bufio.Writer, rebuild.Step) error) (err error) {
	var only *stepName
	if opts.step != "" {
		s, err := parseStep(opts.step)
		if err != nil {
			return err
		}
		only = &s
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
	what := "the requests of %s are"
	if opts.wire != "" {
		what = "the wire bodies of %s are rendered from requests"
	}
	noteImported(ctx, opts.g, st, head, what)
	w := bufio.NewWriterSize(stdout, 64<<10)
	found := false
	err = eachStep(ctx, st, opts.g.name(), id, true, func(s rebuild.Step) error {
		if only != nil && (s.Turn != only.turn || s.Step != only.step) {
			if skipped != nil {
				return skipped(s)
			}
			return nil
		}
		found = true
		return fn(w, s)
	})
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err == nil && only != nil && !found {
		err = errclass.Mark(errors.Newf("session %s has no step %s", errors.Safe(printable.ID(id)), errors.Safe(only.String())), eventlog.ErrNotFound)
	}
	return err
}

// eachStep rebuilds every step of a session from the store, in log order,
// with memory bounded by the session's surface.
func eachStep(ctx context.Context, st store, db, id string, requests bool, fn func(rebuild.Step) error) error {
	head, err := sessionHead(ctx, st, db, id)
	if err != nil {
		return err
	}
	return audit.Steps(ctx, st, head, rebuild.BuilderOptions{Requests: requests}, nil, fn)
}

// writeStepJSON writes a step as replay's json line.
func writeStepJSON(w *bufio.Writer, s rebuild.Step) error {
	b := []byte(`{"turn":`)
	b = codec.AppendJSONInt(b, s.Turn)
	b = append(b, `,"step":`...)
	b = codec.AppendJSONInt(b, s.Step)
	b = append(b, `,"stepStartSeq":`...)
	b = codec.AppendJSONInt(b, s.Start)
	if s.Null {
		b = append(b, `,"digest":null,"request":null}`...)
	} else {
		b = append(b, `,"digest":"`...)
		b = hex.AppendEncode(b, s.Digest[:])
		b = append(b, `","request":`...)
		b = append(b, s.Request...)
		b = append(b, '}')
	}
	b = append(b, '\n')
	_, err := w.Write(b)
	return err
}
