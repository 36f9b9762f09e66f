// Command agent is a small, real agent host built on sessionlog: it talks
// to an OpenAI-compatible or Anthropic endpoint through package provider,
// offers the model two harmless tools (read_file and list_folder, confined
// to one folder), logs everything in a session store, and ends by printing
// how to audit the session with logtool.
//
//	export OPENAI_API_KEY=...
//	go run ./examples/agent --provider openai-chat --base-url https://api.openai.com/v1 \
//	    --model gpt-4o-mini "What is in this folder?"
//
// Flags: --provider (openai-chat or anthropic-messages), --base-url,
// --model, --db (the store, sessions.db), --session (continue a session;
// default a new one), --root (the folder the tools may read, .),
// --api-key-env (the variable holding the key; default OPENAI_API_KEY or
// ANTHROPIC_API_KEY; when that default is unset, requests go without a
// key, for local servers), --verbose (debug logs on stderr). The prompt is the
// arguments, or standard input when there are none.
//
// The answer streams to standard output; logs (ids, seqs, codes, never
// content) go to standard error. Exit 0 when the turn completed, 1 when it
// ended otherwise or failed, 2 on a usage error.
package main
