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

// copyOptions are the flags of logtool copy.
type copyOptions struct {
	g            *globalOptions
	from, to     string
	skipExisting bool
}

func newCopyCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := copyOptions{g: g}
	cmd := &cobra.Command{
		Use:   "copy --from DB --to DB [SESSION…] [--skip-existing]",
		Short: "Copy sessions between stores (a bbolt file or a PostgreSQL URL)",
		Long: `Copy the named sessions (all sessions when none is named) from the store
--from to the store --to, either of which is a bbolt file path or a
postgres:// URL (docs/rules.md#distribution). --from is read through read-only transactions;
--to is created when missing.

Each session is copied atomically, as an import: the copy is validated
against every rule of the log and published only whole. Then its chain hash
is compared with the source's: a copy whose hash differs is reported as
corrupt. For each copied session "SESSION_ID EVENTS CHAIN" is printed on
stdout. A session that exists in --to already is a conflict, unless
--skip-existing, which skips it with a note on stderr. A failed session
does not stop the others; the exit status is then 1.`,
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runCopy(cmd.Context(), opts, args, stdout, stderr)
		}),
	}
	cmd.Flags().StringVar(&opts.from, "from", "", "the store `DB` to copy from (path or postgres:// URL)")
	cmd.Flags().StringVar(&opts.to, "to", "", "the store `DB` to copy to (path or postgres:// URL)")
	cmd.Flags().BoolVar(&opts.skipExisting, "skip-existing", false, "skip sessions that exist in --to instead of failing")
	return cmd
}

// runCopy copies sessions from --from to --to.
func runCopy(ctx context.Context, opts copyOptions, args []string, stdout, stderr io.Writer) (err error) {
	switch {
	case opts.from == "":
		return usagef("copy: missing --from DB, the store to copy from")
	case opts.to == "":
		return usagef("copy: missing --to DB, the store to copy to")
	case opts.from == opts.to:
		return usagef("copy: --from and --to name the same store")
	}
	fromG, toG := *opts.g, *opts.g
	fromG.db, toG.db = opts.from, opts.to
	fromG.dbFlag, toG.dbFlag = "--from", "--to"
	src, err := fromG.open(openRead)
	if err != nil {
		return err
	}
	defer closeStore(src, &err)
	dst, err := toG.open(openCreate)
	if err != nil {
		return err
	}
	defer closeStore(dst, &err)

	stdout = opts.g.human(stdout)
	copied, skipped, failed := 0, 0, 0
	one := func(id string) error {
		n, chain, err := copySession(ctx, src, dst, id)
		switch {
		case err == nil:
			copied++
			_, err := fmt.Fprintf(stdout, "%s %d %s\n", printable.ID(id), n, hex.EncodeToString(chain[:]))
			return errors.Wrap(err, "copy: write output")
		case opts.skipExisting && errors.Is(err, eventlog.ErrConflict):
			skipped++
			fmt.Fprintf(stderr, "logtool: copy: session %s exists in %s: skipped\n", printable.ID(id), toG.name())
			return nil
		case ctx.Err() != nil:
			return err
		}
		failed++
		printError(stderr, err)
		return nil
	}
	if len(args) > 0 {
		for _, id := range args {
			if err := one(id); err != nil {
				return err
			}
		}
	} else {
		err := eachPage(ctx, src, func(heads []eventlog.Head) error {
			for _, h := range heads {
				if err := one(h.Header.ID); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return errors.Wrap(err, "copy")
		}
	}
	if failed > 0 {
		return errors.Newf("copy: %d of %d sessions not copied", errors.Safe(failed), errors.Safe(copied+skipped+failed))
	}
	return nil
}

// copySession copies one session and checks its chain hash.
func copySession(ctx context.Context, src, dst store, id string) (int64, [32]byte, error) {
	head, err := sessionHead(ctx, src, "the source store", id)
	if err != nil {
		return 0, [32]byte{}, errors.Wrap(err, "copy")
	}
	it, err := src.Scan(ctx, id, 0)
	if err != nil {
		return 0, [32]byte{}, errors.Wrapf(err, "copy %s", errors.Safe(printable.ID(id)))
	}
	defer it.Close()
	// Up to the head read above: events appended since are not in its
	// chain hash.
	n, err := dst.Import(ctx, head.Header, &upTo{it: it, end: head.Next})
	if err != nil {
		return 0, [32]byte{}, errors.Wrapf(err, "copy %s", errors.Safe(printable.ID(id)))
	}
	got, err := dst.Head(ctx, id)
	if err != nil {
		return 0, [32]byte{}, errors.Wrapf(err, "copy %s", errors.Safe(printable.ID(id)))
	}
	if got.Chain != head.Chain || got.Next != head.Next {
		return 0, [32]byte{}, errclass.Mark(errors.Newf("copy %s: the copy's chain hash %x (%d events) differs from the source's %x (%d events)",
			errors.Safe(printable.ID(id)), errors.Safe(got.Chain[:]), errors.Safe(got.Next), errors.Safe(head.Chain[:]), errors.Safe(head.Next)),
			eventlog.ErrCorrupt)
	}
	return n, got.Chain, nil
}

// upTo is a Source of an iterator's events before seq end.
type upTo struct {
	it  eventlog.Iterator
	end int64
}

func (u *upTo) Next() (codec.Event, error) {
	ev, err := u.it.Next()
	if err == nil && ev.Seq >= u.end {
		return codec.Event{}, io.EOF
	}
	return ev, err
}
