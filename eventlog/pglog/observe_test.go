package pglog_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sessionlog/sessionlog/codec"
	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/eventlogtest"
	"github.com/sessionlog/sessionlog/eventlog/pglog"
	"github.com/sessionlog/sessionlog/internal/metrictest"
	"github.com/sessionlog/sessionlog/internal/pgtest"
)

// secretNote is an event whose data is a secret that must reach no log.
func secretNote(t testing.TB, seq int64, secret string) codec.Event {
	t.Helper()
	ev, err := codec.ParseEvent([]byte(fmt.Sprintf(`{"type":"x/note","seq":%d,"time":%d,"data":{"text":%q}}`, seq, 1000+seq, secret)), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// withPassword returns u with a password in it; the server trusts
// loopback, so it is sent but never checked.
func withPassword(t *testing.T, u, password string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	p.User = url.UserPassword(p.User.Username(), password)
	return p.String()
}

// TestMetrics: each of the store's figures moves when its event happens,
// under the same names as the bbolt store's, and the log carries neither
// user content nor the connection password.
func TestMetrics(t *testing.T) {
	ctx := context.Background()
	u, _ := pgtest.Schema(t)
	const secret, password = "SECRET-PROMPT-9c1e", "SECRET-PASSWORD-4b7d"
	mp := metrictest.New()
	var logBuf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// A cache of one session: alternating sessions miss and replay.
	s := openAt(t, withPassword(t, u, password), eventlog.Options{Metrics: mp, Logger: log, ValidatorCache: 1,
		NewValidator: eventlogtest.NewValidator})

	type figures struct{ commits, txs, events, roundTrips, hits, misses, replays, replayed float64 }
	read := func() figures {
		return figures{
			commits:    float64(mp.Count(eventlog.MetricCommitDuration)),
			txs:        float64(mp.Count(eventlog.MetricCommitEvents)),
			events:     mp.Sum(eventlog.MetricCommitEvents),
			roundTrips: float64(mp.Count(pglog.MetricRoundTrip)),
			hits:       mp.Sum(eventlog.MetricValidatorHits),
			misses:     mp.Sum(eventlog.MetricValidatorMisses),
			replays:    mp.Sum(eventlog.MetricValidatorReplays),
			replayed:   mp.Sum(eventlog.MetricValidatorReplayedEvents),
		}
	}
	before := read()
	for _, id := range []string{"a", "b"} {
		if err := s.Create(ctx, codec.NewSessionHeader(id, 1, "", "", 0)); err != nil {
			t.Fatal(err)
		}
	}
	created := read()
	if created.commits != before.commits+2 || created.txs < before.txs+1 || created.roundTrips < before.roundTrips+1 ||
		created.events != before.events {
		t.Fatalf("two creates: %+v -> %+v", before, created)
	}
	if mp.Sum(pglog.MetricRoundTrip) <= 0 || mp.Sum(eventlog.MetricCommitDuration) <= 0 {
		t.Fatalf("round trip %vs, commit %vs after two commits",
			mp.Sum(pglog.MetricRoundTrip), mp.Sum(eventlog.MetricCommitDuration))
	}
	// "b" is cached (the last created): an append to it is a hit.
	if err := s.Append(ctx, "b", []codec.Event{note(t, 0), note(t, 1), note(t, 2)}); err != nil {
		t.Fatal(err)
	}
	hit := read()
	if hit.hits != created.hits+1 || hit.misses != created.misses || hit.events != created.events+3 ||
		hit.commits != created.commits+1 || hit.txs != created.txs+1 || hit.roundTrips != created.roundTrips+1 {
		t.Fatalf("append to a cached session: %+v -> %+v", created, hit)
	}
	// "a" was evicted: a miss, with no stored events to replay.
	if err := s.Append(ctx, "a", []codec.Event{note(t, 0), secretNote(t, 1, secret)}); err != nil {
		t.Fatal(err)
	}
	miss := read()
	if miss.misses != hit.misses+1 || miss.replays != hit.replays || miss.events != hit.events+2 {
		t.Fatalf("append to an evicted empty session: %+v -> %+v", hit, miss)
	}
	// Back to "b", evicted with 3 stored events: a miss and a replay of 3.
	if err := s.Append(ctx, "b", []codec.Event{note(t, 3)}); err != nil {
		t.Fatal(err)
	}
	replay := read()
	if replay.misses != miss.misses+1 || replay.replays != miss.replays+1 || replay.replayed != miss.replayed+3 {
		t.Fatalf("append to an evicted session with history: %+v -> %+v", miss, replay)
	}
	// A refused append is timed too, and commits nothing.
	if err := s.Append(ctx, "b", []codec.Event{note(t, 9)}); err == nil {
		t.Fatal("append at a wrong seq succeeded")
	}
	refused := read()
	if refused.commits != replay.commits+1 || refused.txs != replay.txs || refused.events != replay.events {
		t.Fatalf("a refused append: %+v -> %+v", replay, refused)
	}
	if !bytes.Contains(logBuf.Bytes(), []byte("pglog: store opened")) {
		t.Fatalf("the logger got no open line:\n%s", logBuf.String())
	}
	for _, leak := range []string{secret, password} {
		if bytes.Contains(logBuf.Bytes(), []byte(leak)) {
			t.Fatalf("%s reached the log:\n%s", leak, logBuf.String())
		}
	}
}

// TestRetryMetric: a write transaction that the server fails with a
// serialization failure (40001) is run again and counted by its SQLSTATE.
// Another connection holds the session row's lock while the store's
// SERIALIZABLE append waits for it, then commits a change of that row:
// the append's update then cannot serialize.
func TestRetryMetric(t *testing.T) {
	ctx := context.Background()
	u, _ := pgtest.Schema(t)
	mp := metrictest.New()
	s := openAt(t, u+"&default_transaction_isolation=serializable", eventlog.Options{Metrics: mp, Unvalidated: true})
	if err := s.Create(ctx, codec.NewSessionHeader("s", 1, "", "", 0)); err != nil {
		t.Fatal(err)
	}
	serializationRetry(t, u, func() error { return s.Append(ctx, "s", []codec.Event{note(t, 0)}) })
	if got := mp.SumWith(pglog.MetricRetries, "sqlstate", "40001"); got != 1 {
		t.Fatalf("retries with sqlstate 40001 = %v, want 1 (all retries: %v)", got, mp.Sum(pglog.MetricRetries))
	}
	if got := mp.Count(pglog.MetricRoundTrip); got < 3 { // create, failed append, retried append
		t.Fatalf("%d round trips, want at least 3", got)
	}
	if tx, w := s.CommitStats(); tx != w+1 {
		t.Fatalf("CommitStats = %d transactions, %d writes: want one rerun", tx, w)
	}
}

// serializationRetry runs write, an append to session "s" of the store at
// u, while another connection holds the row of "s" locked, and commits
// that connection's update of the row once write waits for the lock.
func serializationRetry(t *testing.T, u string, write func() error) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `UPDATE sessionlog_sessions SET next = next WHERE id = 's'`); err != nil {
		t.Fatal(err)
	}
	var holder int
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&holder); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- write() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var waiting bool
		err := tx.QueryRow(ctx, `SELECT count(*) > 0 FROM pg_stat_activity
			WHERE $1 = ANY(pg_blocking_pids(pid))`, holder).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the store's write never waited for the row lock")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the write after a serialization failure: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the write did not finish after the lock was released")
	}
}

