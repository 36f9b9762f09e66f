package salvage_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/rebuild"
	"github.com/sessionlog/sessionlog/salvage"
)

// Salvage a store into a new one and print the report, as logtool salvage
// does.
func ExampleInto() {
	dir, err := os.MkdirTemp("", "salvage-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "sessions.db")

	// A store with one session of two events.
	l, err := boltlog.Open(path, &eventlog.Options{NewValidator: rebuild.NewValidator}, nil)
	if err != nil {
		panic(err)
	}
	var evs []codec.Event
	for _, line := range []string{
		`{"type":"turn/start","seq":0,"time":2,"data":{"turn":1}}`,
		`{"type":"turn/end","seq":1,"time":3,"data":{"turn":1,"reason":{"kind":"completed"}}}`,
	} {
		ev, err := codec.ParseEvent([]byte(line), codec.Limits{})
		if err != nil {
			panic(err)
		}
		evs = append(evs, ev)
	}
	if _, err := l.Import(context.Background(), codec.NewSessionHeader("s1", 1, "", "", 0), &sliceSource{evs: evs}); err != nil {
		panic(err)
	}
	if err := l.Close(); err != nil {
		panic(err)
	}

	st, err := salvage.Open(path, nil)
	if err != nil {
		panic(err)
	}
	defer st.Close()
	rep, err := salvage.Into(context.Background(), st, filepath.Join(dir, "new.db"), nil)
	if err != nil {
		panic(err)
	}
	for _, s := range rep.Sessions {
		fmt.Println(s.String())
	}
	fmt.Println(rep.Summary())
	fmt.Println("damaged:", rep.Damaged())
	// Output:
	// s1 ok: copied 2 events
	// salvage: 1 session: 1 copied whole, 0 damaged, 0 lost; 2 events copied, 0 lost
	// damaged: false
}
