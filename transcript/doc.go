// Package transcript imports other agents' session files (docs/transcripts.md):
// OpenAI Codex rollouts, Anthropic Claude Code transcripts and Google
// Gemini CLI sessions. Open reads a file and returns a Session, an
// eventlog.Source whose events are
//
//   - one source/line event per source line, in order, holding the line's
//     exact text ({"format","line","text"}; "base64" instead of "text"
//     for a line that is not UTF-8, "newline":false on a last line that
//     had no newline), so WriteSource writes the file back byte for byte;
//   - after the lines that carry them, the events of docs/format.md#event-types the source
//     describes: turns, one step per model response (its assistant
//     message, tool calls and the tool results answering them), user and
//     context messages, header snapshots with only what the source
//     records, and compaction brackets. Each carries
//     "origin":{"format","line"} as its last data key.
//
// A line that is not JSON, of a kind the importer does not know, or of a
// known kind it does not map here is still kept as a source line and
// counted in Stats (by kind); it is never an error. A last line without a
// newline that is not a whole JSON object is a torn tail: kept, counted,
// never mapped.
//
// Detect tells the formats apart by their first lines and never guesses:
// a file whose first lines say no format, or two, is ErrFormat.
//
// # What each format gives
//
//   - Codex: the conversation from its response_item lines (which equal
//     the requests' input items), usage from token_usage_record (a
//     token_count repeating it kept), the tools from additional_tools; a
//     turn with no response_item conversation maps its event_msg lines
//     instead (never both).
//   - Claude Code: when the file records its requests (api-request,
//     api-request-shape, api-request-blob: 2.1.328 and later) and every
//     request of the conversation can be rebuilt from it, each request is
//     rebuilt, its digest checked against the one recorded
//     (Stats.Rebuilt, Stats.Verified), and mapped as the gateway maps a
//     request (a Lane), each answer from the assistant lines that
//     reference it; otherwise the lines are mapped (the branch that ends
//     at the last line's leaf), the requests giving the header's system
//     prompt and tools.
//   - Gemini CLI: its records (user, gemini) by id, a record written
//     again updating its step; function calls and responses, thoughts as
//     reasoning, tokens as usage, the model per record.
//
// # Reading
//
// Open reads its input twice: a first pass finds the session header (and
// for Claude Code the branch to map: lines form a tree by uuid and
// parentUuid, and the session is the branch ending at the last line's
// leaf); the second is streamed by Next, one line at a time, holding at
// most one model response in memory. For Claude Code the first pass
// parses every line, and keeps the parsed lines for the second while they
// fit in 128 MiB, so that a line is parsed once. The events Next yields
// are not decoded (their Data is nil): Store.Import decodes what it
// stores; decode with codec.DecodeEvent where a view is needed.
//
// # The recording gateway's mapping
//
// The same item conversions map the exchanges the recording gateway
// records (docs/gateway.md#sessions and docs/gateway.md#what-is-recorded): request bodies of the Anthropic Messages
// API (APIAnthropic), Chat Completions (APIChat) and the Responses API
// (APIResponses), and their answers. It is pure (no HTTP, no store), so
// verify re-runs it over the recorded bytes.
//
//   - Root(api, body) is the lane key: a digest of the conversation's
//     first user message in normal form (cache markers dropped, a list
//     of one text block equal to its text).
//   - A Lane is one conversation's state (one session). MapRequest(body,
//     origin, next, time) returns the events a request adds, the first
//     at seq next, each with "origin":{"format":"gateway","seq":origin}:
//     turn/start for a new prompt (closing the open step and turn),
//     user/message, context/message (system and developer messages in
//     the conversation, envelope raw), tool/result for the open step's
//     calls, step/end, step/start, then a request/header snapshot when
//     system, tools or config differ from the header in force. A
//     conversation that does not extend the previous one replaces the
//     changed span of the surface, so every step rebuilds to its body's
//     conversation. The Break says what changed for the cache audit.
//   - NewAnswer(api, status, streamed) reads an answer's bytes as they
//     arrive (Feed, End): a stream through wire's translator, a whole
//     body through wire's JSON translations, an error status through
//     HTTPError; Cut says it was cut; a stream past MaxStreamed (8 MiB)
//     fails there, so an answer is never held whole. (Add and Fail take
//     chunks and errors directly.) MapAnswer returns assistant/message and
//     tool/call events, leaving the step open for the results when the
//     answer called tools, else step/end and turn/end; a failed or cut
//     answer ends the step and turn (docs/loop.md#how-turns-end); an answer to a request
//     that is no longer the lane's open one is ErrStale. Close ends a
//     turn whose answer a crash lost; LaneFrom rebuilds a Lane from the
//     session's events after a restart.
//   - Prefix(api, prev, cur) is the cache audit's measure (docs/gateway.md#cache-audit):
//     the bytes of body cur in the prefix it shares with prev, the
//     lane's previous request, in the API's order (tools, system, then
//     the conversation items, each whole while it equals prev's in
//     normal form), the Break as MapRequest names it, and the spans after
//     the prefix that prev held too (re-sent although unchanged).
//     Answer.Usage is the usage an answer reported.
//
// Normal form: text blocks hold their text alone; cache_control is
// dropped from opaque blocks and tools; an assistant message compares by
// its texts joined and its tool calls (id, name, arguments in canonical
// JSON), so reasoning a client drops or keeps and arguments it
// re-serializes are no edit; consecutive assistant messages are one. The
// header: Anthropic's system blocks joined by a blank line, Responses'
// instructions, or Chat Completions' leading system (or developer)
// message of text; tools as {name, description, parameters, …their other
// keys}, from the top-level list and Codex's additional_tools items;
// config {provider, model, temperature?, maxTokens?, stop?, wire (the
// API), thinking?, reasoningEffort?, source:"gateway", params: the API's
// sampling, reasoning and output fields verbatim}.
//
// # Caveats
//
// What a format does not record stays absent from the header snapshots
// (Gemini CLI: the system instruction and tools; Claude Code before
// 2.1.328: the system prompt and tools), so a rebuilt request shows what
// is known and no more; audit.SessionProvenance says what that is.
//
// The gateway's mapping writes assistant content that no answer gave (a
// client's edit of an earlier answer, a prefill) as an assistant/message
// outside a step, which verify reports as a structure warning; reasoning
// alone (no text, no call) in a request is not written.
package transcript
