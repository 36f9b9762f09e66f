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
Codex, Claude Code and Gemini CLI sessions do), a cache-read column shows
them, in tokens, next to the bytes predicted reusable ("-" for a step
without one). For an imported session the bytes are measured on requests
reconstructed from the transcript: a note on stderr says what it does not
record, and which session the gateway recorded of it, if any.

--json prints one JSON object per line instead: per step
{"turn":T,"step":S,"stepStartSeq":B,"bytes":N,"reusable":N,"resent":N,
"reason":R,"cacheReadTokens":N} (cacheReadTokens only when reported;
bytes, reusable, resent and reason null for a step with no request), then
{"total":{"requests":N,"bytes":N,"reusable":N,"resent":N,"cacheReadTokens":N}}.

A session the recording gateway recorded (logtool gateway) is reported on
the request bodies it recorded, one row per exchange, in the API's own
order (tools, system, then messages), cache markers ignored: reusable is
the prefix shared with the previous request of the same conversation
(lane), unchanged the bytes after it that the previous request held too
(re-sent although unchanged), cache-read and input the tokens the
provider's answer reported. Its reasons:

  first       the session's first request
  new-lane    the first request of another conversation (a sub-agent)
  config      the model or its parameters changed (nothing is reusable)
  tools       the tools changed
  system@N    the system prompt changed, first at byte N
  edited#I    an earlier message changed: request item I
  reordered#I the same items in another order, from item I
  markers     only cache markers moved (no effect on a cache)
  none        the request extends the previous one
  unmapped    a body the mapping refuses

--json then prints per exchange {"exchange":N,"requestSeq":R,"api":A,
"turn":T,"step":S,"stepStartSeq":B,"bytes":N,"reusable":N,"resent":N,
"unchanged":N,"unchangedTokens":N,"reason":R,"offset":N,"index":I,
"cacheReadTokens":N,"inputTokens":N} (turn, step and stepStartSeq null
until the exchange is mapped; offset for system, index for edited and
reordered, the token counts when the answer reported them), then
{"total":{"requests":N,"bytes":N,"reusable":N,"resent":N,"exchanges":N,
"unchanged":N,"unchangedTokens":N,"cacheReadTokens":N,"inputTokens":N,
"cacheReadRatio":F}}.`,
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
	noteImported(ctx, opts.g, st, head, "the cache figures of %s are measured on requests")
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
	if tot.Recorded {
		return printRecordedCache(opts.g.human(stdout), rows, tot)
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

// printRecordedCache prints the cache report of a recorded session
// (docs/gateway.md#cache-audit): one row per exchange, then the totals.
func printRecordedCache(out io.Writer, rows []audit.CacheRow, tot audit.CacheTotals) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "exchange\tstep\tbytes\treusable\tre-sent\tunchanged\tcache-read\tinput\t reason\n")
	num := func(ok bool, v float64) string {
		if !ok {
			return "-"
		}
		return string(codec.AppendJSONNumber(nil, v))
	}
	for i := range rows {
		r := &rows[i]
		ref := "-"
		if r.Start >= 0 {
			ref = r.Ref.String()
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t %s\n", r.Exchange, ref, r.Bytes, r.Reusable, r.Resent(), r.Unchanged,
			num(r.HasCacheRead, r.CacheRead), num(r.HasInput, r.InputTokens), r.Cause())
	}
	fmt.Fprintf(tw, "total\t\t%d\t%d\t%d\t%d\t%s\t%s\t %.1f%% reusable over %s\n", tot.Bytes, tot.Reusable, tot.Resent(), tot.Unchanged,
		num(tot.CacheReads > 0, tot.CacheRead), num(tot.Inputs > 0, tot.Input), 100*tot.Ratio(), count(tot.Requests, "exchange", "exchanges"))
	if err := tw.Flush(); err != nil {
		return err
	}
	if tot.Inputs > 0 {
		fmt.Fprintf(out, "cache reads: %.1f%% of %s input tokens reported\n", 100*tot.CacheReadRatio(), num(true, tot.Input))
	}
	_, err := fmt.Fprintf(out, "re-sent although unchanged: %d bytes, about %d tokens\n", tot.Unchanged, tot.UnchangedTokens)
	return err
}
