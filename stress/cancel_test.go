package stress

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/scenario"
	"github.com/sessionlog/sessionlog/verify"
)

// TestCancelAtEveryCommit cancels a turn right after each of the loop's
// commits in turn (the store is the real Log behind a decorator that
// cancels once the chosen batch is stored), with steering and context
// queued when the row says so. Whatever the moment, docs/loop.md#how-turns-end and Send's
// contract hold: the turn ends aborted, Send returns no error, the log is
// whole (step/end and turn/end written, verify clean even when strict),
// whatever was queued reaches the log, and the next turn runs. Found by
// TestCrash's injector, which disposes of loop instances at random moments.
func TestCancelAtEveryCommit(t *testing.T) {
	tests := []struct {
		name string
		// after: cancel once a batch whose first event has this type is
		// stored (the nth such batch, from 1).
		after string
		nth   int
		// steer and inject queue steering and context from the tool.
		steer, inject bool
	}{
		{name: "after turn/start", after: codec.TypeTurnStart, nth: 1},
		{name: "after step/start", after: codec.TypeStepStart, nth: 1},
		{name: "after request/digest", after: codec.TypeRequestDigest, nth: 1},
		{name: "after the assistant message", after: codec.TypeAssistantChunk, nth: 1},
		{name: "after tool/call", after: codec.TypeToolCall, nth: 1},
		{name: "after tool/result", after: codec.TypeToolResult, nth: 1},
		{name: "after tool/result, steering queued", after: codec.TypeToolResult, nth: 1, steer: true},
		{name: "after tool/result, context queued", after: codec.TypeToolResult, nth: 1, inject: true},
		{name: "after step/end", after: codec.TypeStepEnd, nth: 1},
		{name: "after step/end, steering queued", after: codec.TypeStepEnd, nth: 1, steer: true},
		{name: "after step 2's step/start", after: codec.TypeStepStart, nth: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			log, err := boltlog.Open(filepath.Join(t.TempDir(), "sessions.db"), storeOptions(), storeBoltOptions())
			if err != nil {
				t.Fatal(err)
			}
			defer log.Close()
			turnCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			st := &cancellingStore{Log: log, after: tt.after, nth: tt.nth, cancel: cancel}
			var l *loop.Loop
			queuing := loop.Tool{Name: "t", Description: "queues steering or context", Parameters: []byte(`{"type":"object"}`),
				Run: func(context.Context, loop.Call) (loop.Result, error) {
					if tt.steer {
						if err := l.Steer(loop.Text("steer from the tool"), loop.User); err != nil {
							t.Errorf("Steer = %v", err)
						}
					}
					if tt.inject {
						if err := l.Inject(ctx, loop.Text("context from the tool"), loop.Plugin("watch")); err != nil {
							t.Errorf("Inject = %v", err)
						}
					}
					return loop.Result{Content: loop.Text("done")}, nil
				}}
			prov := &hookProvider{}
			l, err = openOrCreate(ctx, st, "s", loop.Options{
				Provider: prov,
				Host: &host{system: "sys", tools: []loop.Tool{queuing},
					config: header.Config{Provider: "p", HasProvider: true, Model: "m"}},
			})
			if err != nil {
				t.Fatal(err)
			}
			prov.p.SetReplies([][]byte{
				[]byte(`[{"type":"tool-call","id":"c1","name":"t","arguments":"{}"}]`),
				[]byte(`[{"type":"tool-call","id":"c2","name":"t","arguments":"{}"}]`),
				[]byte(`[{"type":"text","text":"done"}]`),
			})
			out, err := l.Send(turnCtx, loop.Text("hello"), loop.User)
			if !st.fired {
				t.Fatalf("no %s batch number %d was stored; the row tests nothing", tt.after, tt.nth)
			}
			if err != nil {
				t.Errorf("Send of a turn cancelled after a %s commit = %v, want nil and an aborted outcome", tt.after, err)
			} else if out.Reason != "aborted" {
				t.Errorf("Send outcome %q (code %q: %s), want aborted", out.Reason, out.Code, out.Message)
			}

			// The next turn goes through (a new instance if this one gave
			// up), and the log is whole.
			if err != nil {
				if l, err = openOrCreate(ctx, st, "s", loop.Options{Provider: prov, Host: &host{system: "sys",
					config: header.Config{Provider: "p", HasProvider: true, Model: "m"}}}); err != nil {
					t.Fatal(err)
				}
			}
			prov.p.SetReplies([][]byte{[]byte(`[{"type":"text","text":"ok"}]`)})
			if out, err := l.Send(ctx, loop.Text("again"), loop.User); err != nil || out.Reason != "completed" {
				t.Fatalf("the next Send = %q, %v; want completed, nil", out.Reason, err)
			}
			evs, err := readSession(ctx, log, "s", 0)
			if err != nil {
				t.Fatal(err)
			}
			var ends []string
			steered, injected := false, false
			for i := range evs {
				switch d := evs[i].Data.(type) {
				case *codec.TurnEnd:
					ends = append(ends, d.Reason)
				case *codec.SteeringMessage:
					steered = true
				case *codec.ContextMessage:
					injected = injected || d.Source.Plugin == "watch"
				}
			}
			if fmt.Sprint(ends) != "[aborted completed]" {
				t.Errorf("turn/end reasons %v, want [aborted completed] (events %v)", ends, types(evs))
			}
			if tt.steer && !steered {
				t.Errorf("the queued steering message is not in the log (events %v)", types(evs))
			}
			if tt.inject && !injected {
				t.Errorf("the queued context is not in the log (events %v)", types(evs))
			}
			res, err := verify.Session(ctx, log, "s", verify.Options{Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Findings {
				t.Errorf("verify: %s", f)
			}
		})
	}
}

// cancellingStore is the real Log; once the nth batch whose first event
// has type after is stored, it calls cancel.
type cancellingStore struct {
	*boltlog.Log
	after  string
	nth    int
	cancel context.CancelFunc
	seen   int
	fired  bool
}

func (s *cancellingStore) Append(ctx context.Context, session string, events []codec.Event) error {
	if err := s.Log.Append(ctx, session, events); err != nil {
		return err
	}
	if len(events) > 0 && events[0].Type == s.after {
		if s.seen++; s.seen == s.nth && !s.fired {
			s.fired = true
			s.cancel()
		}
	}
	return nil
}

// TestInjectQueuedInCancelledTurn: context injected while a turn runs is
// queued (Inject returns nil: the host is told it is taken); when the turn
// is then cancelled, during dispatch or while its tools run, Send must
// still end it aborted without an error, and the queued context must reach
// the log (docs/loop.md: queued injections are appended, or become turns of
// their own once no turn runs). Found by TestCrash's injectors.
func TestInjectQueuedInCancelledTurn(t *testing.T) {
	tests := []struct {
		name string
		// inject: when the provider is called for step 1, inject.
		inject bool
		// cancelInTool: cancel while the step's tool runs, not at once.
		cancelInTool bool
	}{
		{name: "inject, then cancel during dispatch", inject: true},
		{name: "inject during dispatch, then cancel while the tool runs", inject: true, cancelInTool: true},
		{name: "cancel during dispatch (control)"},
		{name: "cancel while the tool runs (control)", cancelInTool: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st, err := boltlog.Open(filepath.Join(t.TempDir(), "sessions.db"), storeOptions(), storeBoltOptions())
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			turnCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			prov := &hookProvider{}
			cancelling := loop.Tool{Name: "t", Description: "cancels the turn", Parameters: []byte(`{"type":"object"}`),
				Run: func(context.Context, loop.Call) (loop.Result, error) {
					cancel()
					return loop.Result{Content: loop.Text("done")}, nil
				}}
			l, err := openOrCreate(ctx, st, "s", loop.Options{
				Provider: prov,
				Host: &host{system: "sys", tools: []loop.Tool{cancelling},
					config: header.Config{Provider: "p", HasProvider: true, Model: "m"}},
			})
			if err != nil {
				t.Fatal(err)
			}
			prov.before = func() {
				if tt.inject {
					if err := l.Inject(ctx, loop.Text("queued while the turn runs"), loop.Plugin("watch")); err != nil {
						t.Errorf("Inject during the turn = %v, want nil", err)
					}
				}
				if !tt.cancelInTool {
					cancel()
				}
			}
			prov.p.SetReplies([][]byte{
				[]byte(`[{"type":"tool-call","id":"c1","name":"t","arguments":"{}"}]`),
				[]byte(`[{"type":"text","text":"never asked"}]`),
			})
			out, err := l.Send(turnCtx, loop.Text("hello"), loop.User)
			if err != nil {
				t.Errorf("Send of a cancelled turn = %v, want a nil error and an aborted outcome", err)
			}
			if out.Reason != "aborted" {
				t.Errorf("Send outcome %q, want aborted", out.Reason)
			}

			// The next turn, with a live context, must go through; by its
			// end, the injected context must be in the log.
			prov.before = nil
			prov.p.SetReplies([][]byte{[]byte(`[{"type":"text","text":"ok"}]`)})
			if out, err := l.Send(ctx, loop.Text("again"), loop.User); err != nil || out.Reason != "completed" {
				t.Fatalf("the next Send = %q, %+v; want completed, nil", out.Reason, err)
			}
			evs, err := readSession(ctx, st, "s", 0)
			if err != nil {
				t.Fatal(err)
			}
			injected := 0
			for i := range evs {
				if cm, ok := evs[i].Data.(*codec.ContextMessage); ok && cm.Source.Plugin == "watch" {
					injected++
				}
			}
			want := 0
			if tt.inject {
				want = 1
			}
			if injected != want {
				t.Errorf("the log holds %d injected context messages, want %d: an Inject that returned nil was lost (events: %v)", injected, want, types(evs))
			}
			res, err := verify.Session(ctx, st, "s", verify.Options{Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Findings {
				t.Errorf("verify: %s", f)
			}
		})
	}
}

// hookProvider is the scripted model with a hook run before each answer.
type hookProvider struct {
	p      scenario.Provider
	before func()
}

func (h *hookProvider) Stream(ctx context.Context, req *loop.Request) (loop.Stream, error) {
	if h.before != nil {
		h.before()
	}
	return h.p.Stream(ctx, req)
}
