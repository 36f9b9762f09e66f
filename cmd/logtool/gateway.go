package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/gateway"
	"github.com/sessionlog/sessionlog/internal/loopback"
	"github.com/sessionlog/sessionlog/redact"
	"github.com/spf13/cobra"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// gatewayOptions are the flags of logtool gateway.
type gatewayOptions struct {
	g             *globalOptions
	listen        string
	upstreams     []string
	maxBody       int64
	recordAll     bool
	recordHeaders []string
	sessionHeader string
	failOpen      bool
	allowRemote   bool
	uiAddr        string
	quiet         bool
	grace         time.Duration
	dial, first   time.Duration
	idle          time.Duration
	redact        bool
	patterns      []string
}

func newGatewayCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := gatewayOptions{g: g}
	cmd := &cobra.Command{
		Use:   "gateway --listen 127.0.0.1:PORT --upstream URL [--upstream NAME=URL …]",
		Short: "Record every request an agent sends its model, byte for byte, before forwarding it",
		Long: `Run the recording gateway (docs/gateway.md): point an agent's base URL at it
(ANTHROPIC_BASE_URL=http://127.0.0.1:PORT, OPENAI_BASE_URL=http://127.0.0.1:PORT/v1)
and it forwards every request to the upstream and every answer back,
unchanged and streamed, after the store has acknowledged the request.
POST …/v1/messages, …/chat/completions and …/responses are recorded
(--record-all records every request); answers are recorded as they stream.

Each agent session (X-Claude-Code-Session-Id, session-id or thread-id
header, a prompt_cache_key body field, or --session-header NAME) is a
session of the store, gw-<digest of its id and the upstream's name>;
requests without an id share one per upstream and gateway run. Within
it, each conversation (lane: its first user message) is a session of
its own: a sub-agent's or a side call's names the first as its
parentSession. Requests and answers are mapped to the events of a
session (turns, steps, messages, tool calls), so show, stat, diff,
replay and serve read them like any session.
Keys are never recorded: request and answer headers come from an
allowlist (--record-header adds one), and authorization, x-api-key,
x-goog-api-key, cookies and proxy-authorization can never be added.
--redact keeps secrets out of the recorded requests as well (docs/forgetting.md#redaction):
provider API keys, bearer and basic credentials, AWS keys, JWTs and
private key blocks in a request's body (its string values), path and
recorded headers are recorded as "[REDACTED]", and the mapped events
with them; --redact-pattern REGEX (repeatable; a group named secret
redacts only that group) adds patterns of one's own. The upstream still
receives the request unchanged. The wire/request says how many spans
were replaced and keeps the digest of the body sent, which verify then
reports as not checkable (class redacted); what was replaced is stored
nowhere. Answers are recorded as they come: one that repeats a secret
holds it.

Upstreams: a bare URL is named by its host. With several, a first path
segment naming one selects it (/NAME/v1/messages); else a request with an
anthropic-version header or a path under /v1/messages goes to the one
named "anthropic", any other to the one named "openai", else to the first.

If the store cannot take a request, the client gets 503 and nothing is
forwarded, and every later recorded request too until a restart
(fail-closed); --fail-open forwards such requests unrecorded, warning on
each. A body over --max-body gets 413. The gateway binds loopback only
unless --allow-remote, and then answers 421 to a Host that is not a
loopback name. It prints its URL on stdout and one line per exchange on
stderr (session, exchange, step, api, sizes, status, the prompt cache's
break and cache reads; never content; --quiet drops them). --ui ADDR also
serves the audit UI of the store, as logtool serve does (its URL is the
second line on stdout): a bbolt store is held by the gateway while it
runs, so other commands cannot read it meanwhile. Ctrl-C or SIGTERM
stops it: answers still streaming get --grace to end, then are cut and
recorded as cut "shutdown".`,
		Args: maxArgs(0),
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runGateway(cmd.Context(), opts, stdout, stderr)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&opts.listen, "listen", "127.0.0.1:8380", "listen on `HOST:PORT`")
	f.StringArrayVar(&opts.upstreams, "upstream", nil, "forward to `[NAME=]URL` (repeatable)")
	f.Int64Var(&opts.maxBody, "max-body", gateway.DefaultMaxBody, "refuse (413) a recorded request body over `BYTES`")
	f.BoolVar(&opts.recordAll, "record-all", false, "record every request, not only the three model APIs")
	f.StringArrayVar(&opts.recordHeaders, "record-header", nil, "also record header `NAME` (repeatable)")
	f.StringVar(&opts.sessionHeader, "session-header", "", "take the agent's session id from header `NAME` first")
	f.BoolVar(&opts.failOpen, "fail-open", false, "forward requests unrecorded when the store fails (breaks model-visible = logged)")
	f.BoolVar(&opts.allowRemote, "allow-remote", false, "allow a --listen (or --ui) address that is not loopback")
	f.StringVar(&opts.uiAddr, "ui", "", "also serve the audit UI of the store (as logtool serve) on `HOST:PORT`")
	f.BoolVar(&opts.quiet, "quiet", false, "no line per exchange on stderr (warnings and errors still)")
	f.DurationVar(&opts.grace, "grace", 30*time.Second, "on Ctrl-C or SIGTERM, how long answers in flight may still stream")
	f.DurationVar(&opts.dial, "dial-timeout", gateway.DefaultDialTimeout, "bound on connecting to an upstream")
	f.DurationVar(&opts.first, "first-byte-timeout", gateway.DefaultFirstByteTimeout, "bound on waiting for an upstream's answer to start")
	f.DurationVar(&opts.idle, "idle-timeout", gateway.DefaultIdleTimeout, "bound on an upstream's silence while it answers")
	f.BoolVar(&opts.redact, "redact", false, "record requests with common secrets (API keys, tokens, private keys) replaced by [REDACTED]; forwarding is unchanged")
	f.StringArrayVar(&opts.patterns, "redact-pattern", nil, "also redact what `REGEX` matches in recorded requests (repeatable; without --redact, only these)")
	return cmd
}

