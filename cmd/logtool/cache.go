package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/sessionlog/sessionlog/audit"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/spf13/cobra"
)

// cacheOptions are the flags of logtool cache.
type cacheOptions struct {
	g    *globalOptions
	json bool
}

func newCacheCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := cacheOptions{g: g}
	cmd := &cobra.Command{
		Use:   "cache SESSION [--json]",
		Short: "Show how much of each request a provider's prompt cache could reuse",
		Long: `For every step, lay the request out in wire order (system prompt, then
tools, then messages) and print how many of its bytes are an exact prefix
of the previous step's request (what a provider's prompt cache can reuse),
how many are sent anew, and why the shared prefix broke:

  first       the session's first request
  system      the system prompt changed
  tools       the tools changed
  config      the provider or model changed (nothing is reusable)
  prefix      the session prefix changed
  resume      a change that came with a new loop instance (resume snapshot)
  compaction  a compaction rewrote the history
  none        the request extends the previous one

then the totals. When the log records the cache reads the provider
reported (usage.cacheReadTokens of a step's assistant/message, as imported
Codex and Claude Code sessions do), a cache-read column shows them, in
tokens, next to the bytes predicted reusable ("-" for a step without one).

--json prints one JSON object per line instead: per step
{"turn":T,"step":S,"stepStartSeq":B,"bytes":N,"reusable":N,"resent":N,
"reason":R,"cacheReadTokens":N} (cacheReadTokens only when reported;
bytes, reusable, resent and reason null for a step with no request), then
{"total":{"requests":N,"bytes":N,"reusable":N,"resent":N,"cacheReadTokens":N}}.`,
		Args: exactArgs("SESSION"),
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runCache(cmd.Context(), opts, args, stdout, stderr)
		}),
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print one JSON object per line")
	return cmd
}

func runCache(ctx context.Context, opts cacheOptions, args []string, stdout, _ io.Writer) (err error) {
	st, err := opts.g.open(openRead)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)
	head, err := sessionHead(ctx, st, opts.g.name(), args[0])
	if err != nil {
		return err
	}
	if opts.json {
		w := bufio.NewWriter(stdout)
		var line []byte
		tot, err := audit.Cache(ctx, st, head, audit.Window{}, func(r audit.CacheRow) error {
			line = append(r.AppendJSON(line[:0]), '\n')
			_, err := w.Write(line)
			return err
		})
		if err != nil {
			return err
		}
		w.Write(append(tot.AppendJSON(line[:0]), '\n'))
		return w.Flush()
	}
	var rows []audit.CacheRow
	tot, err := audit.Cache(ctx, st, head, audit.Window{}, func(r audit.CacheRow) error {
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		return err
	}
	reads := tot.CacheReads > 0
	tw := tabwriter.NewWriter(opts.g.human(stdout), 0, 4, 2, ' ', tabwriter.AlignRight)
	if reads {
		fmt.Fprintf(tw, "step\tbytes\treusable\tre-sent\tcache-read\t reason\n")
	} else {
		fmt.Fprintf(tw, "step\tbytes\treusable\tre-sent\t reason\n")
	}
	for i := range rows {
		r := &rows[i]
		read := ""
		if reads {
			read = "-\t"
			if r.HasCacheRead {
				read = string(codec.AppendJSONNumber(nil, r.CacheRead)) + "\t"
			}
		}
		if r.Null {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t%s (no request)\n", r.Ref, read)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s %s\n", r.Ref, r.Bytes, r.Reusable, r.Resent(), read, r.Reason)
	}
	read := ""
	if reads {
		read = string(codec.AppendJSONNumber(nil, tot.CacheRead)) + "\t"
	}
	fmt.Fprintf(tw, "total\t%d\t%d\t%d\t%s %.1f%% reusable over %s\n", tot.Bytes, tot.Reusable, tot.Resent(), read,
		100*tot.Ratio(), count(tot.Requests, "request", "requests"))
	return tw.Flush()
}
