package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sessionlog/sessionlog/internal/pgtest"
)

// TestStandbyReads: the read commands work against a hot standby, a
// streaming replica of a primary of the test's own (pgtest.Cluster),
// through a URL that accepts a read-only server (target_session_attrs=any
// naming the standby, or prefer-standby naming both): ls, stat, verify,
// export, show and replay print there what they print on the primary once
// the standby has replayed its writes (stat of the store names the URL it
// was given), and serve serves the session list
// and a session's pages. A write command against the standby fails,
// saying the server is read-only, and writes nothing.
func TestStandbyReads(t *testing.T) {
	primary := pgtest.NewCluster(t)
	standby := primary.Standby(t, "standby1")
	primary.WaitStandby(t, "standby1", "async")
	pu := primary.URL()
	mustRunArgs(t, "--db", pu, "import", "testdata/import/basic.jsonl")
	mustRunArgs(t, "--db", pu, "run", "testdata/scenarios/audit.json", "--session", "audit-1")
	primary.WaitReplayed(t, standby)

	urls := map[string]string{
		"standby":        standby.URL() + "?target_session_attrs=any",
		"prefer-standby": fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/postgres?target_session_attrs=prefer-standby", primary.Port, standby.Port),
	}
	reads := [][]string{
		{"ls"},
		{"stat"},
		{"stat", "audit-1"},
		{"verify"},
		{"verify", "audit-1", "--strict"},
		{"export", "basic-1"},
		{"show", "audit-1"},
		{"replay", "audit-1"},
	}
	for name, u := range urls {
		for _, args := range reads {
			t.Run(name+"/"+strings.Join(args, " "), func(t *testing.T) {
				want := withoutStore(mustRunArgs(t, append([]string{"--db", pu}, args...)...))
				got := withoutStore(mustRunArgs(t, append([]string{"--db", u}, args...)...))
				if got != want {
					t.Errorf("on the standby:\n%s\non the primary:\n%s", got, want)
				}
			})
		}
	}

	ro := urls["standby"]
	before := mustRunArgs(t, "--db", ro, "ls")
	code, _, errOut := runArgs(t, "--db", ro, "import", "--id", "new-1", "testdata/import/basic.jsonl")
	if code == exitOK || !strings.Contains(errOut, "read-only") {
		t.Errorf("import through the standby = exit %d\n%s", code, errOut)
	}
	if after := mustRunArgs(t, "--db", pu, "ls"); after != before {
		t.Errorf("a refused import changed the store:\n%s\nwas\n%s", after, before)
	}

	// serve, on a free port, until its context ends.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- runEnv(ctx, pgEnv(), []string{"--db", ro, "serve", "--addr", "127.0.0.1:0"}, &stdout, &stderr)
	}()
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == ""; {
		if s := stdout.String(); strings.HasSuffix(s, "/\n") {
			base = strings.TrimSuffix(strings.TrimSpace(s), "/")
			break
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d early:\n%s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve printed no URL within 30 s:\n%s", stderr.String())
		}
	}
	for _, p := range []string{"/", "/s/audit-1/cache"} {
		res, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "audit-1") {
			t.Errorf("GET %s from serve on the standby = %d:\n%.400s", p, res.StatusCode, body)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("serve exited %d:\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop with its context")
	}
}

// withoutStore drops the line of stat's output that names the store.
func withoutStore(out string) string {
	var keep []string
	for _, l := range strings.SplitAfter(out, "\n") {
		if !strings.HasPrefix(l, "store ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}
