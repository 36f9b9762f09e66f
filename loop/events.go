package loop

import (
	"context"

	"github.com/cockroachdb/errors"
	"github.com/sessionlog/sessionlog/codec"

	"github.com/sessionlog/sessionlog/internal/errclass"
)

// The data objects of the events the loop writes, in docs/format.md#event-types's key
// order, in storage form.

func turnStep(turn, step int64) []byte {
	var o codec.Object
	return o.Int("turn", turn).Int("step", step).Bytes()
}

func sourceObj(s Source) []byte {
	var o codec.Object
	o.Str("kind", s.Kind)
	if s.Plugin != "" {
		o.Str("plugin", s.Plugin)
	}
	return o.Bytes()
}

func turnStart(turn int64, trigger string, src Source) []byte {
	var t, o codec.Object
	t.Str("kind", trigger).Value("source", sourceObj(src))
	return o.Int("turn", turn).Value("trigger", t.Bytes()).Bytes()
}

func turnEnd(turn int64, reason []byte) []byte {
	var o codec.Object
	return o.Int("turn", turn).Value("reason", reason).Bytes()
}

func reasonKind(kind string) []byte {
	var o codec.Object
	return o.Str("kind", kind).Bytes()
}

func reasonInterrupted() []byte { return reasonKind("interrupted") }

func reasonError(step int64, message, code string) []byte {
	var o codec.Object
	return o.Str("kind", "error").Int("step", step).Str("message", message).Str("code", code).Bytes()
}

func userMessage(content []byte, src Source) []byte {
	var o codec.Object
	return o.Value("content", content).Value("source", sourceObj(src)).Bytes()
}

func steeringMessage(turn int64, content []byte, src Source) []byte {
	var o codec.Object
	return o.Int("turn", turn).Value("content", content).Value("source", sourceObj(src)).Bytes()
}

func chunkEvent(turn, step int64, chunk []byte) []byte {
	var o codec.Object
	return o.Int("turn", turn).Int("step", step).Value("chunk", chunk).Bytes()
}

func toolCall(turn, step int64, id, name, args string) []byte {
	var o codec.Object
	return o.Int("turn", turn).Int("step", step).Str("callId", id).Str("name", name).Str("arguments", args).Bytes()
}

// toolResultData builds tool/result data; errName "" writes no error.
func toolResultData(turn, step int64, id string, content []byte, isError bool, errName, errCode string) []byte {
	var o codec.Object
	o.Int("turn", turn).Int("step", step).Str("callId", id).Value("content", content).Bool("isError", isError)
	if errName != "" {
		var e codec.Object
		e.Str("name", errName).Str("code", errCode)
		o.Value("error", e.Bytes())
	}
	return o.Bytes()
}

func requestHeader(h []byte, reason string) []byte {
	var o codec.Object
	return o.Value("header", h).Str("reason", reason).Bytes()
}

func requestDigest(turn, step int64, hex string) []byte {
	var o codec.Object
	return o.Int("turn", turn).Int("step", step).Str("sha256", hex).Bytes()
}

// textContent is a content array holding one text block, in storage form.
func textContent(text string) []byte {
	var b codec.Object
	b.Str("type", "text").Str("text", text)
	return codec.Array(b.Bytes())
}

// contentOf converts a content array given as JSON to storage form,
// checking that it is an array (its blocks are checked when the event is
// built).
func contentOf(js []byte) ([]byte, error) {
	mp, err := codec.FromJSON(nil, js, codec.Limits{})
	if err != nil {
		return nil, errors.Wrap(err, "loop: content")
	}
	t, err := codec.NewReader(mp).Next()
	if err != nil || t.Kind != codec.KindArray {
		return nil, errclass.Mark(errors.New("loop: content is not an array"), codec.ErrInvalid)
	}
	return mp, nil
}

// content converts a content array given as JSON to storage form
// (contentOf) and applies the redactor, if any, saying in the log (never
// what) how many spans it replaced in what ("prompt", "tool result", …).
func (l *Loop) content(ctx context.Context, js []byte, what string) ([]byte, error) {
	mp, err := contentOf(js)
	if err != nil {
		return nil, err
	}
	return l.redacted(ctx, mp, what)
}

// redacted applies the redactor, if any, to content in storage form.
func (l *Loop) redacted(ctx context.Context, mp []byte, what string) ([]byte, error) {
	r := l.opts.Redactor
	if r == nil {
		return mp, nil
	}
	out, n, err := r.Value(mp)
	if err != nil {
		return nil, errors.Wrapf(err, "loop: redact the %s", errors.Safe(what))
	}
	if n > 0 {
		l.obs.redacted(ctx, what, n)
		l.obs.log.Info("loop: redacted", "session", l.hdr.ID, "in", what, "spans", n)
	}
	return out, nil
}

// Text returns a content array (JSON) holding one text block.
func Text(s string) []byte {
	out := append([]byte(`[{"type":"text","text":`), codec.AppendJSONString(nil, []byte(s))...)
	return append(out, "}]"...)
}
