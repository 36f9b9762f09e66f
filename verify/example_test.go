package verify_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sessionlog/sessionlog"
	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/verify"
)

// Verify a stored session end to end: records, chain hash, every rule of
// the log, every step's rebuild and its recorded digest. The session here
// records the digest of the request its step rebuilds to.
func ExampleSession() {
	dir, _ := os.MkdirTemp("", "verify-example")
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
	var evs []codec.Event
	for _, line := range []string{
		`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}`,
		`{"type":"user/message","seq":1,"time":2,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
		`{"type":"step/start","seq":2,"time":3,"data":{"turn":1,"step":1}}`,
		`{"type":"request/header","seq":3,"time":4,"data":{"header":{"system":"Be brief.","config":{"provider":"p","model":"m1"}},"reason":"initial"}}`,
		`{"type":"request/digest","seq":4,"time":5,"data":{"turn":1,"step":1,"sha256":"93c7879b62fe24b9980dbe18899611bc2af2b2df8de537c35e97fe1f52fb3db1"}}`,
		`{"type":"step/end","seq":5,"time":6,"data":{"turn":1,"step":1}}`,
		`{"type":"turn/end","seq":6,"time":7,"data":{"turn":1,"reason":{"kind":"completed"}}}`,
	} {
		ev, err := codec.ParseEvent([]byte(line), codec.Limits{})
		if err != nil {
			panic(err)
		}
		evs = append(evs, ev)
	}
	if err := store.Append(ctx, "s1", evs); err != nil {
		panic(err)
	}

	res, err := verify.Session(ctx, store.(verify.Store), "s1", verify.Options{Strict: true})
	if err != nil {
		panic(err)
	}
	for _, f := range res.Findings {
		fmt.Println(f)
	}
	fmt.Printf("%d events, %d steps, %d digests checked, failed: %v\n", res.Events, res.Steps, res.Digests, res.Failed())
	// Output: 7 events, 1 steps, 1 digests checked, failed: false
}
