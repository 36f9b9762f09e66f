// Package sessioncache holds what every Store keeps per session in memory
// to validate appends in O(events appended) (docs/rules.md#validation): a bounded LRU of
// per-session states (Cache) and the per-session writer locks that make
// an appender see the previous one's effect (Locks). The bbolt Log and
// the PostgreSQL store share it, with the set of ids an Import or Fork
// is staging (Claims), so that the eviction and locking rules live in
// one place. The cache also counts, for both stores, its hits and misses
// and the replays that rebuilt a missed state (Observe, Lookup, Replayed),
// under the names eventlog re-exports as its MetricValidator names.
package sessioncache
