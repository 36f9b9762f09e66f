// Package provider implements the loop's Provider over HTTP for the wire
// renderers of docs/wire.md: openai-chat (OpenAI, DeepSeek and every
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
// *loop.ProviderError with the code of docs/wire.md (AUTH, RATE_LIMIT, SERVER,
// HTTP_N, INVALID_REQUEST, CONTEXT_WINDOW_EXCEEDED, OVERLOADED,
// EMPTY_RESPONSE, STREAM_CLOSED, MALFORMED_RESPONSE, WIRE_MISMATCH,
// NETWORK, TIMEOUT, RESPONSE_TOO_LARGE), the HTTP status, and the
// server's Retry-After; the loop records the code and the host decides.
//
// The API key is read once, by New, from the environment variable the
// caller names. It is sent in the renderer's key header and appears in no
// error, log line or output: a server's message is passed through
// wire.Message (the key and a cut-off prefix of it redacted, then cut to
// 1 KiB at a character boundary), a server's code that is not a plain
// code becomes SERVER, and the key is redacted from stop reasons. A
// provider never follows a redirect (the key would go with it): a 3xx is
// HTTP_3xx. Options.BaseURL is parsed; user info, a query or a fragment
// is refused (ErrBaseURL), and errors never repeat it.
//
// Bounds, in Options with defaults a slow reasoning model survives:
// ConnectTimeout (30s), FirstByteTimeout (10m, to the response headers),
// IdleTimeout (10m, between chunks: bytes that complete none do not
// count) and MaxResponseBytes (256 MiB). Past one, the stream fails with
// TIMEOUT or RESPONSE_TOO_LARGE and the loop ends the turn after the
// chunks that did arrive.
// Options.Logger, when set, receives one line per request and per failure
// (renderer, turn, step, body size, status, code), never content.
package provider