func runGateway(ctx context.Context, opts gatewayOptions, stdout, stderr io.Writer) (err error) {
	if len(opts.upstreams) == 0 {
		return usagef("gateway: give at least one --upstream URL")
	}
	if opts.maxBody <= 0 {
		return usagef("gateway: --max-body must be positive")
	}
	var ups []gateway.Upstream
	for _, s := range opts.upstreams {
		u, err := gateway.ParseUpstream(s)
		if err != nil {
			return errclass.Mark(err, ErrUsage)
		}
		ups = append(ups, u)
	}
	for _, h := range opts.recordHeaders {
		if err := gateway.CheckRecordHeader(h); err != nil {
			return errclass.Mark(err, ErrUsage)
		}
	}
	red, err := redactor(opts.redact, opts.patterns, "--redact-pattern")
	if err != nil {
		return err
	}
	local := loopback.Addr(opts.listen)
	if !local && !opts.allowRemote {
		return errors.WithHint(usagef("gateway: --listen %s is not a loopback address: whoever reaches it uses your upstreams and is recorded", errors.Safe(opts.listen)),
			"--allow-remote listens there anyway; 127.0.0.1:PORT keeps it on this machine")
	}
	var uiHosts []string
	if opts.uiAddr != "" {
		if uiHosts, err = checkUI(serveOptions{addr: opts.uiAddr, allowRemote: opts.allowRemote}); err != nil {
			return err
		}
	}
	st, err := opts.g.open(openCreate)
	if err != nil {
		return err // a store locked by another process stops the start
	}
	if opts.g.env.getenv("GOMEMLIMIT") == "" {
		// Many answers streaming at once make garbage fast; a soft limit
		// makes the collector keep the heap near what is live instead of
		// letting it double. (GOMEMLIMIT, when set, wins.)
		debug.SetMemoryLimit(gateway.MemoryLimit)
	}
	defer closeStore(st, &err)
	level := slog.LevelInfo
	if opts.quiet {
		level = slog.LevelWarn
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	gw, err := gateway.New(gateway.Options{Store: st, Upstreams: ups, MaxBody: opts.maxBody, RecordAll: opts.recordAll,
		RecordHeaders: opts.recordHeaders, SessionHeader: opts.sessionHeader, FailOpen: opts.failOpen,
		LoopbackHostsOnly: local, DialTimeout: opts.dial, FirstByteTimeout: opts.first, IdleTimeout: opts.idle,
		Logger: logger, Redactor: red})
	if err != nil {
		if errors.Is(err, gateway.ErrUsage) {
			err = errclass.Mark(err, ErrUsage)
		}
		return err
	}
	if opts.failOpen {
		logger.Warn("--fail-open: requests the store cannot take are forwarded UNRECORDED; what the model receives may not be in the log")
	}
	ln, err := net.Listen("tcp", opts.listen)
	if err != nil {
		return errors.Wrapf(err, "gateway: listen on %s", errors.Safe(opts.listen))
	}
	hs := &http.Server{Handler: gw, ReadHeaderTimeout: 30 * time.Second}
	fmt.Fprintf(stdout, "http://%s\n", ln.Addr())
	var uiDone <-chan error
	if opts.uiAddr != "" {
		// The audit UI over the store the gateway holds (a bbolt store
		// is held by one process), served from this process.
		srv, err := newUI(st, uiHosts, logger)
		if err != nil {
			ln.Close()
			return err
		}
		stopUI, done, err := listenUI(srv, opts.uiAddr, stdout)
		if err != nil {
			ln.Close()
			return err
		}
		uiDone = done
		defer func() {
			if serr := stopUI(); serr != nil && err == nil {
				err = errors.Wrap(serr, "gateway: shut down the audit UI")
			}
		}()
	}
	if f, ok := stdout.(interface{ Sync() error }); ok {
		_ = f.Sync()
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		gw.Stop()
		gw.Wait()
		return errors.Wrap(err, "gateway: serve")
	case err := <-uiDone:
		_ = hs.Close()
		gw.Stop()
		gw.Wait()
		return errors.Wrap(err, "gateway: serve the audit UI")
	case <-ctx.Done():
	}
	// Stop accepting; answers in flight get the grace, then are cut.
	shut, cancel := context.WithTimeout(context.Background(), opts.grace)
	defer cancel()
	if serr := hs.Shutdown(shut); serr != nil {
		// The grace is over: cut what still streams (recorded cut
		// "shutdown"), give the handlers a moment to record it, then
		// close every connection.
		gw.Stop()
		waited := make(chan struct{})
		go func() { gw.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(5 * time.Second):
		}
		_ = hs.Close()
	}
	gw.Wait()
	s := gw.Stats()
	fmt.Fprintf(stderr, "logtool: gateway stopped: %d recorded, %d forwarded unrecorded, %d refused, %d failed open, %d cut",
		s.Recorded, s.Unrecorded, s.Refused, s.FailedOpen, s.Cut)
	if red != nil {
		fmt.Fprintf(stderr, ", %d spans redacted", s.Redacted)
	}
	fmt.Fprintln(stderr)
	if ferr := gw.Failed(); ferr != nil {
		return errors.Wrap(ferr, "gateway: the store failed while it ran")
	}
	return nil
}

// redactor is the redactor of --redact (the ready matchers) and of the
// patterns of flag (each a regular expression), nil when neither is
// given. A pattern that does not compile is a usage error that names
// what is wrong, not the pattern (it may hold the secret it is for).
func redactor(ready bool, patterns []string, flag string) (*redact.Redactor, error) {
	if !ready && len(patterns) == 0 {
		return nil, nil
	}
	var ms []redact.Matcher
	if ready {
		ms = redact.SecretMatchers()
	}
	for i, p := range patterns {
		m, err := redact.Regexp(fmt.Sprintf("%s %d", flag, i+1), p)
		if err != nil {
			return nil, errclass.Mark(err, ErrUsage)
		}
		ms = append(ms, m)
	}
	return redact.New(ms...), nil
}
