package sessionlog_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cockroachdb/errors"

	"github.com/sessionlog/sessionlog"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
)

// Open a bbolt store with the default validation: an append that breaks a
// rule of the log (here a message that replaces history that is not
// there) is refused with the class eventlog.ErrInvalid, and nothing of it
// is written. The same call with a postgres:// URL opens the PostgreSQL
// store.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "sessionlog-example")
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
		`{"type":"user/message","seq":1,"time":1767225600002,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":{"op":"replace","start":0,"end":0},"sourceEventSeqs":[0]}`,
	} {
		ev, err := codec.ParseEvent([]byte(line), codec.Limits{})
		if err != nil {
			panic(err)
		}
		batch = append(batch, ev)
	}
	err = store.Append(ctx, "s1", batch)
	fmt.Println("refused:", errors.Is(err, eventlog.ErrInvalid))
	head, _ := store.Head(ctx, "s1")
	fmt.Println("next seq", head.Next)
	// Output:
	// refused: true
	// next seq 0
}
