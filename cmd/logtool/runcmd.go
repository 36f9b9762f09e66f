package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/internal/printable"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/provider"
	"github.com/sessionlog/sessionlog/scenario"
	"github.com/sessionlog/sessionlog/wire"
	"github.com/spf13/cobra"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// runOptions are the flags of logtool run.
type runOptions struct {
	g       *globalOptions
	session string
	// A live model instead of the scripted one (docs/cli.md, docs/wire.md#providers).
	provider, baseURL, keyEnv string
	// The provider's bounds (provider.Options; 0 is its default).
	connect, firstByte, idle time.Duration
	maxResponse              int64
}

func newRunCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := runOptions{g: g}
	cmd := &cobra.Command{
		Use:   "run SCENARIO.json [--session ID] [--provider NAME --base-url URL [--api-key-env VAR]]",
		Short: "Drive the real loop offline against a scripted model",
		Long: `Run a scenario file (docs/cli.md#scenario-files: prompts, system prompt and tool changes,
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
block.

--provider NAME runs against a real model instead (docs/wire.md#providers): NAME is the
wire renderer (openai-chat or anthropic-messages), --base-url the API's base
(e.g. https://api.openai.com/v1, https://api.anthropic.com), and the API key
is read from the environment variable --api-key-env names (default
OPENAI_API_KEY or ANTHROPIC_API_KEY; when that default is unset, no key is
sent, for local servers). The scenario's replies are ignored; its tool
results answer the model's calls by call id or tool name. Every config the
scenario gives gets "wire":NAME unless it names a wire itself, so the log
says which renderer each request went out with, and logtool replay --wire
prints the exact bytes the server received.

The base URL is http or https with a host and an optional path; user info
(user:password@), a query and a fragment are refused. Redirects are never
followed (the key would go with them): a 3xx ends the turn with HTTP_3xx.
Bounds, past which the turn ends with TIMEOUT or RESPONSE_TOO_LARGE after
the chunks that did arrive: --connect-timeout (default 30s), the wait for
the response headers --first-byte-timeout (10m), the wait for each next
chunk --idle-timeout (10m; a reasoning model may think that long), and the
answer's size --max-response-bytes (256 MiB); 0 takes the default, a
negative value removes the bound.`,
		Args: exactArgs("SCENARIO.json"),
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runRun(cmd.Context(), opts, args, stdout, stderr)
		}),
	}
	cmd.Flags().StringVar(&opts.session, "session", "", "run in session `ID` (default: the scenario's, else a new id)")
	cmd.Flags().StringVar(&opts.provider, "provider", "", "answer with a real model through wire renderer `NAME` (openai-chat, anthropic-messages)")
	cmd.Flags().StringVar(&opts.baseURL, "base-url", "", "the provider API's base `URL` (with --provider)")
	cmd.Flags().StringVar(&opts.keyEnv, "api-key-env", "", "the environment variable `VAR` holding the API key (with --provider)")
	cmd.Flags().DurationVar(&opts.connect, "connect-timeout", 0, "bound the connection and TLS handshake to `D` (with --provider; default 30s)")
	cmd.Flags().DurationVar(&opts.firstByte, "first-byte-timeout", 0, "bound the wait for the response headers to `D` (with --provider; default 10m)")
	cmd.Flags().DurationVar(&opts.idle, "idle-timeout", 0, "bound the wait for each next chunk of the answer to `D` (with --provider; default 10m)")
	cmd.Flags().Int64Var(&opts.maxResponse, "max-response-bytes", 0, "bound an answer's body to `N` bytes (with --provider; default 256 MiB)")
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
	live, err := liveProvider(opts, sc, stderr)
	if err != nil {
		return err
	}
	st, err := opts.g.open(openCreate)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)
	rep, err := runScenario(ctx, opts.g, st, sc, opts.session, live)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(opts.g.human(stdout))
	for _, s := range rep.Steps {
		fmt.Fprintf(w, "%s %d %s\n", step(s.Turn, s.Step), s.Bytes, hex.EncodeToString(s.Digest[:]))
	}
	fmt.Fprintln(w, printable.ID(rep.Session))
	reportOutcomes(stderr, rep)
	if err := w.Flush(); err != nil {
		return err
	}
	// A scripted error reply is the scenario's intent; a live model's
	// error is a failure a script must see.
	failed := 0
	for _, o := range rep.Outcomes {
		if live == nil {
			break
		}
		if o.Reason == "error" {
			failed++
		}
	}
	if failed > 0 {
		return errors.WithHintf(errclass.Mark(errors.Newf("run: %s ended with an error", errors.Safe(count(failed, "turn", "turns"))), ErrTurnFailed),
			"the turns are logged as they ended: 'logtool show %s' shows them", errors.Safe(printable.ID(rep.Session)))
	}
	return nil
}

