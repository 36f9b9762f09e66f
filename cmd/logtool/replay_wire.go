package main

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/wire"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// runReplayWire is replay --wire: the bytes a provider received for each
// step (docs/cli.md, docs/wire.md), from the log alone.
func runReplayWire(ctx context.Context, opts replayOptions, args []string, stdout io.Writer) error {
	switch opts.format {
	case "json", "text":
	case "raw":
		if opts.step == "" {
			return usagef("--format raw prints one step's body: give --step T.S")
		}
	default:
		return usagef("--format with --wire is json, raw or text, not %q", errors.Safe(opts.format))
	}
	var fixed *wire.Renderer
	if opts.wire != wireFromHeader {
		r, err := wire.Lookup(opts.wire)
		if err != nil {
			return errclass.Mark(err, ErrUsage)
		}
		fixed = r
	}
	if opts.format == "text" {
		stdout = opts.g.human(stdout)
	}
	var body, line []byte
	return replaySteps(ctx, opts, args[0], stdout, nil, func(w *bufio.Writer, s rebuild.Step) error {
		var r *wire.Renderer
		if !s.Null {
			r = fixed
			if r == nil {
				if !s.Header.Config.HasWire {
					return errors.WithHint(errors.Newf("step %s: its config names no wire", errors.Safe(step(s.Turn, s.Step))),
						"name a renderer: --wire openai-chat or --wire anthropic-messages")
				}
				var err error
				if r, err = wire.Lookup(s.Header.Config.Wire); err != nil {
					return errors.Wrapf(err, "step %s", errors.Safe(step(s.Turn, s.Step)))
				}
			}
			var err error
			if body, err = r.AppendBody(body[:0], s.Request, &s.Header); err != nil {
				return errors.Wrapf(err, "step %s", errors.Safe(step(s.Turn, s.Step)))
			}
		}
		switch opts.format {
		case "raw":
			if s.Null {
				return errclass.Mark(errors.Newf("step %s has no header in force: nothing was sent",
					errors.Safe(step(s.Turn, s.Step))), eventlog.ErrNotFound)
			}
			_, err := w.Write(body)
			return err
		case "text":
			return writeWireText(w, s, r, body)
		}
		line = appendWireLine(line[:0], s, body)
		_, err := w.Write(line)
		return err
	})
}

// appendWireLine appends replay --wire's json line for a step:
// {"turn":T,"step":S,"stepStartSeq":B,"body":STRING|null}.
func appendWireLine(b []byte, s rebuild.Step, body []byte) []byte {
	b = append(b, `{"turn":`...)
	b = codec.AppendJSONInt(b, s.Turn)
	b = append(b, `,"step":`...)
	b = codec.AppendJSONInt(b, s.Step)
	b = append(b, `,"stepStartSeq":`...)
	b = codec.AppendJSONInt(b, s.Start)
	b = append(b, `,"body":`...)
	if s.Null {
		b = append(b, "null"...)
	} else {
		b = codec.AppendJSONString(b, body)
	}
	return append(b, "}\n"...)
}

// writeWireText writes a step's HTTP request for people: method, path,
// headers (where the key goes, never a key), a blank line, the body.
func writeWireText(w *bufio.Writer, s rebuild.Step, r *wire.Renderer, body []byte) error {
	fmt.Fprintf(w, "== step %s (step/start at seq %d)", step(s.Turn, s.Step), s.Start)
	if s.Null {
		_, err := fmt.Fprintf(w, ": no header in force, so no request could have been sent\n\n")
		return err
	}
	req := r.HTTP(body)
	fmt.Fprintf(w, "  wire %s\n%s {base}%s\n", r.Name(), req.Method, req.Path)
	for _, f := range req.Header {
		fmt.Fprintf(w, "%s: %s\n", f.Name, f.Value)
	}
	fmt.Fprintf(w, "%s: %s(the API key, from the environment; never logged)\n\n", req.KeyHeader, req.KeyPrefix)
	w.Write(body)
	_, err := w.WriteString("\n\n")
	return err
}
