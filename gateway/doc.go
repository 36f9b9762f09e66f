// Package gateway is the recording gateway of SPEC §15: an HTTP handler
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
//	session gw-<16 hex>   header: {"gateway":{"upstream":NAME,"agentSession":ID,"from":HEADER}}
//	│                             (or {"upstream":NAME,"run":RUN} without an agent id)
//	├── wire/chunk      request chunks the session does not hold yet
//	├── wire/request    {api, method, path, headers, chunks: [[SEQ,N]…], size, digest}
//	│   (phase 2: the request's mapped events, in the same append)
//	├── wire/chunk …    the answer, a 64 KiB piece at a time while it streams
//	└── wire/response   {request: SEQ, status, headers, chunks|null, size, digest, streamed, cut?}
//	    (phase 2: the answer's mapped events, in the same append)
//
// One writer per session serialises its appends. Exchanges of one session
// that overlap in time (an agent's parallel calls) interleave their
// events; that is sound because every record names its chunks by seq
// (runs of consecutive wire/chunk events) and a wire/response names its
// wire/request by seq.
//
// Headers are recorded from the allowlists of SPEC §15.1 (and
// Options.RecordHeaders); authorization, x-api-key, x-goog-api-key,
// proxy-authorization and cookies never are, and cannot be added. Query
// parameters that may hold a key (key, api_key, access_token, …) are
// recorded with the value "redacted".
//
// # Sessions
//
// A request belongs to the session of its agent's own id: the
// Options.SessionHeader header, else X-Claude-Code-Session-Id,
// session-id, thread-id, else a top-level prompt_cache_key body field
// (read with codec's field reader). The store's id is "gw-" and the first
// 16 hex digits of the SHA-256 of "agent", the id and the upstream's name,
// NUL-separated; the id and the upstream are in the session header. A
// request without an id goes to its upstream's session of this gateway
// run ("run", Options.RunID, the upstream's name). A restarted gateway
// continues an agent's session: it reads the session's chunks back first.
// So does the gateway itself for a session it has not used for a while:
// it keeps the writers of exchanges in flight and of the 128 sessions
// used last, each holding its session's chunk digests and seqs, and drops the
// others.
// Lanes, conversation mapping and the cache audit (SPEC §15.2–§15.4) are
// phase 2.
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
// wire/response: verify reports that as a warning.
//
// Stop cuts every exchange in flight (recorded cut "shutdown"; its client
// sees the connection end); a graceful shutdown stops accepting first and
// calls Stop when its grace runs out. With LoopbackHostsOnly a request
// whose Host is not a loopback name gets 421 (package internal/loopback).
// The Logger gets one line per exchange: session, exchange, api, sizes,
// status, cut and duration, never content.
package gateway
