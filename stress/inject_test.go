package stress

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/scenario"
	"github.com/sessionlog/sessionlog/verify"
)

// TestInjectQueuedInCancelledTurn: context injected while a turn runs is
// queued (Inject returns nil: the host is told it is taken); when the turn
// is then cancelled, during dispatch or while its tools run, Send must
// still end it aborted without an error, and the queued context must reach
// the log (SPEC §7: queued injections are appended, or become turns of
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
			st, err := eventlog.Open(filepath.Join(t.TempDir(), "sessions.db"), storeOptions())
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
			l, err := loop.Open(ctx, st, "s", loop.Options{
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
