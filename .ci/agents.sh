#!/usr/bin/env bash
# Installs the pinned agent CLIs the real-agent tests run (package
# internal/agenttest): Claude Code, Codex and Gemini CLI, from npm, into
# ${SESSIONLOG_AGENTS:-$HOME/.cache/sessionlog-agents}, outside the
# repository, and links each agent's command into its bin/ (claude,
# codex, gemini). Idempotent: an agent already there at its pinned
# version is not installed again. Install scripts are not run: Claude
# Code's postinstall only copies the native binary of its platform
# package over a placeholder, so bin/claude links that binary directly;
# Codex's platform package ships its binary, which bin/codex (the npm
# wrapper) starts. Prints the directory; the tests find it in
# $SESSIONLOG_TEST_AGENTS.
set -euo pipefail
command -v npm >/dev/null || { echo "agents: npm is missing (Node.js and npm come with the machine)" >&2; exit 1; }

dir="${SESSIONLOG_AGENTS:-$HOME/.cache/sessionlog-agents}"
claude_version=2.1.328
codex_version=0.169.0
gemini_version=0.61.0

mkdir -p "$dir/bin"
cd "$dir"

# installed PACKAGE VERSION: node_modules holds PACKAGE at VERSION.
installed() {
	grep -qE "\"version\": *\"$2\"" "node_modules/$1/package.json" 2>/dev/null
}
# runs NAME VERSION: bin/NAME answers --version with VERSION.
runs() {
	[ -x "bin/$1" ] && "bin/$1" --version 2>/dev/null | grep -qF "$2"
}

want=()
for pair in "@anthropic-ai/claude-code $claude_version" "@openai/codex $codex_version" \
	"@google/gemini-cli $gemini_version"; do
	set -- $pair
	installed "$1" "$2" || want+=("$1@$2")
done
if [ "${#want[@]}" -gt 0 ]; then
	[ -f package.json ] || echo '{"private":true}' >package.json
	# npm reports on stderr: stdout is the directory alone.
	npm install --no-audit --no-fund --save-exact --ignore-scripts --loglevel=error --prefix "$dir" "${want[@]}" >&2
fi

# Claude Code: the native binary of this platform's package.
claude_native=""
for p in node_modules/@anthropic-ai/claude-code-*/claude; do
	if [ -x "$p" ] && "$p" --version >/dev/null 2>&1; then
		claude_native="$p"
		break
	fi
done
if [ -z "$claude_native" ]; then
	echo "agents: no runnable Claude Code binary for this platform under $dir" >&2
	exit 1
fi
ln -sfn "../$claude_native" bin/claude
ln -sfn ../node_modules/@openai/codex/bin/codex.js bin/codex
ln -sfn ../node_modules/@google/gemini-cli/bundle/gemini.js bin/gemini

for pair in "claude $claude_version" "codex $codex_version" "gemini $gemini_version"; do
	set -- $pair
	if ! runs "$1" "$2"; then
		echo "agents: bin/$1 does not run as version $2 in $dir" >&2
		exit 1
	fi
done
echo "$dir"
