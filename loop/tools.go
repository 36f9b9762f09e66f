package loop

import (
	"context"
	"fmt"

	"github.com/sessionlog/sessionlog/codec"
)

// runTools runs the step's tool calls in order: [tool/call] committed
// before the tool runs, [tool/result] after. A tool that fails, panics or
// does not exist gives an error result and the turn goes on; a
// cancellation gives every call without a result an aborted one, then
// step/end, and ends the turn (docs/loop.md#how-turns-end).
func (l *Loop) runTools(ctx context.Context, turn, step int64, tools []Tool, calls []call) (*ending, error) {
	for i, c := range calls {
		if e := l.cancelled(ctx); e != nil {
			return e, l.abortCalls(ctx, turn, step, calls[i:], -1)
		}
		b := l.batch()
		callSeq := b.add(codec.TypeToolCall, toolCall(turn, step, c.id, c.name, c.args), codec.SurfaceOp{}, nil)
		if err := b.commit(ctx); err != nil {
			return nil, err
		}
		res, errName, errCode := runTool(ctx, tools, c)
		if e := l.cancelled(ctx); e != nil {
			return e, l.abortCalls(ctx, turn, step, calls[i:], callSeq)
		}
		content, err := contentOf(res.Content)
		if err != nil {
			content, errName, errCode = textContent("The tool returned content that is not a content-block array."), "InvalidResultError", "invalid-result"
			res.IsError = true
		}
		if red, err := l.redacted(ctx, content, "tool result"); err == nil {
			content = red
		} else { // never logged unredacted
			content, errName, errCode = textContent("The tool result could not be redacted."), "InvalidResultError", "invalid-result"
			res.IsError = true
		}
		b = l.batch()
		b.add(codec.TypeToolResult, toolResultData(turn, step, c.id, content, res.IsError, errName, errCode),
			codec.SurfaceOp{Kind: codec.OpAppend}, []int64{callSeq})
		if b.err != nil { // blocks the log cannot hold
			b = l.batch()
			b.add(codec.TypeToolResult, toolResultData(turn, step, c.id,
				textContent("The tool returned content blocks the log cannot hold."), true, "InvalidResultError", "invalid-result"),
				codec.SurfaceOp{Kind: codec.OpAppend}, []int64{callSeq})
		}
		if err := b.commit(ctx); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// runTool runs one call, turning errors and panics into error results.
func runTool(ctx context.Context, tools []Tool, c call) (res Result, errName, errCode string) {
	var t *Tool
	for i := range tools {
		if tools[i].Name == c.name {
			t = &tools[i]
			break
		}
	}
	if t == nil || t.Run == nil {
		return Result{Content: Text(fmt.Sprintf("No tool named %q is available.", c.name)), IsError: true},
			"UnknownToolError", "unknown-tool"
	}
	defer func() {
		if r := recover(); r != nil {
			res = Result{Content: Text(fmt.Sprintf("The tool panicked: %v", r)), IsError: true}
			errName, errCode = "PanicError", "panic"
		}
	}()
	res, err := t.Run(ctx, Call{ID: c.id, Name: c.name, Arguments: c.args})
	if err != nil {
		return Result{Content: Text(err.Error()), IsError: true}, "ToolError", "tool-error"
	}
	if res.Content == nil {
		res.Content = []byte(`[]`)
	}
	return res, "", ""
}

// abortCalls writes an aborted result for each call without one (the
// first of which may have a logged tool/call at callSeq), then step/end,
// as one batch.
func (l *Loop) abortCalls(ctx context.Context, turn, step int64, calls []call, callSeq int64) error {
	b := l.batch()
	for i, c := range calls {
		var sources []int64
		if i == 0 && callSeq >= 0 {
			sources = []int64{callSeq}
		}
		b.add(codec.TypeToolResult, toolResultData(turn, step, c.id, textContent("The tool call was aborted."), true, "AbortError", "aborted"),
			codec.SurfaceOp{Kind: codec.OpAppend}, sources)
	}
	b.add(codec.TypeStepEnd, turnStep(turn, step), codec.SurfaceOp{}, nil)
	return b.commit(ctx)
}