// TestNilOptionsSilent: with no Logger and no Metrics the store writes to
// no log, not even slog's default, on every path that would log or
// count: open, commits, a replay, a rerun transaction, a refused append.
func TestNilOptionsSilent(t *testing.T) {
	var logBuf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })
	ctx := context.Background()
	u, _ := pgtest.Schema(t)
	s := openAt(t, u+"&default_transaction_isolation=serializable",
		eventlog.Options{NewValidator: eventlogtest.NewValidator, ValidatorCache: 1})
	for _, id := range []string{"s", "t"} {
		if err := s.Create(ctx, codec.NewSessionHeader(id, 1, "", "", 0)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Append(ctx, "t", []codec.Event{note(t, 0)}); err != nil {
		t.Fatal(err)
	}
	serializationRetry(t, u, func() error { return s.Append(ctx, "s", []codec.Event{note(t, 0)}) })
	if err := s.Append(ctx, "t", []codec.Event{note(t, 1)}); err != nil { // a miss and a replay
		t.Fatal(err)
	}
	if err := s.Append(ctx, "t", []codec.Event{note(t, 7)}); err == nil {
		t.Fatal("append at a wrong seq succeeded")
	}
	if tx, w := s.CommitStats(); tx <= w {
		t.Fatalf("CommitStats = %d transactions, %d writes: the rerun did not happen", tx, w)
	}
	if logBuf.Len() != 0 {
		t.Fatalf("a store with no Logger logged:\n%s", logBuf.String())
	}
}
