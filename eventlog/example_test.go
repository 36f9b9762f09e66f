package eventlog_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sessionlog/sessionlog"
	"github.com/sessionlog/sessionlog/codec"
)

// Append one turn to a new session as an atomic batch, then scan it back.
// The store comes from sessionlog.Open, which validates with the rebuild
// fold; boltlog.Open with Options.NewValidator does the same by hand.
func Example_appendAndScan() {
	dir, _ := os.MkdirTemp("", "eventlog-example")
	defer os.RemoveAll(dir)
	store, err := sessionlog.Open(context.Background(), filepath.Join(dir, "sessions.db"), nil, nil)
	if err != nil {
		panic(err)
	}
	defer store.Close()

	ctx := context.Background()
	if err := store.Create(ctx, codec.NewSessionHeader("s1", 1767225600000, "/work", "", 0)); err != nil {
		panic(err)
	}
	var batch []codec.Event
	for _, line := range []string{
		`{"type":"turn/start","seq":0,"time":1767225600001,"data":{"turn":1}}`,
		`{"type":"user/message","seq":1,"time":1767225600002,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
		`{"type":"turn/end","seq":2,"time":1767225600003,"data":{"turn":1,"reason":{"kind":"completed"}}}`,
	} {
		ev, err := codec.ParseEvent([]byte(line), codec.Limits{})
		if err != nil {
			panic(err)
		}
		batch = append(batch, ev)
	}
	// All or nothing, durable when Append returns.
	if err := store.Append(ctx, "s1", batch); err != nil {
		panic(err)
	}

	it, err := store.Scan(ctx, "s1", 0)
	if err != nil {
		panic(err)
	}
	defer it.Close()
	for {
		ev, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		fmt.Println(ev.Seq, ev.Type)
	}
	head, _ := store.Head(ctx, "s1")
	fmt.Println("next seq", head.Next, "turns", head.Turns)
	// Output:
	// 0 turn/start
	// 1 user/message
	// 2 turn/end
	// next seq 3 turns 1
}
