package eventlog

import "github.com/sessionlog/sessionlog/internal/sessioncache"

// Instrument names of the metrics every store records (Options.Metrics);
// each driver adds its own (boltlog's MetricSyncDuration, pglog's
// MetricRoundTrip, …). Durations are in seconds.
const (
	// MetricCommitDuration: one Create or Append, from the call to its
	// durable answer (validation, queueing and the group commit).
	MetricCommitDuration = "sessionlog.store.commit.duration"
	// MetricCommitEvents: the events written by one group commit (bbolt:
	// one write-ahead log record; PostgreSQL: one transaction): the sum
	// over the writes it batched.
	MetricCommitEvents = "sessionlog.store.commit.events"
	// MetricValidatorHits and MetricValidatorMisses count the lookups of
	// a session's validation state in the cache; MetricValidatorReplays
	// counts the misses that rebuilt it by replaying the stored events,
	// and MetricValidatorReplayedEvents the events they replayed. The
	// cache both stores share records them (internal/sessioncache).
	MetricValidatorHits           = sessioncache.MetricHits
	MetricValidatorMisses         = sessioncache.MetricMisses
	MetricValidatorReplays        = sessioncache.MetricReplays
	MetricValidatorReplayedEvents = sessioncache.MetricReplayedEvents
)
