// Package agenttest runs the real agents people use — Claude Code, Codex
// and Gemini CLI, installed from npm at pinned versions by .ci/agents.sh
// — against a model server of the test's choice (a fakemodel.Server, or
// the recording gateway in front of one), isolated: a throwaway HOME,
// TMPDIR, XDG directories and working directory, an environment of PATH
// and those alone, and HTTPS_PROXY/HTTP_PROXY/ALL_PROXY naming a Sink
// that records and refuses every attempt (NO_PROXY covers loopback, so
// the model at 127.0.0.1 is reached directly).
//
// The agents are looked for under $SESSIONLOG_TEST_AGENTS (default
// ~/.cache/sessionlog-agents), as bin/claude, bin/codex and bin/gemini.
// A test skips with one line when one is absent, and fails instead when
// $SESSIONLOG_TEST_AGENTS_REQUIRED=1 (CI). Every run is bounded by
// Env.Timeout (RunTimeout unless changed), its process group killed when
// the time is up.
//
// NewAgent configures an agent for a base URL (see its doc for the
// switches that keep each one off the network); Agent.Start runs it
// non-interactively with permission to run its shell tool, Agent.Resume
// continues its latest session, Agent.Shell is the tool call that runs
// a command, and Key is the API key they are given.
//
// The scripted session every agent test runs: Script is the model (two
// calls of the agent's shell tool, one a step, then a text; resumed, one
// more call and a text; resumed again, a text), RunSession runs the
// agent on it and resumes it twice, Session.Check fails the test unless
// the session was real (the tools ran, each resumed run sent the earlier
// conversation, one session id throughout, nothing reached the sink),
// Session.Report logs what the agent sent, and Agent.Transcripts finds
// the transcript files the agent wrote of it (the importers' fresh
// captures: nothing of them is kept in the repository).
//
// What the agents send (measured with Claude Code 2.1.328, Codex
// 0.169.0 and Gemini CLI 0.61.0, scripted tool calls and a resume). Each
// agent sends one request a step: a run with N tool calls (each its own
// step) sends N+1, a tool's result in the request after its call, and a
// resumed run's first request holds the whole earlier conversation.
//
//   - Claude Code: only POST /v1/messages?beta=true, streamed, bodies
//     of 49–50 KB (keys model, messages, system, tools, metadata,
//     max_tokens, thinking, context_management, output_config, stream;
//     a role "system" message inside messages). The key is in X-Api-Key. Headers:
//     Accept, Accept-Encoding (gzip, deflate, br, zstd), Anthropic-Beta,
//     Anthropic-Dangerous-Direct-Browser-Access, Anthropic-Version,
//     Connection, Content-Length, Content-Type, User-Agent, X-Api-Key,
//     X-App, X-Claude-Code-Session-Id, X-Stainless-* (Arch, Lang, Os,
//     Package-Version, Retry-Count, Runtime, Runtime-Version, Timeout).
//     X-Claude-Code-Session-Id is one id for both runs (--continue keeps
//     it); it is also in the body's metadata.user_id, a JSON string with
//     a device_id. No count_tokens, models or other call, nothing to the
//     proxy. Three cache_control markers; the system message inside
//     messages is a one-block list in the first request and a plain
//     string after, so the byte prefix shared with the previous request
//     is 2% (first to second) and 21% (then): prefix and suffix together
//     cover 80% and 99.7%.
//   - Codex: only POST /v1/responses, streamed (Accept:
//     text/event-stream), bodies of 55–56 KB in the "lite" form
//     (header X-Openai-Internal-Codex-Responses-Lite; no instructions and
//     no top-level tools: input[0] is an "additional_tools" item of about
//     25 KB, then developer messages; keys model, stream, input,
//     tool_choice, parallel_tool_calls, reasoning, store, include,
//     prompt_cache_key, text, client_metadata). The key is in
//     Authorization (Bearer). Headers: Accept, Authorization,
//     Content-Length, Content-Type, Originator, Session-Id, Thread-Id,
//     User-Agent, X-Client-Request-Id, X-Codex-Beta-Features,
//     X-Codex-Turn-Metadata (JSON with turn ids: differs per turn),
//     X-Codex-Window-Id, X-Openai-Internal-Codex-Responses-Lite; no
//     Accept-Encoding. Session-Id and Thread-Id are one id for both runs
//     (exec resume --last keeps it), also the body's prompt_cache_key
//     and client_metadata's session_id and thread_id. input only grows:
//     96–97% of a request is a byte prefix of the next; the rest is
//     client_metadata, whose keys come in a new order every request.
//     Its shell tool is exec_command {"cmd": …}. With plugins on, each
//     start tries github.com, api.github.com and chatgpt.com (the curated
//     plugin sync): NewAgent turns plugins off, and then nothing reaches
//     the proxy.
//   - Gemini CLI: POST /v1beta/models/MODEL:streamGenerateContent?alt=sse,
//     bodies of 46–47 KB (contents, systemInstruction, tools,
//     generationConfig); the key in X-Goog-Api-Key; no session id on the
//     wire (its JSON output's session_id is kept by --resume latest).
//     contents (small) comes first, then a 31 KB systemInstruction and
//     15 KB of tools: a 1–2% byte prefix, prefix and suffix 99%.
//     Without a model named, every prompt first makes a non-streamed
//     :generateContent classifier call that wants a JSON answer, retried
//     with back-off when it is not (a minute and more): NewAgent names the
//     model. A run takes 6–12 s, most of it Node starting the bundle.
//
// Under strace, every connect() of the three agents' processes went to
// the model at 127.0.0.1: no direct connection, no DNS.
package agenttest
