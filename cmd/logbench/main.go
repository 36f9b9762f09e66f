package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	if path := os.Getenv(uiChildEnv); path != "" { // the server of the UI memory section
		if err := serveUIChild(path, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "logbench: serve: %v\n", err)
			os.Exit(exitFailure)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
