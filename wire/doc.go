// Package wire turns a canonical request (SPEC §6.1) into the exact HTTP
// request a model provider receives, and a provider's streamed answer into
// the chunks the log records (SPEC §12). It is pure: no network, no store,
// no clock. The bytes a provider of this engine sends are a function of
// the request, the header in force at the step and the renderer the
// header names, so anyone holding the log rebuilds them: logtool replay
// --wire prints them, package provider sends them.
//
// # Renderers
//
// Lookup returns a Renderer by name; Names lists them:
//
//	openai-chat         POST {base}/chat/completions  Chat Completions (OpenAI,
//	                    DeepSeek, every compatible server), byte-exact with
//	                    DSH's own DeepSeek adapter
//	anthropic-messages  POST {base}/v1/messages       Anthropic's Messages API
//
// Renderer.Render(request, header) gives method, path, header fields and
// body; AppendBody appends only the body to a buffer the caller reuses.
// The API key is never part of the result: HTTPRequest names the field it
// goes in (KeyHeader, KeyPrefix) and the provider adds it. A renderer's
// mapping is frozen: a change of any byte is a new name.
//
// The body is written with codec's JSON text encoder (SPEC §2.2,
// JSON.stringify's rules) from the request's storage form: values the
// engine carries (tool descriptions and parameters, ids, arguments) are
// written as stored; texts concatenated by the mapping are joined as
// UTF-16 strings are, so the two halves of a surrogate pair split across
// blocks become one character. The header contributes only the wire keys
// of SPEC §12.1: thinking and reasoningEffort (the request holds
// everything else). Rendering walks the request once, rendering messages
// as they are read; its cost is linear in the request.
//
// # Stream translators
//
// Renderer.NewTranslator returns a Translator for one answer. Feed it the
// body's bytes as they arrive, in any split; it returns the chunks they
// complete (block-start, text-delta, reasoning-delta, tool-call-delta,
// block-end, usage, finish; SPEC §2.5). End is called when the body ends.
// A translator holds only the current incomplete SSE line and each open
// block's text (block-end carries the finished block), never the stream.
// Failures are *Error values with the codes of SPEC §12: STREAM_CLOSED,
// MALFORMED_RESPONSE, EMPTY_RESPONSE, an error event's type; HTTPError
// maps a non-2xx response (AUTH, RATE_LIMIT, SERVER, HTTP_N,
// INVALID_REQUEST, CONTEXT_WINDOW_EXCEEDED, OVERLOADED; a 3xx is HTTP_3xx
// with a fixed message, never its body). An Error's message is the
// server's text as sent; Message(text, key) redacts the key and cuts it
// to MaxMessage bytes at a character boundary, for storing and printing.
//
// # Choices where SPEC §12 is silent
//
//   - openai-chat: a message of a role other than system or assistant is
//     sent as role user; values the mapping copies that are absent (a tool
//     call without id, a tool without description) are omitted, as
//     JSON.stringify omits undefined members.
//   - anthropic-messages: tool_result content keeps only its non-empty
//     text blocks; arguments that are a JSON object by codec's strict rules
//     (no duplicate keys) are inserted as their bytes, anything else is {}.
//   - openai-chat stream: a chunk with an error object ends the stream with
//     the error's code (else its type) upper-cased, else SERVER; the tool
//     call fragments of one delta are applied after its texts; tool-call
//     deltas repeat the call's id and name once seen.
//   - anthropic-messages stream: block types other than text, tool_use and
//     thinking (redacted_thinking, server tools) and signature deltas are
//     not ours and are skipped; a tool_use that received no input fragment
//     ends with the arguments "{}"; usage is emitted when message_start or
//     message_delta reported any.
//   - A text block whose text is not a string is refused (ErrInvalid),
//     naming the message and block, never their content.
package wire
