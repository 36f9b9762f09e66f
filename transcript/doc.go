// Package transcript imports other agents' session files (SPEC §13):
// OpenAI Codex rollouts and Anthropic Claude Code transcripts. Open reads
// a file and returns a Session, an eventlog.Source whose events are
//
//   - one source/line event per source line, in order, holding the line's
//     exact text ({"format","line","text"}; "base64" instead of "text"
//     for a line that is not UTF-8, "newline":false on a last line that
//     had no newline), so WriteSource writes the file back byte for byte;
//   - after the lines that carry them, the events of SPEC §2.5 the source
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
// # Caveats
//
// Neither format records every tool definition or (Claude Code) the
// system prompt: the header snapshots leave them absent, so a rebuilt
// request shows what is known and no more.
package transcript
