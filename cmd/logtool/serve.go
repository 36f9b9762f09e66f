package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/ui"
	"github.com/spf13/cobra"
)

// serveOptions are the flags of logtool serve.
type serveOptions struct {
	g           *globalOptions
	addr        string
	allowRemote bool
}

func newServeCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := serveOptions{g: g}
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:8080] [--allow-remote]",
		Short: "Serve a read-only web UI for auditing the store",
		Long: `Serve the audit web UI over the store, opened read-only: the sessions,
each session's timeline, every step's request, header and digest, the
cache chart and the diff of two steps, and the same as JSON under /api/
(GET /api/ documents it). Pages need no script and nothing from the
network.

The UI binds a loopback address only: any other --addr (":8080", a LAN
address) needs --allow-remote, since whoever reaches it reads every
session. It prints the URL it serves on stdout, logs one line per request
on stderr (never a path or anything from the log), and runs until
interrupted: Ctrl-C is its normal end, after which it exits 0. Like every reader it holds the store's shared lock while it
runs: a command or loop that writes to the store waits for it (up to its
--lock-timeout), so serve a copy of a store that is being written.`,
		Args: maxArgs(0),
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runServe(cmd.Context(), opts, stdout, stderr)
		}),
	}
	cmd.Flags().StringVar(&opts.addr, "addr", "127.0.0.1:8080", "listen on `HOST:PORT`")
	cmd.Flags().BoolVar(&opts.allowRemote, "allow-remote", false, "allow an address that is not loopback")
	return cmd
}

func runServe(ctx context.Context, opts serveOptions, stdout, stderr io.Writer) (err error) {
	if err := ui.CheckAddr(opts.addr, opts.allowRemote); err != nil {
		if errors.Is(err, ui.ErrRemote) {
			return errors.Mark(errors.WithHint(err, "--allow-remote serves it anyway; 127.0.0.1:PORT keeps it on this machine"), ErrUsage)
		}
		return errors.Mark(err, ErrUsage)
	}
	st, err := opts.g.open(openRead)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)
	srv, err := ui.New(st, &ui.Options{Logger: slog.New(slog.NewTextHandler(stderr, nil)), Renderers: ui.WireRenderers()})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return errors.Wrapf(err, "listen on %s", errors.Safe(opts.addr))
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "http://%s/\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return errors.Wrap(err, "serve")
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return errors.Wrap(hs.Shutdown(shut), "serve: shut down")
}
