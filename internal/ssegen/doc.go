// Package ssegen writes long, realistic Server-Sent Event streams of the
// two wire APIs (docs/wire.md#openai-chat, docs/wire.md#anthropic-messages) and of the OpenAI Responses API
// (docs/gateway.md#what-is-recorded) for benchmarks of the stream translators: reasoning, text and
// tool calls in small fragments, as live models stream them; and request
// bodies shaped like Claude Code's and Codex's (ClaudeRequests,
// CodexRequests) with each step's answer (AnthropicTurn, ResponsesTurn:
// a text and a tool call, each seed its own), for the recording gateway's
// storage measures. It is
// benchmark support; nothing ships with it.
package ssegen
