// Package fakemodel is a scripted model server for tests: an
// http.Handler that speaks the model APIs the real agents call, streamed
// as the providers stream them, and records every request it receives.
//
// It answers
//
//   - POST …/v1/messages (Anthropic Messages): a JSON message, or with
//     "stream":true the SSE events message_start, content_block_start,
//     content_block_delta (text_delta, input_json_delta),
//     content_block_stop, message_delta (stop_reason, usage),
//     message_stop; POST …/v1/messages/count_tokens an estimate;
//   - POST …/chat/completions (OpenAI Chat Completions): a
//     chat.completion, or chat.completion.chunk events (text deltas,
//     tool_calls deltas, finish_reason, a usage chunk when
//     stream_options.include_usage asks) ended by "data: [DONE]";
//   - POST …/responses (OpenAI Responses): a response object, or the
//     events response.created, response.in_progress,
//     response.output_item.added, response.content_part.added,
//     response.output_text.delta/.done, response.content_part.done,
//     response.function_call_arguments.delta/.done,
//     response.output_item.done and response.completed with usage;
//   - POST …:generateContent and …:streamGenerateContent?alt=sse
//     (Gemini);
//   - GET …/models: a model list in the shape the path's API uses.
//
// Anything else is answered 404 with a JSON error, and recorded like
// every request: method, path, query, headers and the body bytes exactly
// (Requests).
//
// What a model request is answered with comes from a script: a list of
// Replies taken in order, each a text or tool calls (a name and the
// arguments' JSON), then the final text for every request after the
// last. A request that offers no tools (an agent's side call: a title, a
// classifier) never takes a reply with tool calls: it gets the final text
// and leaves the script where it is. Tools are offered by a top-level
// "tools" list, or by an input item of type "additional_tools" (Codex's
// Responses bodies carry their tools there). Usage is estimated from the
// body size (a token per four bytes).
//
// It is test support; nothing ships with it.
package fakemodel
