package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/spf13/cobra"
)

// cacheOptions are the flags of logtool cache.
type cacheOptions struct {
	g *globalOptions
}

func newCacheCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	opts := cacheOptions{g: g}
	return &cobra.Command{
		Use:   "cache SESSION",
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

then the totals.`,
		Args: exactArgs("SESSION"),
		RunE: g.action(func(cmd *cobra.Command, args []string) error {
			return runCache(cmd.Context(), opts, args, stdout, stderr)
		}),
	}
}

// cacheRow is one step of the cache report.
type cacheRow struct {
	name             string
	total, reusable  int
	reason           string
	nullRequest      bool
	wire             []byte
	header           header.Snapshot
	gen, snapshots   int
	lastSnapshotKind string
}

func runCache(ctx context.Context, opts cacheOptions, args []string, stdout, _ io.Writer) (err error) {
	st, err := opts.g.open(openRead)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "step\tbytes\treusable\tre-sent\t reason\n")
	var prev *cacheRow
	var total, reusable, steps int
	err = eachStep(ctx, st, opts.g.name(), args[0], true, func(s rebuild.Step) error {
		row := &cacheRow{name: step(s.Turn, s.Step)}
		if s.Null {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t (no request)\n", row.name)
			return nil
		}
		wire, err := wireOrder(s)
		if err != nil {
			return err
		}
		row.wire, row.total, row.header = wire, len(wire), s.Header
		row.gen, row.snapshots, row.lastSnapshotKind = s.Gen, s.Snapshots, s.LastReason
		row.reusable, row.reason = cacheReuse(prev, row)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t %s\n", row.name, row.total, row.reusable, row.total-row.reusable, row.reason)
		total += row.total
		reusable += row.reusable
		steps++
		prev = row
		return nil
	})
	if err != nil {
		return err
	}
	pct := 0.0
	if total > 0 {
		pct = 100 * float64(reusable) / float64(total)
	}
	fmt.Fprintf(tw, "total\t%d\t%d\t%d\t %.1f%% reusable over %s\n", total, reusable, total-reusable, pct, count(steps, "request", "requests"))
	return tw.Flush()
}

// cacheReuse returns how many bytes of row's wire form are an exact prefix
// of prev's, and why the shared prefix broke.
func cacheReuse(prev, row *cacheRow) (int, string) {
	if prev == nil {
		return 0, "first"
	}
	a, b := &prev.header, &row.header
	if a.Config.HasProvider != b.Config.HasProvider || a.Config.Provider != b.Config.Provider || a.Config.Model != b.Config.Model {
		return 0, "config"
	}
	common := rebuild.FirstDifference(prev.wire, row.wire)
	if common < 0 || common == len(prev.wire) {
		return len(prev.wire), "none"
	}
	reason := "none"
	switch {
	case a.System != b.System:
		reason = "system"
	case !toolsEqual(a.Tools, b.Tools):
		reason = "tools"
	case !equalJSONs(a.Prefix, b.Prefix):
		reason = "prefix"
	case row.gen != prev.gen:
		reason = "compaction"
	}
	if reason != "compaction" && reason != "none" && row.snapshots != prev.snapshots && row.lastSnapshotKind == "resume" {
		reason = "resume"
	}
	return common, reason
}

func toolsEqual(a, b []header.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].JSON, b[i].JSON) {
			return false
		}
	}
	return true
}

// wireOrder lays a request out as providers put it on the wire: the
// system prompt, the tools, then the messages (prefix, then history).
func wireOrder(s rebuild.Step) ([]byte, error) {
	var b []byte
	if s.Header.System != "" {
		b = codec.AppendJSONString(b, []byte(s.Header.System))
	}
	if len(s.Header.Tools) > 0 {
		b = s.Header.AppendToolsJSON(b)
	}
	msgs, err := requestMessages(s.Request)
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		b = append(b, m...)
	}
	return b, nil
}
