package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/printable"
	"github.com/spf13/cobra"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// forkOptions are the flags of logtool fork.
type forkOptions struct {
	g *globalOptions
	// at is the seq of the turn/end the child ends with.
	at int64
	// id is the child's id; "" means a new random UUID.
	id string
}

func newForkCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := forkOptions{g: g}
	cmd := &cobra.Command{
		Use:   "fork SESSION --at SEQ [--id ID]",
		Short: "Fork a session after one of its turn/end events",
		Long: `Create a child session whose first events are SESSION's events 0..SEQ, verbatim
(docs/rules.md#fork). SEQ must be the seq of a turn/end. The child's header names
SESSION as parentSession with seedLength SEQ+1; its createdAt is now and its
cwd is SESSION's. Prints the child's id (--id, else a new random UUID).`,
		Args: exactArgs("SESSION"),
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runFork(cmd.Context(), opts, args, stdout, stderr)
		}),
	}
	f := cmd.Flags()
	f.Int64Var(&opts.at, "at", 0, "`SEQ` of the turn/end the child ends with (required)")
	f.StringVar(&opts.id, "id", "", "the child's `ID` (default: a new random UUID)")
	_ = cmd.MarkFlagRequired("at") // the flag exists: cannot fail
	return cmd
}

// runFork forks session args[0] at --at and prints the child's id.
func runFork(ctx context.Context, opts forkOptions, args []string, stdout, _ io.Writer) (err error) {
	source := args[0]
	if opts.at < 0 {
		return usagef("fork: --at must not be negative")
	}
	id := opts.id
	if id == "" {
		if id, err = newUUID(opts.g.env.random); err != nil {
			return err
		}
	}
	st, err := opts.g.open(openWrite)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)
	head, err := sessionHead(ctx, st, opts.g.name(), source)
	if err != nil {
		return err
	}
	if opts.at >= head.Next {
		return errors.WithHintf(
			errclass.Mark(errors.Newf("fork: session %s has no seq %d (it has %d events)",
				errors.Safe(printable.ID(source)), errors.Safe(opts.at), errors.Safe(head.Next)), eventlog.ErrNotFound),
			"'logtool show %s --type turn/end' lists the seqs a fork can start from", errors.Safe(printable.ID(source)))
	}
	child := codec.NewSessionHeader(id, float64(opts.g.env.now().UnixMilli()), head.Header.Cwd, source, opts.at+1)
	if err := st.Fork(ctx, source, opts.at, child); err != nil {
		if errors.Is(err, eventlog.ErrConflict) {
			return errors.WithHint(
				errclass.Mark(errors.Newf("fork: session %s exists already", errors.Safe(printable.ID(id))), eventlog.ErrConflict),
				"choose another --id, or leave it out for a new random one")
		}
		// The store's error names the source and the seq; the child's id
		// is left out, since the user may never have chosen it.
		if errors.Is(err, eventlog.ErrInvalid) {
			err = errors.WithHintf(err, "a fork starts after a turn/end; 'logtool show %s --type turn/end' lists them",
				errors.Safe(printable.ID(source)))
		}
		return err
	}
	_, err = fmt.Fprintln(opts.g.human(stdout), printable.ID(id))
	return errors.Wrap(err, "fork: write output")
}

// newUUID returns a random (version 4) UUID read from random.
func newUUID(random io.Reader) (string, error) {
	var u [16]byte
	if _, err := io.ReadFull(random, u[:]); err != nil {
		return "", errors.Wrap(err, "new session id")
	}
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:]), nil
}
