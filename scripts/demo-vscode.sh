#!/usr/bin/env bash
# The extension in a real VS Code in your browser: builds the VSIX (unless nothing changed), installs code-server (cached under
# .harness/), installs the VSIX, opens demo/workspace and prints the URL. Ctrl-C stops it.
#   bash scripts/demo-vscode.sh [--port 8080] [--check] [--no-build] [--rebuild]
# --check starts it, verifies the page and saves media/screenshots/demo.png, then stops.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
exec node scripts/demo-vscode.js "$@"
