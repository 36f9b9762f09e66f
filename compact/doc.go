// Package compact keeps a session's history inside the model's context
// window (docs/rules.md#compaction): a token estimator, the gate that decides when and how
// much of the surface head to compact, and the compaction bracket that
// records a summary as a surface replace.
//
// The gate runs before a step's boundary. Below the threshold it does
// nothing. At or above it, it keeps the newest retainTokens worth of
// surface nodes, moves the cut toward the head until no tool call is left
// unanswered across it, summarizes the head, and re-estimates, up to
// Retries+1 attempts; then it gives up with ErrGaveUp, which is not fatal:
// the request goes out with the history as it stands.
//
// A compaction is a bracket in the log: compact/start committed alone
// before the summarizer runs, then compact/summary, the replacing
// user/message and compact/end committed together; or compact/end with an
// error, which leaves the surface untouched. A crash inside the bracket
// leaves an inert compact/start. Compaction never touches the header, the
// system prompt or the session prefix: they never enter the surface.
package compact
