#!/usr/bin/env bash
# Installs the locked dependencies when node_modules is missing or older than the lockfile,
# so `npm test` and `npm run demo` work on a fresh clone with nothing installed.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  echo "Installing dependencies (npm ci)…" >&2
  npm ci --no-audit --no-fund >&2
fi