// runScenario runs sc with the CLI's clock and randomness.
func runScenario(ctx context.Context, g *globalOptions, st store, sc *scenario.Scenario, session string, live loop.Provider) (scenario.Report, error) {
	if session == "" && sc.Session == "" {
		id, err := newUUID(g.env.random)
		if err != nil {
			return scenario.Report{}, err
		}
		session = id
	}
	now := func() float64 { return float64(g.env.now().UnixMilli()) }
	return scenario.Run(ctx, st, sc, scenario.Options{Session: session, Now: now, Provider: live})
}

// liveProvider builds the provider of run --provider, or nil without it,
// and names the wire in every config of the scenario that names none.
func liveProvider(opts runOptions, sc *scenario.Scenario, stderr io.Writer) (loop.Provider, error) {
	if opts.provider == "" {
		if opts.baseURL != "" || opts.keyEnv != "" || opts.connect != 0 || opts.firstByte != 0 || opts.idle != 0 || opts.maxResponse != 0 {
			return nil, usagef("--base-url, --api-key-env and the bounds go with --provider")
		}
		return nil, nil
	}
	if opts.baseURL == "" {
		return nil, usagef("--provider needs --base-url")
	}
	keyEnv, explicit := opts.keyEnv, opts.keyEnv != ""
	if !explicit {
		keyEnv = map[string]string{wire.OpenAIChat: "OPENAI_API_KEY", wire.AnthropicMessages: "ANTHROPIC_API_KEY"}[opts.provider]
		if keyEnv != "" && opts.g.env.getenv(keyEnv) == "" {
			fmt.Fprintf(stderr, "no API key: $%s is not set; sending requests without one\n", keyEnv)
			keyEnv = ""
		}
	}
	p, err := provider.New(provider.Options{Wire: opts.provider, BaseURL: opts.baseURL, APIKeyEnv: keyEnv, Getenv: opts.g.env.getenv,
		ConnectTimeout: opts.connect, FirstByteTimeout: opts.firstByte, IdleTimeout: opts.idle, MaxResponseBytes: opts.maxResponse})
	if err != nil {
		if errors.Is(err, wire.ErrUnknown) || errors.Is(err, provider.ErrBaseURL) {
			return nil, errclass.Mark(err, ErrUsage)
		}
		return nil, err
	}
	name := p.Wire()
	setWire := func(c *header.Config) {
		if !c.HasWire {
			c.HasWire, c.Wire = true, name
		}
	}
	setWire(&sc.Config)
	for i := range sc.Turns {
		if sc.Turns[i].Config != nil {
			setWire(sc.Turns[i].Config)
		}
	}
	return p, nil
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
			// The code and message may be a server's: one line each.
			fmt.Fprintf(stderr, "scenario turn %d (log turn %d) ended with an error in step %s: %s (%s)\n",
				i+1, o.Turn, step(o.Turn, o.Step), printable.Line(o.Code), printable.Line(o.Message))
		} else {
			fmt.Fprintf(stderr, "scenario turn %d (log turn %d) ended %s\n", i+1, o.Turn, printable.Line(o.Reason))
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
