package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first Ctrl-C (or SIGTERM, as a service manager stops serve)
	// cancels ctx, and the command stops at its next check (an import
	// rolls back its file, exit 130; serve shuts down and closes the
	// store, exit 0); after it, the default handling is back, so a second
	// one ends a command that waits on input at once.
	context.AfterFunc(ctx, stop)
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
