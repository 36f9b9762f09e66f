// Command logtool inspects and maintains a sessionlog store: a bbolt file,
// or a PostgreSQL database named by a postgres:// URL (docs/rules.md#distribution), holding
// the append-only event logs of an agent host's sessions.
//
// Usage:
//
//	logtool [--db PATH] [--lock-timeout DURATION] COMMAND [ARGS]
//
// The store is --db, else $LOGTOOL_DB, else sessions.db in the current
// directory. Commands:
//
//	import FILE… [--id NEW]      import DSH session files (JSONL; - is stdin), or with
//	                             --format agents' transcripts (Codex, Claude Code, Gemini CLI)
//	export SESSION [-o FILE]     write a session as canonical JSONL
//	ls [--json]                  list the sessions
//	show SESSION [filters]       print a session's events, one per line
//	stat [SESSION] [--json]      counts, sizes, token usage, chain hash
//	fork SESSION --at SEQ        fork a session after a turn/end
//	replay SESSION --wire [NAME] the bytes a model provider received (docs/wire.md)
//	compare TRANSCRIPT WIRE      an imported transcript against the gateway's record of it
//	run SCENARIO --provider NAME run a scenario against a real model over HTTP
//	demo                         import a built-in example session and show it
//	copy --from DB --to DB       copy sessions between stores, checking chain hashes
//	serve [--addr HOST:PORT]     the read-only audit web UI (package ui)
//	gateway --upstream URL       record an agent's model traffic, byte for byte (docs/gateway.md)
//
// stdout carries only the requested output. Diagnostics go to stderr, and
// errors are printed as "logtool: <message>", followed by hints on lines of
// their own. The exit code is 0 on success, 1 on a failure or refused
// input, 2 on a usage error, and 130 when an interrupt (Ctrl-C) stopped
// the command. A store that bbolt opened one commit back, because its
// newest meta page is damaged, is warned about on stderr. Commands that only read open the store
// read-only and never create it; import, fork and demo create or change
// it.
//
// The interchange format, the store and the exact output of each command
// are specified in docs/format.md#interchange, docs/rules.md#store and docs/cli.md.
package main
