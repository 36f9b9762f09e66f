// Package loop drives an agent session so that every request it sends is
// explained by the log (docs/loop.md): model-visible ⟺ logged.
//
// A Loop is one loop instance over one session: Create starts a new
// session, Open continues an existing one (an unknown id is
// eventlog.ErrNotFound, never a new session), Fork continues a fork of
// one. Send runs a turn, Inject and Steer add context, and Dispose ends
// the instance. The package Example is a whole host.
//
// Per turn the loop writes turn/start and the prompt, then steps until
// the model stops calling tools, then turn/end. Per step, in this order:
// steering messages are drained and the host's system prompt, tools and config evaluated; the
// session prefix is composed (first step of the instance only); the
// pre-step hooks and the compaction gate run; step/start takes the
// boundary and the owed header follows it (a full snapshot for the
// instance's first request, afterwards nothing, a delta, or a fallback
// snapshot); the request is built from the cached prefix and the log and
// checked against an independent rebuild from the records the store holds;
// its digest is recorded; then the answer is streamed (assistant/chunk,
// then assistant/message) and the tools run (tool/call, tool/result).
//
// Every batch the loop commits is one atomic, durable Append: the log is
// committed before each request is sent, after each assistant message,
// before each tool runs and after each result, and at turn end, so nothing
// acknowledged to the host is lost in a crash. A long answer's chunks are
// committed ahead of its assistant/message in groups of about 1 MiB of
// memory (a chunk's stored bytes and 256 for its event), so that memory
// holds the blocks being built rather than the stream. Opening a session
// whose last turn is still open appends the crash closers first. A cancellation of
// Send's context never cuts a write short; Options.StoreTimeout bounds each
// store call, and a store that outlives it ends the turn with
// ErrStoreTimeout.
//
// Redaction at the source (docs/forgetting.md#redaction): Options.Redactor (package redact)
// is applied to the user's content, steering, injected and contributed
// context and tool results before they are logged; requests are built
// from the log, so what it replaces reaches neither the store nor the
// model, and model-visible ⟺ logged still holds. The log says how many
// spans it replaced, never what (and MetricRedacted counts them).
//
// Concurrency: one turn runs at a time (Send); Inject, Steer, Dispose, ID
// and Next may be called from any goroutine, Dispose with a context that
// bounds its wait. Observability: Options.Logger (slog) and
// Options.Metrics (the OpenTelemetry metric API; the Metric* names).
//
// The provider, the host and the tools are interfaces defined here; the
// store is any eventlog.Store. A provider says why it failed with a
// *ProviderError (code, message, HTTP status, Retry-After): its code is
// recorded in turn/end and handed to the host in the Outcome, with the
// Retry-After; the loop itself never retries.
package loop
