// Package provider implements the loop's Provider over HTTP for the wire
// renderers of SPEC §12: openai-chat (OpenAI, DeepSeek and every
// OpenAI-compatible server) and anthropic-messages. It is the only package
// of the engine that speaks HTTP to a model.
//
// For each request the loop hands it, a provider checks that the header in
// force names its renderer in config.wire (else WIRE_MISMATCH, and nothing
// is sent), renders the body with package wire — the same pure function
// logtool replay --wire runs on the log — and POSTs exactly those bytes.
// The answer's Server-Sent Events are translated into chunks as they
// arrive, never buffered whole. Cancelling the context stops the request
// mid-stream. A provider never retries: every failure is a
// *loop.ProviderError with the code of SPEC §12 (AUTH, RATE_LIMIT, SERVER,
// HTTP_N, INVALID_REQUEST, CONTEXT_WINDOW_EXCEEDED, OVERLOADED,
// EMPTY_RESPONSE, STREAM_CLOSED, MALFORMED_RESPONSE, WIRE_MISMATCH,
// NETWORK), the HTTP status, and the server's Retry-After; the loop
// records the code and the host decides.
//
// The API key is read once, by New, from the environment variable the
// caller names. It is sent in the renderer's key header and appears in no
// error, log line or output: a server message that echoes it is redacted.
// Options.Logger, when set, receives one line per request and per failure
// (renderer, turn, step, body size, status, code), never content.
package provider
