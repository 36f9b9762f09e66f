package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/internal/printable"
	"github.com/sessionlog/sessionlog/wire/recorded"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// runReplayRecorded is replay --wire --recorded: the bytes the recording
// gateway recorded, per exchange (docs/gateway.md#what-is-recorded), numbered from 1 in log
// order; --step T.S selects the exchange whose wire/request began step
// T.S (the gateway appends a request's mapped events, its step/start
// among them, right after its wire/request).
func runReplayRecorded(ctx context.Context, opts replayOptions, id string, stdout, stderr io.Writer) (err error) {
	switch {
	case opts.wire != wireFromHeader:
		return usagef("replay: --recorded prints the recorded bytes; it takes no renderer name")
	case opts.step != "" && opts.exchange != 0:
		return usagef("replay: --step and --exchange each select an exchange: give one")
	case opts.new:
		return usagef("replay: --new does not go with --recorded")
	case opts.exchange < 0:
		return usagef("replay: --exchange counts from 1")
	}
	switch opts.format {
	case "json", "text":
	case "raw":
		if opts.exchange == 0 && opts.step == "" {
			return usagef("--format raw prints one exchange's body: give --exchange N or --step T.S")
		}
	default:
		return usagef("--format with --wire is json, raw or text, not %q", errors.Safe(opts.format))
	}
	var want stepName
	if opts.step != "" {
		var err error
		if want, err = parseStep(opts.step); err != nil {
			return err
		}
	}
	st, err := opts.g.open(openRead)
	if err != nil {
		return err
	}
	defer closeStore(st, &err)
	if _, err := sessionHead(ctx, st, opts.g.name(), id); err != nil {
		return err
	}
	it, err := st.Scan(ctx, id, 0)
	if err != nil {
		return err
	}
	defer it.Close()
	var s recorded.Session
	lastReq, stepReq := int64(-1), int64(-1)
	for {
		ev, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		s.Add(&ev) // verify reports what does not add up
		switch d := ev.Data.(type) {
		case *codec.StepStart:
			if opts.step != "" && d.Turn == want.turn && d.Step == want.step && stepReq < 0 {
				stepReq = lastReq
			}
		default:
			if ev.Type == recorded.TypeRequest {
				lastReq = ev.Seq
			}
		}
	}
	xs := s.Exchanges()
	if opts.step != "" {
		for _, x := range xs {
			if x.Seq == stepReq {
				opts.exchange = x.N
			}
		}
		if opts.exchange == 0 {
			return errclass.Mark(errors.Newf("session %s has no recorded exchange that began step %s",
				errors.Safe(id), errors.Safe(want.String())), eventlog.ErrNotFound)
		}
	}
	if opts.exchange > len(xs) {
		return errclass.Mark(errors.Newf("session %s has %d recorded exchanges, not %d",
			errors.Safe(id), errors.Safe(len(xs)), errors.Safe(opts.exchange)), eventlog.ErrNotFound)
	}
	if len(xs) == 0 && opts.format != "json" {
		return errclass.Mark(errors.Newf("session %s has no recorded exchanges", errors.Safe(id)), eventlog.ErrNotFound)
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	var body bytes.Buffer
	for _, x := range xs {
		if opts.exchange != 0 && x.N != opts.exchange {
			continue
		}
		seq, chunks, has := x.Seq, x.Request.Chunks, true
		if opts.response {
			seq, chunks, has = x.ResponseSeq, x.Response.Chunks, x.ResponseSeq >= 0 && x.Response.Body
			if x.ResponseSeq < 0 {
				seq = x.Seq
			}
		}
		body.Reset()
		if has {
			if err := s.WriteBody(&body, chunks); err != nil {
				return errors.Wrapf(err, "exchange %d", errors.Safe(x.N))
			}
		}
		if red := x.Request.Redacted; red != nil && !opts.response {
			fmt.Fprintf(stderr, "replay: exchange %d: the request was recorded redacted (%d spans replaced by [REDACTED]); these are not the bytes the upstream was sent\n", x.N, red.Spans)
		}
		switch opts.format {
		case "raw":
			if !has {
				return errclass.Mark(errors.Newf("exchange %d has no recorded answer", errors.Safe(x.N)), eventlog.ErrNotFound)
			}
			w.Write(body.Bytes())
		case "text":
			writeRecordedText(w, x, opts.response, has, body.Bytes())
		default:
			b := append([]byte(`{"exchange":`), strconv.Itoa(x.N)...)
			b = append(append(b, `,"seq":`...), strconv.FormatInt(seq, 10)...)
			b = append(b, `,"body":`...)
			if has {
				b = codec.AppendJSONString(b, body.Bytes())
			} else {
				b = append(b, "null"...)
			}
			w.Write(append(b, "}\n"...))
		}
	}
	return w.Flush()
}

// writeRecordedText writes an exchange's request (or answer) for people;
// everything that came from a client or a server is escaped.
func writeRecordedText(w *bufio.Writer, x recorded.Exchange, response, has bool, body []byte) {
	if !response {
		q := x.Request
		fmt.Fprintf(w, "== exchange %d (wire/request at seq %d)  api %s", x.N, x.Seq, printable.Line(q.API))
		if q.Redacted != nil {
			fmt.Fprintf(w, "  redacted: %d spans, not the bytes sent", q.Redacted.Spans)
		}
		fmt.Fprintf(w, "\n%s %s\n", printable.Line(q.Method), printable.Line(q.Path))
		writeFields(w, q.Headers)
	} else {
		if x.ResponseSeq < 0 {
			fmt.Fprintf(w, "== exchange %d: no answer recorded (the gateway stopped before it ended)\n\n", x.N)
			return
		}
		p := x.Response
		fmt.Fprintf(w, "== exchange %d answer (wire/response at seq %d)\nstatus %d", x.N, x.ResponseSeq, p.Status)
		if p.Cut != "" {
			fmt.Fprintf(w, "  cut: %s", printable.Line(p.Cut))
		}
		w.WriteString("\n")
		writeFields(w, p.Headers)
		if !has {
			w.WriteString("\n(no body: no answer came from the upstream)\n\n")
			return
		}
	}
	w.WriteString("\n")
	w.WriteString(printable.Text(string(body)))
	w.WriteString("\n\n")
}

func writeFields(w *bufio.Writer, fs []recorded.Field) {
	for _, f := range fs {
		fmt.Fprintf(w, "%s: %s\n", printable.Line(f.Name), printable.Line(f.Value))
	}
}
