package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"runtime/debug"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/internal/loopback"
	"github.com/sessionlog/sessionlog/ui"
	"github.com/spf13/cobra"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// serveOptions are the flags of logtool serve.
type serveOptions struct {
	g           *globalOptions
	addr        string
	allowRemote bool
	hosts       []string
}

func newServeCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := serveOptions{g: g}
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:8080] [--allow-remote] [--host NAME]...",
		Short: "Serve a read-only web UI for auditing the store",
		Long: `Serve the audit web UI over the store, opened read-only: the sessions,
each session's timeline, every step's request, header and digest, the
cache chart and the diff of two steps, and the same as JSON under /api/
(GET /api/ documents it). Pages need no script and nothing from the
network.

The UI binds a loopback address only: any other --addr (":8080", a LAN
address) needs --allow-remote, since whoever reaches it reads every
session. It answers only requests whose Host is one of its names:
localhost, 127.0.0.1 and [::1] (with any port), the host of --addr when
it names one, and each --host NAME; any other Host gets 421 Misdirected
Request, so that a web page whose name was rebound to this machine (DNS
rebinding) reads nothing. With --allow-remote on every interface (":8080",
"0.0.0.0:8080") give --host for each name or address clients use.

Requests that read a session's log are served one at a time; another
waits up to 10 s, then gets 429 with Retry-After. Pages list at most 1000
events or 500 cache rows (the API: 10000 steps); a from past the end or
a limit out of range is a 400. A text over 64 KiB shows its first KiB
with a link to its raw bytes; the wire bodies of a request over 8 MiB
are rendered only when downloaded. Connections get 10 s to send their
headers, 30 s for the request, 2 minutes for the whole answer (a
download included), and are closed after 60 s idle. The process runs
under a soft memory limit of 384 MiB (GOMEMLIMIT overrides it).

It prints the URL it serves on stdout, logs one line per request on
stderr (never a path or anything from the log), and runs until
interrupted: Ctrl-C is its normal end, after which it exits 0. Like every
reader it holds the store's shared lock while it runs: a command or loop
that writes to the store waits for it (up to its --lock-timeout), so
serve a copy of a store that is being written.`,
		Args: maxArgs(0),
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runServe(cmd.Context(), opts, stdout, stderr)
		}),
	}
	cmd.Flags().StringVar(&opts.addr, "addr", "127.0.0.1:8080", "listen on `HOST:PORT`")
	cmd.Flags().BoolVar(&opts.allowRemote, "allow-remote", false, "allow an address that is not loopback")
	cmd.Flags().StringArrayVar(&opts.hosts, "host", nil, "also answer requests whose Host is `NAME` (a name or an address; repeatable)")
	return cmd
}

// serveHosts returns the Host names serve answers to: the loopback
// names, the host of addr when it names one (not every interface), and
// the --host names.
func serveHosts(opts serveOptions) ([]string, error) {
	hosts := append(loopback.Names(), opts.hosts...)
	host, _, err := net.SplitHostPort(opts.addr)
	if err != nil {
		return nil, errclass.Mark(errors.Wrapf(err, "address %q", errors.Safe(opts.addr)), ErrUsage)
	}
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		hosts = append(hosts, host)
	} else if opts.allowRemote && len(opts.hosts) == 0 {
		return nil, usagef("--addr %q serves every interface: give --host NAME for each name or address clients use to reach it", errors.Safe(opts.addr))
	}
	return hosts, nil
}

// checkUI checks the address flags of the audit UI (serve's, or
// gateway's --ui) and returns the Host names it answers.
func checkUI(opts serveOptions) ([]string, error) {
	if err := ui.CheckAddr(opts.addr, opts.allowRemote); err != nil {
		if errors.Is(err, ui.ErrRemote) {
			return nil, errclass.Mark(errors.WithHint(err, "--allow-remote serves it anyway; 127.0.0.1:PORT keeps it on this machine"), ErrUsage)
		}
		return nil, errclass.Mark(err, ErrUsage)
	}
	return serveHosts(opts)
}

// newUI builds the audit UI over st, answering hosts (checkUI): logtool
// serve and logtool gateway --ui both build it here.
func newUI(st store, hosts []string, logger *slog.Logger) (*ui.Server, error) {
	srv, err := ui.New(st, &ui.Options{Logger: logger, Renderers: ui.WireRenderers(), Hosts: hosts})
	if errors.Is(err, ui.ErrBadRequest) {
		return nil, errclass.Mark(errors.WithHint(err, "--host takes a name or an address, without a scheme or a path"), ErrUsage)
	}
	return srv, err
}

// listenUI listens on opts.addr for srv, prints the URL on stdout, and
// serves until the returned stop is called (it shuts the server down,
// giving requests 5 s) or the server fails (done).
func listenUI(srv *ui.Server, addr string, stdout io.Writer) (stop func() error, done <-chan error, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, errors.Wrapf(err, "listen on %s", errors.Safe(addr))
	}
	hs := ui.HTTPServer(srv)
	fmt.Fprintf(stdout, "http://%s/\n", ln.Addr())
	ch := make(chan error, 1)
	go func() { ch <- hs.Serve(ln) }()
	return func() error {
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return hs.Shutdown(shut)
	}, ch, nil
}

func runServe(ctx context.Context, opts serveOptions, stdout, stderr io.Writer) (err error) {
	hosts, err := checkUI(opts)
	if err != nil {
		return err
	}
	st, err := opts.g.open(openRead)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)
	srv, err := newUI(st, hosts, slog.New(slog.NewTextHandler(stderr, nil)))
	if err != nil {
		return err
	}
	setMemoryLimit()
	stop, done, err := listenUI(srv, opts.addr, stdout)
	if err != nil {
		return err
	}
	select {
	case err := <-done:
		return errors.Wrap(err, "serve")
	case <-ctx.Done():
	}
	return errors.Wrap(stop(), "serve: shut down")
}

// setMemoryLimit runs the process under ui.MemoryLimit, unless GOMEMLIMIT
// set a limit already: a big step's garbage is then collected before the
// heap doubles.
func setMemoryLimit() {
	if debug.SetMemoryLimit(-1) == math.MaxInt64 {
		debug.SetMemoryLimit(ui.MemoryLimit)
	}
}
