// Package sessionlog is the session log of an LLM agent host: an
// append-only event log per conversation, kept so that every request the
// agent loop sends to a model can be rebuilt, byte for byte, from the log
// alone (model-visible ⟺ logged). The normative description is in docs/:
// the formats (docs/format.md), the log's rules (docs/rules.md), the loop,
// the wire, transcripts, the gateway and the command line (docs/README.md).
//
// This root package is the one entry for embedders: Open returns a store
// wired with the default validation (the rebuild fold, docs/rules.md#validation). The
// engine is in its subpackages:
//
//   - codec: the event model. The interchange format (DSH session JSONL),
//     the storage form (an order-preserving msgpack image of each JSON
//     value, so import then export is byte-identical), the record frame
//     with its CRC, sealed frames, and typed views of the fields the
//     engine reads.
//   - keys: the keys of encryption at rest (docs/forgetting.md#encryption-at-rest): a session's data
//     key, the key-encryption keys that wrap it, and the Provider
//     interface a key management service implements.
//   - eventlog: the store's contract. The Store interface (atomic appends
//     with optimistic concurrency, atomic imports, forks, ordered scans
//     and a chain hash per session), its options and error classes; one
//     engine (eventlog/internal/engine) does what every store does alike,
//     and two drivers hold their I/O: eventlog/boltlog, Log on one bbolt
//     file, and eventlog/pglog, the same Store on PostgreSQL, shared by a
//     fleet of hosts (Open takes a postgres:// URL). Package
//     eventlog/eventlogtest is the conformance suite; internal/boltfmt is
//     the one home of the bbolt format (names, records, pages), which
//     salvage reads through too.
//   - header: the request header (system prompt, tools, call config,
//     session prefix) as canonical snapshots and deltas, and their fold.
//   - rebuild: the fold that checks every rule of the log (the surface,
//     the header in force) and rebuilds the request of any step, with its
//     digest.
//   - wire: the bytes a provider receives (docs/wire.md), a pure function of
//     the request and the header in force: the openai-chat and
//     anthropic-messages renderers and their SSE stream translators;
//     wire/chunk, the content-defined chunks in which the recording
//     gateway stores bodies (docs/gateway.md#what-is-recorded).
//   - compact: the token estimator, the compaction gate and the
//     compaction bracket that replaces a span of history by a summary.
//   - loop: the agent loop, which writes the log and sends only requests
//     that rebuild from it.
//   - provider: HTTP providers for the loop over wire's renderers, the
//     only package that speaks to a model.
//   - scenario: the loop driven offline by a scripted model, from a
//     scenario file (or by a live provider).
//   - verify: the end-to-end check of a stored session: records, chain
//     hash, every rule of the log, every step's rebuild and digest.
//   - salvage: copying what still verifies out of a damaged store.
//   - audit: what an audit shows, for logtool and the UI alike: event
//     summaries, a session's step index, the cache report, the diff of
//     two steps.
//   - ui: the read-only audit web UI that logtool serve runs.
//   - fuzz: native fuzz targets for the codec and for rebuild over
//     mutated logs.
//   - stress: the proofs under stress: crash-kill, power cuts, corruption
//     sweep, concurrency (tests only).
//   - transcript: importing Codex rollouts, Claude Code transcripts and
//     Gemini CLI sessions: every source line kept verbatim, the
//     conversation mapped onto the event model.
//   - internal/loggen: a deterministic generator of valid session logs;
//     internal/ssegen: long SSE streams for the wire's benchmarks.
//   - internal/metrictest: a recording OpenTelemetry MeterProvider for
//     tests of the metrics.
//   - cmd/logtool: the command line: import, export, ls, show, stat, fork,
//     replay, verify, diff, cache, serve, run, copy, salvage, demo, keys
//     and gateway.
//   - cmd/logbench: the benchmark report, BENCHMARKS.md.
//   - examples/agent: a small real agent host on Open, loop and provider.
//
// # Floors
//
// The packages stand on floors. Each imports, transitively, only packages
// of the floors below it, or of its own floor where its row in
// floors_test.go names them. TestFloors checks every package against that
// table (go list), along with the outside modules each floor may import
// and testdata/deps.golden, every outside package the module links.
//
//	floor  packages                                    what lives there
//	0      internal/printable, loopback, observe;      leaves, on nothing of the module:
//	       the test support under internal/            any floor may stand on them
//	1      codec                                       the event model
//	2      header, compact                             pure computation over stored values
//	3      rebuild, wire, wire/chunk, wire/recorded    the fold and the request; bodies, stream
//	                                                   translators, the recorded events
//	4      eventlog, eventlog/layout, eventlog/wal,    storage: the Store contract, its drivers
//	       eventlog/pglog, eventlog/eventlogtest,      and their formats; the importers
//	       internal/sessioncache, transcript
//	5      loop, verify, salvage, audit,               what drives or checks a store
//	       internal/atomicfile
//	6      provider, gateway, scenario, sessionlog     what faces the outside
//	7      ui, cmd/logtool, cmd/logbench,              what a person runs
//	       examples/agent, fuzz, stress
//
// Imports on one floor: eventlog stands on eventlog/layout, eventlog/wal
// and internal/sessioncache; eventlog/pglog and eventlog/eventlogtest on
// eventlog; cmd/logtool and cmd/logbench on ui; each test helper on the
// one it drives. Nothing else imports sideways.
//
// What never imports what, beyond the floors:
//
//   - Storage (eventlog and everything under it) never depends on header,
//     compact, rebuild or wire: the rules it validates with are wired in
//     from above, by Open.
//   - provider imports neither eventlog nor rebuild: it sends the request
//     it is handed.
//   - Floors 1 to 3 are pure: no os, net, net/http, time, math/rand or
//     reflect.
//   - codec writes all JSON text: encoding/json only in scenario (which
//     parses its own files), the commands and the example.
//   - Only provider (to a model), gateway (forwarding) and ui (serving)
//     speak HTTP; only the commands read flags; os only in the stores,
//     salvage, provider (the key variable its caller names),
//     internal/atomicfile and the commands.
//   - Test support (the one kind of package that may import testing) is
//     imported only by tests, other test support and floor 7.
//
// A host embeds three things: a store from Open, a loop instance from
// loop.Create (a new session) or loop.Open (an existing one), and a
// provider from provider.New (or any loop.Provider). Package loop's
// Example is a whole host with a scripted model; examples/agent is one
// with a real endpoint.
//
// The quickest way in is the demo: go run ./cmd/logtool demo.
package sessionlog
