// Package gateway is the recording gateway of docs/gateway.md: an HTTP handler
// that sits between an agent (Claude Code, Codex, any client of the
// Anthropic Messages, OpenAI Chat Completions or OpenAI Responses API)
// and its model provider, forwards every request and answer byte for
// byte, and records both in a store — the request before its first byte
// goes upstream. logtool gateway runs it.
//
// # Forwarding
//
// The upstream receives the client's method, path, query, headers and
// body unchanged, except Host (the upstream's), the hop-by-hop headers
// (Connection and those it names, Keep-Alive, Proxy-*, TE, Trailer,
// Transfer-Encoding, Upgrade) and Accept-Encoding, which is "identity" so
// that what is recorded is the answer's text (the client's own value is
// recorded). No header is added (no Via, no X-Forwarded-*, not even Go's
// User-Agent). The client receives the upstream's status, headers and body
// unchanged, each read flushed as it arrives. Redirects are not followed.
// Connecting is bounded by DialTimeout, the wait for the answer to start
// by FirstByteTimeout, the silence between two reads by IdleTimeout.
//
// Upstreams: with one, every request goes there. With several, a first
// path segment naming one selects it (and is dropped); else a request with
// an anthropic-version header or a path under /v1/messages goes to the
// upstream named "anthropic", any other to the one named "openai", else to
// the first. So ANTHROPIC_BASE_URL=http://127.0.0.1:PORT and
// OPENAI_BASE_URL=http://127.0.0.1:PORT/v1 work through one gateway.
//
// # Recording
//
// POST …/v1/messages (anthropic-messages), …/chat/completions
// (openai-chat) and …/responses (openai-responses) are recorded; other
// requests are forwarded unrecorded and counted (Options.RecordAll
// records them too, as api "other"). A recorded request's body is read
// whole (at most MaxBody, else 413 and nothing is forwarded), cut into
// content-defined chunks (package wire/chunk), and its session's new
// chunks and its wire/request are appended in one atomic append; only
// when the store has acknowledged it does the request go upstream. The
// answer, which no later body repeats, is not cut by content: each piece
// of 64 KiB (chunk.Piece) is appended as one wire/chunk while it streams,
// and the last with its wire/response when it ends, whole or cut (by the
// client, the upstream, a timeout or a shutdown). An answer is never held
// whole: an exchange holds its unfinished piece and the runs of seqs that
// name its pieces. (MemoryLimit is the soft memory limit, 160 MiB, that
// logtool gateway sets: 64 clients streaming 20 MB answers each peaked at
// 214–219 MB resident, 332 MB without it.) The events (package wire/recorded defines them):
//
//	session gw-<16 hex>   header: {"gateway":{"upstream":NAME,"agentSession":ID,"from":HEADER,"api":API,"root":ROOT}}
//	│                             (or {"upstream":NAME,"run":RUN,…} without an agent id)
//	├── wire/chunk      request chunks the session does not hold yet
//	├── wire/request    {api, method, path, headers, chunks: [[SEQ,N]…], size, digest}
//	├── mapped events   the request's (turn/start, user/message, tool/result,
//	│                   step/end, step/start, request/header …), same append
//	├── wire/chunk …    the answer, a 64 KiB piece at a time while it streams
//	├── wire/response   {request: SEQ, status, headers, chunks|null, size, digest, streamed, cut?}
//	└── mapped events   the answer's (assistant/message, tool/call, step/end,
//	                    turn/end), in the same append
//
// The mapping is package transcript's (Lane.MapRequest, NewAnswer,
// Lane.MapAnswer), each mapped event with "origin":{"format":"gateway",
// "seq":N}, N its exchange's wire/request; the request's are mapped with
// the wire/request's seq and time, the answer's with the wire/response's,
// so verify re-runs the mapping over the recorded bytes and compares. A
// body the mapping refuses (not of the API's shape) is recorded as bytes
// alone, and so are mapped events the store refuses (the lane is then
// read back from the store); Stats counts both as Unmapped. The answer is
// read by the mapping as it streams; it keeps the finished blocks, not the
// stream, and no more than transcript.MaxStreamed (8 MiB) of it: a longer
// answer's turn ends with an error there (its bytes are all recorded).
// Mapping adds about 0.1 ms to the first answer byte (p50 1.54 ms against
// 1.45 ms unmapped, 0.21 ms direct, Claude-Code-shaped bodies, fsync
// included).
//
// One writer per session serialises its appends, and maps one exchange
// at a time in the order they are appended.
//
// Headers are recorded from the allowlists of docs/gateway.md#running-it (and
// Options.RecordHeaders); authorization, x-api-key, x-goog-api-key,
// proxy-authorization and cookies never are, and cannot be added. Query
// parameters that may hold a key (key, api_key, access_token, …) are
// recorded with the value "redacted".
//
// # Redaction
//
// With Options.Redactor (docs/forgetting.md#redaction, package redact; logtool gateway
// --redact) what is recorded of a request is redacted before anything is
// appended: its body's string values (JSON, byte for byte outside the
// spans; a body that is no JSON, as text), its recorded path and header
// values. The chunks, the lane's root, the agent id of a
// prompt_cache_key and the mapped events all come from the redacted
// body; the upstream is sent the client's bytes, unchanged. The
// wire/request keeps size and digest of the body sent and adds
// "redacted":{"spans","size","digest"}, the recorded body's (package
// wire/recorded), which verify checks the chunks against while it
// reports the digest of the body sent as not checkable (class
// redacted). The exchange's log line gives the count. What was replaced
// is stored nowhere, but the kept digest confirms a right guess of it
// to whoever reads the rest of the body: a random key cannot be
// guessed, a word a pattern of one's own matches may be. Answers are
// recorded as they come (streamed text arrives in deltas no pattern
// sees whole): an answer that repeats a secret of its request holds it.
//
// # Sessions and lanes
//
// A request's agent id is the Options.SessionHeader header, else
// X-Claude-Code-Session-Id, session-id, thread-id, else a top-level
// prompt_cache_key body field (read with codec's field reader); without
// one, it is this gateway run (Options.RunID). The agent's base session
// of an upstream is "gw-" and the first 16 hex digits of the SHA-256 of
// "agent" (or "run"), the id and the upstream's name, NUL-separated.
//
// Within an agent id a request belongs to the lane whose conversation
// has its root (transcript.Root: the first user message in normal form),
// each lane a session of its own, never mixed (docs/gateway.md#sessions). The first
// request with a root makes the base session its lane; a request of
// another root (a sub-agent, a title or classifier call) goes to the lane
// session of that api and root, id the digest of the same parts and
// "lane", api and root, whose header names the base as parentSession
// (with seedLength 0: it inherits nothing). Requests without a root (no
// user message, or an API that is not mapped) are recorded in the base
// session, as bytes (mapped there when the base is a lane of their API
// and the mapping takes them). Lanes are found again after a restart:
// their ids follow from the root, and the base's lane is in its header.
//
// Exchanges that overlap in time: a lane maps one exchange at a time, and
// a request whose lane has an exchange in flight (an agent's parallel
// call with the same first message, usually a side call) goes to the
// next lane session of that root that has none (ids with a number
// appended, up to 16; past that they share the last, and an answer that
// is no longer its lane's open request is recorded unmapped). So the
// requests of one conversation, which wait for their answers, stay in
// one session; exchanges of the base session without a root may still
// interleave with a lane's, which is sound because every record names
// its chunks by digest and a wire/response its wire/request by seq.
//
// A restarted gateway continues an agent's sessions: it reads a session
// back when it is first used (its chunks, and its lane's state through
// transcript.Lane.Resume), and closes a lane whose last request has no
// answer mapped (the gateway stopped or crashed while it streamed) with
// turn/end "interrupted", before anything else. So does the gateway
// itself for a session it has not used for a while: it keeps the writers
// of exchanges in flight and of the 128 sessions used last, each holding
// its session's chunk digests and lane, and drops the others.
//
// # Failures
//
// If the store refuses or fails an append, the client gets 503 saying the
// log is unavailable and nothing is forwarded; the failure is sticky:
// every later recorded request gets 503 until the gateway is restarted
// (Failed says why); a conflict (another writer appended to the session,
// on a shared PostgreSQL store) fails only its request, and the session is
// read again. With Options.FailOpen such requests are forwarded
// unrecorded, with a warning each. A store that fails while an answer
// streams stops that answer's recording; the answer is still forwarded.
// After a crash the session keeps the request (it was acknowledged before
// it was forwarded) and the answer's batches so far, without a
// wire/response: verify reports that as a warning, and the restarted
// gateway closes the lane's turn (above).
//
// Stop cuts every exchange in flight (recorded cut "shutdown"; its client
// sees the connection end); a graceful shutdown stops accepting first and
// calls Stop when its grace runs out. With LoopbackHostsOnly a request
// whose Host is not a loopback name gets 421 (package internal/loopback).
// The Logger gets one line per exchange: session, exchange, step (T.S,
// when mapped), api, sizes, status, the prompt cache's break (the
// transcript.Break kind, with @index or @offset), the cache reads the
// answer reported, cut and duration, never content.
package gateway
