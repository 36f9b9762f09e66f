package loop_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionlog/sessionlog"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/header"
	"github.com/sessionlog/sessionlog/loop"
	"github.com/sessionlog/sessionlog/redact"
	"github.com/sessionlog/sessionlog/scenario"
)

// agent is the host: the system prompt, the tools and the model per step.
type agent struct{ tools []loop.Tool }

func (a agent) Step(context.Context, int64, int64) (loop.StepSpec, error) {
	return loop.StepSpec{System: "You are terse.", Tools: a.tools,
		Config: header.Config{Provider: "scripted", HasProvider: true, Model: "m1"}}, nil
}

// An agent with two tools, driven by the scripted model: open a store
// with the default validation, create a session, run one turn.
func Example() {
	dir, _ := os.MkdirTemp("", "loop-example")
	defer os.RemoveAll(dir)
	store, err := sessionlog.Open(context.Background(), filepath.Join(dir, "sessions.db"), nil, nil)
	if err != nil {
		panic(err)
	}
	defer store.Close()

	tools := []loop.Tool{
		{Name: "clock", Description: "The time of day.", Parameters: []byte(`{"type":"object"}`),
			Run: func(context.Context, loop.Call) (loop.Result, error) {
				return loop.Result{Content: loop.Text("12:00")}, nil
			}},
		{Name: "echo", Description: "Says its argument back.", Parameters: []byte(`{"type":"object"}`),
			Run: func(_ context.Context, c loop.Call) (loop.Result, error) {
				return loop.Result{Content: loop.Text(c.Arguments)}, nil
			}},
	}
	model := &scenario.Provider{} // a real host uses package provider
	model.SetReplies([][]byte{
		[]byte(`[{"type":"tool-call","id":"c1","name":"clock","arguments":"{}"}]`),
		[]byte(`[{"type":"text","text":"It is noon."}]`),
	})
	ctx := context.Background()
	l, err := loop.Create(ctx, store, "demo", loop.Options{Provider: model, Host: agent{tools}})
	if err != nil {
		panic(err)
	}
	out, err := l.Send(ctx, loop.Text("What time is it?"), loop.User)
	if err != nil {
		panic(err)
	}
	if err := l.Dispose(ctx); err != nil {
		panic(err)
	}
	fmt.Printf("turn %d %s after %d steps; the log holds %d events\n", out.Turn, out.Reason, out.Steps, l.Next())
	// Output: turn 1 completed after 2 steps; the log holds 26 events
}

// seeing is a provider that keeps the last request it was handed.
type seeing struct {
	loop.Provider
	last string
}

func (s *seeing) Stream(ctx context.Context, req *loop.Request) (loop.Stream, error) {
	s.last = string(req.JSON)
	return s.Provider.Stream(ctx, req)
}

// A host that keeps secrets out of the log and away from the model: with
// Options.Redactor, what the user (or a tool) hands the loop is redacted
// before it is logged, and every request is built from the log. The key
// here is made up.
func Example_redactor() {
	dir, _ := os.MkdirTemp("", "loop-example")
	defer os.RemoveAll(dir)
	store, err := sessionlog.Open(context.Background(), filepath.Join(dir, "sessions.db"), nil, nil)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	model := &scenario.Provider{}
	model.SetReplies([][]byte{[]byte(`[{"type":"text","text":"Noted."}]`)})
	seen := &seeing{Provider: model}
	ctx := context.Background()
	l, err := loop.Create(ctx, store, "demo", loop.Options{Provider: seen, Host: agent{}, Redactor: redact.Secrets()})
	if err != nil {
		panic(err)
	}
	if _, err := l.Send(ctx, loop.Text("Deploy with AKIAQ3EXAMPLEKEY7ABC, please."), loop.User); err != nil {
		panic(err)
	}
	if err := l.Dispose(ctx); err != nil {
		panic(err)
	}
	fmt.Println("the model saw the key:", strings.Contains(seen.last, "AKIAQ3EXAMPLEKEY7ABC"))
	it, err := store.Scan(ctx, "demo", 0)
	if err != nil {
		panic(err)
	}
	defer it.Close()
	for {
		ev, err := it.Next()
		if err != nil {
			break
		}
		if m, ok := ev.Data.(*codec.UserMessage); ok {
			fmt.Println("the log holds:", m.Content.Blocks[0].Text)
		}
	}
	// Output:
	// the model saw the key: false
	// the log holds: Deploy with [REDACTED], please.
}
