package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/pglog"
	"github.com/sessionlog/sessionlog/internal/printable"
	"github.com/spf13/cobra"
)

// statOptions are the flags of logtool stat.
type statOptions struct {
	g *globalOptions
	// json prints one JSON object instead of the table.
	json bool
}

func newStatCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := statOptions{g: g}
	cmd := &cobra.Command{
		Use:   "stat [SESSION]",
		Short: "Print counts, sizes, token usage and the chain hash",
		Long: `For one session: its events counted by type, the bytes its event records take
in the store against the bytes of their exported JSON lines, the token usage
summed over its assistant messages, and its chain hash (docs/rules.md#chain-hash), which can
be written down elsewhere and compared later.

Without SESSION: totals for the whole store (sessions, events, turns, bytes of
event records, file size).

--json prints the same as one JSON object on one line. For a session:
{"session","parent"?,"seedLength"?,"created","lastActivity","events","turns",
"bytesStored","bytesExported","usage":{"messages","input","output",
"cacheRead","cacheWrite","reasoning"},"chain","types":{TYPE:N,…}}
(times RFC 3339 or null, types in name order). For the store:
{"store","fileSize","sessions","forks","events","turns","bytesStored"}.`,
		Args: maxArgs(1),
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runStat(cmd.Context(), opts, args, stdout, stderr)
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print one JSON object on one line")
	return cmd
}

// runStat prints the statistics of session args[0], or of the store.
func runStat(ctx context.Context, opts statOptions, args []string, stdout, _ io.Writer) (err error) {
	st, err := opts.g.open(openRead)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)
	var obj codec.Object
	var out interface{ Flush() error }
	var w io.Writer
	if opts.json {
		out, w = bufio.NewWriter(stdout), io.Discard
	} else {
		tw := tabwriter.NewWriter(opts.g.human(stdout), 0, 0, 2, ' ', 0)
		out, w = tw, tw
	}
	if len(args) == 0 {
		err = statStore(ctx, st, opts.g.db, w, &obj)
	} else {
		err = statSession(ctx, st, opts.g.name(), args[0], w, &obj)
	}
	if err != nil {
		return err
	}
	if bw, ok := out.(*bufio.Writer); ok {
		if err := writeJSONLine(bw, obj.Bytes()); err != nil {
			return errors.Wrap(err, "stat")
		}
	}
	return errors.Wrap(out.Flush(), "stat: write")
}

// statStore writes the store-wide totals to w and adds them to obj.
func statStore(ctx context.Context, st store, db string, w io.Writer, obj *codec.Object) error {
	var sessions, events, turns, stored, forks int64
	err := eachPage(ctx, st, func(heads []eventlog.Head) error {
		for _, h := range heads {
			sessions++
			events += h.Next
			turns += h.Turns
			stored += h.StoredBytes
			if h.Header.ParentSession != "" {
				forks++
			}
		}
		return nil
	})
	if err != nil {
		return errors.Wrap(err, "stat")
	}
	// The JSON holds the store as given, but without its secrets; the
	// table, the printable name.
	fmt.Fprintf(w, "store\t%s\n", storeName(db))
	if pglog.IsURL(db) {
		// A database has no file size of its own to report.
		obj.Str("store", redactStore(db)).Value("fileSize", codec.AppendNil(nil))
	} else {
		fi, err := os.Stat(db)
		if err != nil {
			return errors.Wrap(err, "stat")
		}
		fmt.Fprintf(w, "file size\t%d\n", fi.Size())
		obj.Str("store", db).Int("fileSize", fi.Size())
	}
	fmt.Fprintf(w, "sessions\t%d\n", sessions)
	fmt.Fprintf(w, "forks\t%d\n", forks)
	fmt.Fprintf(w, "events\t%d\n", events)
	fmt.Fprintf(w, "turns\t%d\n", turns)
	fmt.Fprintf(w, "bytes stored\t%d\n", stored)
	obj.Int("sessions", sessions).Int("forks", forks)
	obj.Int("events", events).Int("turns", turns).Int("bytesStored", stored)
	return nil
}

