// Package wire turns a canonical request (docs/rules.md#the-request) into the exact HTTP
// request a model provider receives, and a provider's streamed answer into
// the chunks the log records (docs/wire.md). It is pure: no network, no store,
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
// The body is written with codec's JSON text encoder (docs/format.md#json-text,
// JSON.stringify's rules) from the request's storage form: values the
// engine carries (tool descriptions and parameters, ids, arguments) are
// written as stored; texts concatenated by the mapping are joined as
// UTF-16 strings are, so the two halves of a surrogate pair split across
// blocks become one character. The header contributes only the wire keys
// of docs/wire.md#renderers: thinking and reasoningEffort (the request holds
// everything else). Rendering walks the request once, rendering messages
// as they are read; its cost is linear in the request.
//
// # Stream translators
//
// Renderer.NewTranslator returns a Translator for one answer. Feed it the
// body's bytes as they arrive, in any split; it returns the chunks they
// complete (block-start, text-delta, reasoning-delta, tool-call-delta,
// block-end, usage, finish; docs/format.md#event-types). End is called when the body ends.
// A translator holds only the current incomplete SSE line and each open
// block's text (block-end carries the finished block), never the stream.
// Renderer.TranslateJSON translates an answer that was not streamed (one
// JSON object) into the chunks its stream would have given, by reading
// it as the events a server streams for it (the recording gateway maps
// such answers too, docs/gateway.md#what-is-recorded).
// Failures are *Error values with the codes of docs/wire.md: STREAM_CLOSED,
// MALFORMED_RESPONSE, EMPTY_RESPONSE, an anthropic-messages error event's
// type (an openai-chat error object is not a failure: it ends the stream
// with a finish of kind error, its message and code); HTTPError
// maps a non-2xx response (AUTH, RATE_LIMIT, SERVER, HTTP_N,
// INVALID_REQUEST, CONTEXT_WINDOW_EXCEEDED, OVERLOADED; a 3xx is HTTP_3xx
// with a fixed message, never its body). An Error's message is the
// server's text as sent; Message(text, key) redacts the key and cuts it
// to MaxMessage bytes at a character boundary, for storing and printing.
//
// The OpenAI Responses API, which the recording gateway records
// (docs/gateway.md#what-is-recorded) and no renderer sends, has a translator and no renderer:
// NewResponsesTranslator for a streamed answer, TranslateResponsesJSON
// for one that was not streamed (the chunks its stream would give). Its
// items map to blocks: a message's output_text and refusal parts to text
// blocks, a reasoning item's summary to a reasoning block, a
// function_call to a tool-call whose id is the call_id. response.completed
// ends the answer (finish tool-calls when it made a tool call, else
// stop), response.incomplete too (max_output_tokens is max-tokens), and
// response.failed and error events with a finish of kind error, their
// code upper-cased.
//
// # Choices where docs/wire.md and docs/gateway.md#what-is-recorded are silent
//
//   - openai-chat: a message of a role other than system or assistant is
//     sent as role user; values the mapping copies that are absent (a tool
//     call without id, a tool without description) are omitted, as
//     JSON.stringify omits undefined members.
//   - anthropic-messages: tool_result content keeps only its non-empty
//     text blocks; arguments that are a JSON object by codec's strict rules
//     (no duplicate keys) are inserted as their bytes, anything else is {}.
//   - openai-chat stream: an error object without code or type has the
//     code SERVER, without message a fixed one; the rest of its payload
//     (choices, usage) is read before it ends the stream. A delta with both
//     reasoning_content and reasoning takes reasoning_content alone (some
//     servers send the same text in both); a delta with both content and
//     refusal adds content, then refusal, to the text block. The tool call
//     fragments of one delta are applied after its texts; tool-call deltas
//     repeat the call's id and name once seen.
//   - anthropic-messages stream: block types other than text, tool_use and
//     thinking (redacted_thinking, server tools) and signature deltas are
//     not ours and are skipped; a tool_use's non-empty input is written as
//     JSON.stringify writes it (no whitespace, keys in their order), and
//     input_json_delta fragments, if any follow, are appended to it; a
//     tool_use that received no input fragment ends with the arguments
//     "{}"; usage is emitted when message_start or message_delta reported
//     any, each value the last that was an integer (a null is no report).
//   - A text block whose text is not a string is refused (ErrInvalid),
//     naming the message and block, never their content.
//   - openai-responses: blocks open at their first text (an empty part
//     opens none) and end when their item's output_item.done arrives;
//     text a server sent only in a .done event, a finished item or the
//     completed response's output is given as one delta. A reasoning
//     item's summary parts are one reasoning block joined by a blank line,
//     as the Codex importer joins them; its reasoning_text parts are a
//     second reasoning block. A custom_tool_call (Codex's apply_patch) is
//     a tool call whose arguments are its input text. Items of other types
//     (web_search_call, file_search_call, local_shell_call, mcp_call, …)
//     give nothing, as the Codex importer keeps them unmapped. An error
//     event's code is its code, else its nested error's code or type,
//     else SERVER; a failed response's (one whose status is failed or
//     whose error is an object) is its error's code or type, else SERVER.
//     Both end the answer like response.completed: open blocks end, then
//     usage when reported, then the error finish. response.incomplete for
//     a reason R other than max_output_tokens, and a non-streamed status S
//     other than completed, incomplete and failed, finish as an unknown
//     stop reason does (an error whose code is R or S upper-cased).
package wire
