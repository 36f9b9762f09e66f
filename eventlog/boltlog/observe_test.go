package boltlog_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/sessionlog/sessionlog/eventlog"
	"github.com/sessionlog/sessionlog/eventlog/boltlog"
	"github.com/sessionlog/sessionlog/internal/metrictest"
)

// TestMetrics: each of the store's figures moves when its event happens.
func TestMetrics(t *testing.T) {
	ctx := context.Background()
	mp := metrictest.New()
	// The applier logs its rounds at Debug from its own goroutine.
	var logBuf lockedBuffer
	log := slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// A cache of one session: alternating sessions miss and replay.
	l, _ := openLog(t, &eventlog.Options{Metrics: mp, Logger: log, ValidatorCache: 1})

	type figures struct{ commits, events, syncs, hits, misses, replays, replayed float64 }
	read := func() figures {
		return figures{
			commits:  float64(mp.Count(eventlog.MetricCommitDuration)),
			events:   mp.Sum(eventlog.MetricCommitEvents),
			syncs:    float64(mp.Count(boltlog.MetricSyncDuration)),
			hits:     mp.Sum(eventlog.MetricValidatorHits),
			misses:   mp.Sum(eventlog.MetricValidatorMisses),
			replays:  mp.Sum(eventlog.MetricValidatorReplays),
			replayed: mp.Sum(eventlog.MetricValidatorReplayedEvents),
		}
	}
	const secret = "SECRET-PROMPT-7f3a"
	before := read()
	for _, id := range []string{"a", "b"} {
		if err := l.Create(ctx, header(id)); err != nil {
			t.Fatal(err)
		}
	}
	afterCreate := read()
	if afterCreate.commits != before.commits+2 || afterCreate.syncs < before.syncs+1 {
		t.Fatalf("two creates: %+v -> %+v", before, afterCreate)
	}
	if mp.Sum(boltlog.MetricSyncDuration) <= 0 {
		t.Fatalf("fsync time %v after durable commits", mp.Sum(boltlog.MetricSyncDuration))
	}
	// "b" is cached (the last created): an append to it is a hit.
	if err := l.Append(ctx, "b", turnEvents(t, 0, 1)); err != nil {
		t.Fatal(err)
	}
	hit := read()
	if hit.hits != afterCreate.hits+1 || hit.events != afterCreate.events+3 || hit.commits != afterCreate.commits+1 {
		t.Fatalf("append to a cached session: %+v -> %+v", afterCreate, hit)
	}
	// "a" was evicted: a miss, whose replay covers its 0 events (no replay).
	evs := turnEvents(t, 0, 1)
	evs[1] = parse(t, `{"type":"user/message","seq":1,"time":1767225600001,"data":{"content":[{"type":"text","text":"`+secret+`"}],"source":{"kind":"user"}},"surfaceOp":"append"}`)
	if err := l.Append(ctx, "a", evs); err != nil {
		t.Fatal(err)
	}
	miss := read()
	if miss.misses != hit.misses+1 {
		t.Fatalf("append to an evicted session: %+v -> %+v", hit, miss)
	}
	// Back to "b", evicted with 3 stored events: a miss and a replay of 3.
	if err := l.Append(ctx, "b", turnEvents(t, 3, 2)); err != nil {
		t.Fatal(err)
	}
	replay := read()
	if replay.misses != miss.misses+1 || replay.replays != miss.replays+1 || replay.replayed != miss.replayed+3 {
		t.Fatalf("append to an evicted session with history: %+v -> %+v", miss, replay)
	}
	logged := logBuf.String()
	if !strings.Contains(logged, "store opened") {
		t.Fatalf("the logger got no open line:\n%s", logged)
	}
	if strings.Contains(logged, secret) {
		t.Fatalf("user content reached the log:\n%s", logged)
	}
}

// lockedBuffer is a bytes.Buffer that goroutines may write at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
