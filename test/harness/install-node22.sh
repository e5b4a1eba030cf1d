#!/usr/bin/env bash
# Installs Node 22 from the npm registry into .harness/node22 (the conformance suite needs it;
# the project itself runs on Node 20). Idempotent: does nothing when the binary is already there.
# Prints the path of the node binary on stdout.
set -euo pipefail
cd "$(dirname "$0")/../.."
prefix=.harness/node22
bin="$prefix/node_modules/node/bin/node"
if [ ! -x "$bin" ] || ! "$bin" --version 2>/dev/null | grep -q '^v22\.'; then
  echo "Installing node@22 into $prefix…" >&2
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-audit --no-fund --no-save node@22 >&2
fi
echo "$PWD/$bin"
