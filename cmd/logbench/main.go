package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	if ok, err := serveChild(os.Stdin, os.Stdout); ok { // a server of the UI or gateway memory section
		if err != nil {
			fmt.Fprintf(os.Stderr, "logbench: serve: %v\n", err)
			os.Exit(exitFailure)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
