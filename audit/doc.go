// Package audit computes what people look at when they audit a session:
// the one-line summary of an event, the index of a session's steps with
// their digests, the cache report (how many bytes of each request a
// provider's prompt cache could reuse, and why the shared prefix broke)
// and the diff between the requests of two steps; CompareTranscript sets
// a session imported from an agent's transcript against the session the
// recording gateway recorded of the same conversation (logtool compare),
// and SessionProvenance says where an imported session's requests come
// from, for the notes beside them. A session the
// recording gateway recorded (Recorded) has its cache report computed on
// its recorded request bodies instead, one row per exchange
// (docs/gateway.md#cache-audit), through package wire/recorded and transcript.Prefix. logtool's show, cache
// and diff print them as text or JSON lines, and the web UI (package ui)
// renders them as pages and serves them under /api/; both use the values
// and JSON encoders of this package, so the two never disagree.
//
// Everything here reads a store through the rebuild Builder, one event at
// a time: memory is bounded by a session's surface, and a window of a long
// session (a page of the cache report, one step, two steps to diff) costs
// one digest-only fold of the log up to it plus the requests it shows
// (rebuild.BuilderOptions.Keep). Nothing is written, and nothing from the
// log goes into an error message: errors name sessions, steps and seqs.
//
// It sits on floor 5 of DESIGN.md: it imports codec, header, compact,
// rebuild, wire/recorded, eventlog and transcript, and is imported by ui
// and the commands.
package audit
