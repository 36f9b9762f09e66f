// Command logbench measures, in one run, the performance figures of
// sessionlog against their baselines, prints them as tables with ratios,
// and writes them with a description of the machine to BENCHMARKS.md
// (docs/cli.md):
//
//   - durable append throughput of the store (one session with one and
//     with 100 events per commit, 64 concurrent sessions with one event
//     per commit, sharing commits), each against one goroutine writing
//     ~1 KB JSON lines to a JSONL file with an fsync after every line;
//   - verify time per event for realistic generated sessions of 1k, 10k
//     and 100k events, and against the naive rebuild that folds the log
//     from scratch for every step;
//   - the codec against encoding/json, decoding and encoding a typical
//     assistant/message and assistant/chunk;
//   - bytes on disk per event against the JSONL line, for each generated
//     session and for the whole DSH corpus (../shared/testdata/dsh, read
//     at run time) imported into one store;
//   - the peak heap in use while replaying each session with every step's
//     full request;
//   - the wire (docs/wire.md): rendering a step's request into each provider
//     API's body against building that request from the log, at 1 KB and
//     100 KB (the render must stay linear in the request), and the stream
//     translators' throughput on long generated SSE answers, by the wall
//     clock and by CPU time;
//   - with -pg URL, the PostgreSQL store (package pglog): durable appends
//     at 1, 64 and 256 concurrent sessions, one event per commit, against
//     the bbolt store and the JSONL baseline, with p50 and p99 latency, and
//     the scan throughput of the largest session against bbolt; in a
//     schema of its own, dropped at the end;
//   - the time of each page of the audit UI (package ui, logtool serve)
//     on the largest session, served in process through the whole
//     handler, against verify.Session of the same session;
//   - the audit UI's resident memory (section uimem): a server process
//     (logbench itself, serving as logtool serve does) over a store with
//     a 50 MB event, 20 clients at once on each page that reads it, its
//     peak resident set against the 512 MiB the issue allows;
//   - the recording gateway's storage (section gateway): a 50-request
//     session shaped like Claude Code's and one like Codex's through an
//     in-process gateway, each step answered with the API's own stream:
//     the store's StoredBytes ÷ the bytes sent and answered, against
//     issue 20's 0.08; and the gateway under load (same section): the
//     time to the first answer byte and exchanges per second with 1
//     client, 64 at once, and 64 pausing between exchanges, straight to a
//     local upstream and through a gateway over a durable store, with the
//     gateway's request-append latency, the store's commits and the CPU
//     per exchange; and the resident memory of a gateway process of its
//     own (logbench running it as logtool gateway does) while 64 clients
//     each stream a 20 MB answer;
//   - redaction (section redact): redact.Redactor.Event over every event
//     of the DSH corpus, as redact --all runs it, with the ready matchers
//     and with --match patterns (a literal, a case-folded literal, none),
//     in MB/s of event content by the wall clock (interleaved with
//     decoding the same events) and by CPU time, against issue 22's
//     50 MB/s.
//
// Usage:
//
//	go run ./cmd/logbench [-o BENCHMARKS.md] [-rounds N] [-round-time 2s] [-dir DIR] [-quick] [-pg URL]
//
// -o names the report file ("-": print only); -rounds the number of
// rounds each figure is the median of; -round-time the length of one
// durable round of one mode; -dir where the stores and JSONL files are
// written (the disk under test; default the system temp directory);
// -quick runs small sizes and short rounds, as a smoke test; -pg (default
// $LOGBENCH_PG) names the PostgreSQL server of the PostgreSQL section,
// which is "not measured" without it.
//
// # Method
//
// The machine this runs on is shared and its disk is noisy: the same fsync
// loop can run ten times faster or slower from one minute to the next.
// Every figure is therefore the median of several rounds, and every ratio
// is computed pair by pair: inside one round, the baseline and ours run
// interleaved in short alternating slices (baseline first), so that a
// burst of load from other processes weighs on both alike; their ratio is
// taken over the round, and the report gives the median of those
// per-round ratios with their range. The ratios are the figures to trust;
// the absolute numbers say what this machine did during this run.
//
// The report goes to stdout as it is written to the file; progress goes
// to stderr. Exit codes: 0 ok, 1 a measurement failed, 2 usage.
package main