// statSession writes the statistics of session id to w and adds them to
// obj.
func statSession(ctx context.Context, st store, db, id string, w io.Writer, obj *codec.Object) error {
	head, err := sessionHead(ctx, st, db, id)
	if err != nil {
		return err
	}
	counts := map[string]int64{}
	var events, exported int64
	var u usage
	var line []byte
	err = scanRange(ctx, st, id, 0, head.Next-1, func(ev *codec.Event) error {
		events++
		counts[ev.Type]++
		var err error
		line, err = ev.AppendJSON(line[:0])
		if err != nil {
			return errors.Wrapf(err, "stat %s: seq %d", errors.Safe(printable.ID(id)), errors.Safe(ev.Seq))
		}
		exported += int64(len(line)) + 1
		return u.add(ev)
	})
	if err != nil {
		return err
	}
	if events != head.Next {
		return errors.Newf("stat %s: the head counts %d events, the scan found %d",
			errors.Safe(printable.ID(id)), errors.Safe(head.Next), errors.Safe(events))
	}
	writeSessionStat(w, head, counts, events, exported, u)
	sessionStatObject(obj, head, counts, events, exported, u)
	return nil
}

// sessionStatObject adds what writeSessionStat writes to obj, as stat
// --json prints it.
func sessionStatObject(obj *codec.Object, head eventlog.Head, counts map[string]int64, events, exported int64, u usage) {
	h := head.Header
	obj.Str("session", h.ID)
	if h.ParentSession != "" {
		obj.Str("parent", h.ParentSession).Int("seedLength", h.SeedLength)
	}
	obj.Value("created", jsonTimestamp(h.CreatedAt)).Value("lastActivity", jsonTimestamp(head.LastTime))
	obj.Int("events", events).Int("turns", head.Turns).Int("bytesStored", head.StoredBytes).Int("bytesExported", exported)
	var uo codec.Object
	uo.Int("messages", u.Messages).Int("input", u.Input).Int("output", u.Output)
	uo.Int("cacheRead", u.CacheRead).Int("cacheWrite", u.CacheWrite).Int("reasoning", u.Reasoning)
	obj.Value("usage", uo.Bytes()).Str("chain", hex.EncodeToString(head.Chain[:]))
	var to codec.Object
	for _, t := range sortedKeys(counts) {
		to.Int(t, counts[t])
	}
	obj.Value("types", to.Bytes())
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// writeSessionStat formats the statistics of one session.
func writeSessionStat(w io.Writer, head eventlog.Head, counts map[string]int64, events, exported int64, u usage) {
	h := head.Header
	fmt.Fprintf(w, "session\t%s\n", printable.ID(h.ID))
	if h.ParentSession != "" {
		fmt.Fprintf(w, "parent\t%s (first %d events inherited)\n", printable.ID(h.ParentSession), h.SeedLength)
	}
	fmt.Fprintf(w, "created\t%s\n", timestamp(h.CreatedAt))
	fmt.Fprintf(w, "last activity\t%s\n", timestamp(head.LastTime))
	fmt.Fprintf(w, "events\t%d\n", events)
	fmt.Fprintf(w, "turns\t%d\n", head.Turns)
	fmt.Fprintf(w, "bytes stored\t%d\n", head.StoredBytes)
	fmt.Fprintf(w, "bytes exported\t%d\n", exported)
	if exported > 0 {
		fmt.Fprintf(w, "stored/exported\t%.1f%%\n", 100*float64(head.StoredBytes)/float64(exported))
	}
	fmt.Fprintf(w, "assistant messages with usage\t%d\n", u.Messages)
	fmt.Fprintf(w, "tokens input\t%d\n", u.Input)
	fmt.Fprintf(w, "tokens output\t%d\n", u.Output)
	fmt.Fprintf(w, "tokens cache read\t%d\n", u.CacheRead)
	fmt.Fprintf(w, "tokens cache write\t%d\n", u.CacheWrite)
	fmt.Fprintf(w, "tokens reasoning\t%d\n", u.Reasoning)
	fmt.Fprintf(w, "chain\t%s\n", hex.EncodeToString(head.Chain[:]))
	fmt.Fprintf(w, "\nTYPE\tEVENTS\n")
	for _, t := range sortedKeys(counts) {
		fmt.Fprintf(w, "%s\t%d\n", printable.ID(t), counts[t])
	}
}
