// Package ui is the audit web UI that logtool serve runs: a read-only
// view over any store, rendered on the server with html/template and
// embedded static assets, with no script at all and nothing fetched from
// the network.
//
// Pages:
//
//	/                              sessions: filter (q) and sort (sort) by id and parent;
//	                               events, turns, last activity, lineage
//	/s/{id}?from=SEQ               a session: lineage (parent, forks), its header events and
//	                               compactions, and a timeline of its events, one page at a time
//	/s/{id}/verify                 verify.Session, run on demand
//	/s/{id}/step/{T.S}             a step: its digest against the recorded ones, the header in
//	                               force, the request's messages (collapsible; those new since the
//	                               previous step open and highlighted), the body each wire
//	                               renderer sends
//	/s/{id}/step/{T.S}/request.json  the request's exact bytes, as a download
//	/s/{id}/step/{T.S}/message/{i}   message i of the request, exact, as a download
//	/s/{id}/step/{T.S}/wire/{name}   the body a wire renderer sends, as a download
//	/s/{id}/event/{seq}            an event's canonical JSON line, streamed
//	/s/{id}/cache?from=I           the cache chart (an SVG drawn here) and table, 100 steps a page
//	/s/{id}/diff?a=T.S&b=T.S       two steps: the header fields that changed, the first diverging
//	                               message side by side
//	/api/…                         the same as JSON; GET /api/ prints its documentation
//
// For a session imported from an agent's transcript (docs/transcripts.md), the step,
// cache and diff pages (and the step's API) say that its requests are
// reconstructed from the transcript, what the transcript does not
// record, and which sessions the recording gateway recorded of the same
// agent session (audit.SessionProvenance).
//
// Everything from the log goes through html/template's contextual
// escaping, and every answer carries a Content-Security-Policy that
// allows no script, so a hostile prompt, tool name, session id or tool
// result can neither run nor break a page. Only GET and HEAD are served.
// The server logs one line per request through the *slog.Logger it is
// given, with the route's pattern but never the path, a query or
// anything read from the log. CheckAddr refuses an address that is not
// loopback unless the caller allows remote access.
//
// The server answers only the Host names of Options.Hosts (by default
// localhost, 127.0.0.1, [::1], with any port), read and compared as
// package internal/loopback reads a Host (the recording gateway's check);
// CheckAddr decides loopback as it does. Any other
// Host gets 421, so a page whose name was rebound to this machine (DNS
// rebinding) reads nothing. A session id is one path segment; an id that
// is . or .. (which a browser would resolve away) or starts with ~ is
// written with a ~ before it.
//
// Every request is bounded. The routes that read a session's log run at
// most Options.MaxHeavy at once; one more waits Options.HeavyWait, then
// gets 429 with Retry-After, and each stops at WriteTimeout. A page or
// API answer lists at most MaxEvents events, MaxSteps steps or
// MaxCacheSteps cache rows (from past the end, or a limit out of range,
// is a 400), an API events page about a MiB. A page shows a text over
// BigItem (an event, a message, a system prompt, a tool, a wire body) by
// its first HeadBytes and links its raw bytes; an event's are streamed
// from its stored image; the wire bodies of a request over MaxRendered
// are rendered only when downloaded. HTTPServer gives the http.Server
// timeouts logtool serve uses, and MemoryLimit the soft memory limit it
// runs under.
//
// Long sessions stay fast: nothing loads a whole session. A session's
// overview (its steps with their digests, its header events and
// compactions) comes from one digest-only fold, linear in the log and
// cached per session while the head is unchanged; the timeline scans one
// page of events and streams it; a step, a page of the cache chart or a
// diff folds the log up to the steps shown and builds only their
// requests (package audit). The step page shows the wire body of each
// Renderer the caller hands over; WireRenderers gives one per renderer of
// package wire (docs/wire.md), as logtool serve uses.
//
// ui sits on floor 7 of DESIGN.md: it imports audit, verify, wire,
// rebuild, eventlog and codec, and nothing imports it but the commands.
package ui
