#!/usr/bin/env bash
# Installs the real third-party MCP clients the agent tests drive, from the npm registry, into
# .harness/agents (idempotent: nothing when the pinned versions are there): Claude Code (`claude mcp
# list` connects to each server and prints its state; it needs no login for that), the MCP
# Inspector, whose `--cli` mode needs Node 22 (test/harness/install-node22.sh), Copilot CLI, Codex
# (`codex app-server` calls a tool without a model) and Gemini CLI. A few minutes and about 1.1 GB,
# once. Prints the folder of their binaries on stdout.
set -euo pipefail
cd "$(dirname "$0")/../.."
prefix=.harness/agents
CLAUDE=2.1.197
INSPECTOR=2.12.0
COPILOT=1.0.102
CODEX=0.171.0
GEMINI=0.61.0
stamp="$prefix/.versions"
want="claude-code@$CLAUDE inspector@$INSPECTOR copilot@$COPILOT codex@$CODEX gemini-cli@$GEMINI"
if [ ! -x "$prefix/node_modules/.bin/claude" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "Installing $want into $prefix…" >&2
  rm -rf "$prefix"; mkdir -p "$prefix"
  echo '{"name":"harness-agents","private":true}' >"$prefix/package.json"
  # npm's own settings only: the outer npm's (under `npm test`) must not leak in.
  (cd "$prefix" && env -u npm_config_user_agent npm install --no-audit --no-fund --no-save \
    "@anthropic-ai/claude-code@$CLAUDE" "@modelcontextprotocol/inspector@$INSPECTOR" \
    "@github/copilot@$COPILOT" "@openai/codex@$CODEX" "@google/gemini-cli@$GEMINI" >&2)
  echo "$want" >"$stamp"
fi
echo "$PWD/$prefix/node_modules/.bin"
