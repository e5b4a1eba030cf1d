#!/usr/bin/env bash
# Installs what the real-VS-Code tests and the demo need, idempotently, cached under .harness/:
#   - Debian packages: chromium (driven by playwright-core), fonts, and code-server's native build deps
#   - node@24 from npm (code-server 4.139.x needs Node 24; the system node may be older)
#   - code-server@4.139.1 (embeds VS Code 1.139.1), installed with Node 24 first on PATH
# Prints nothing but progress on stderr; safe to run many times (a warm run takes about a second).
# Environment: HARNESS_DIR (default <repo>/.harness), HARNESS_NPM_CACHE (default $HARNESS_DIR/npm-cache),
#   CODE_SERVER_VERSION, HARNESS_SKIP_APT=1.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
H="${HARNESS_DIR:-$REPO/.harness}"
CS_VERSION="${CODE_SERVER_VERSION:-4.139.1}"
NODE_MAJOR=24
APT_PACKAGES=(chromium fonts-liberation fonts-dejavu-core curl ca-certificates libkrb5-dev pkg-config g++ make python3)

log() { printf '[install %s] %s\n' "$(date -u +%T)" "$*" >&2; }
mkdir -p "$H"
# Under `npm test` the environment carries the outer npm's settings (npm_config_user_agent says
# node/v20, which code-server's postinstall rejects; NODE and npm_node_execpath point at that node):
# drop them so the npm below runs as a fresh client on Node 24.
for v in $(compgen -e | grep -i '^npm_' || true); do unset "$v"; done
unset NODE INIT_CWD
# npm must not depend on the caller's HOME (CI gives no guarantees about it).
export npm_config_cache="${HARNESS_NPM_CACHE:-$H/npm-cache}" npm_config_update_notifier=false \
       npm_config_fund=false npm_config_audit=false npm_config_yes=true

# One installer at a time (the demo and the tests may start together).
exec 9>"$H/.install.lock"
flock 9 2>/dev/null || true

# ---- Debian packages
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ] && [ "${HARNESS_SKIP_APT:-}" != 1 ]; then
  log "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$H/apt.log" 2>&1 || { tail -40 "$H/apt.log" >&2; exit 1; }
fi
command -v chromium >/dev/null || { log "chromium is missing (need /usr/bin/chromium)"; exit 1; }

# ---- node@24 (a registry package that ships the binary)
N24="$H/node24/node_modules/node/bin/node"
if [ -x "$N24" ] && "$N24" --version 2>/dev/null | grep -q "^v$NODE_MAJOR\."; then
  :
else
  log "npm install node@$NODE_MAJOR"
  rm -rf "$H/node24"; mkdir -p "$H/node24"
  (cd "$H/node24" && echo '{"name":"harness-node24","private":true}' >package.json \
    && npm install --no-save "node@$NODE_MAJOR" >"$H/node24-install.log" 2>&1) \
    || { tail -40 "$H/node24-install.log" >&2; exit 1; }
  "$N24" --version >/dev/null
fi

# Headers for native modules (node-gyp) come from the node@24 package itself: node-gyp would
# otherwise download them from nodejs.org (unreachable here) or use whatever `nodedir` a user
# .npmrc names (e.g. Debian's Node 20 headers in /usr).
hdr="$(find -L "$H/node24/node_modules" -path '*/include/node/node.h' -print -quit 2>/dev/null || true)"
[ -n "$hdr" ] || { log "node@$NODE_MAJOR ships no headers (include/node/node.h)"; exit 1; }
export npm_config_nodedir="${hdr%/include/node/node.h}"

# ---- code-server
CS_DIR="$H/code-server"
CS_PKG="$CS_DIR/node_modules/code-server/package.json"
# The stamp names what the install depends on; bump RECIPE when the way it is installed changes.
RECIPE=2
STAMP="code-server $CS_VERSION node $("$N24" --version) recipe $RECIPE"
have="$([ -f "$CS_PKG" ] && "$N24" -p "require('$CS_PKG').version" 2>/dev/null || true)"
if [ "$have" = "$CS_VERSION" ] && [ "$(cat "$CS_DIR/.complete" 2>/dev/null)" = "$STAMP" ]; then
  :
else
  log "npm install code-server@$CS_VERSION (have: ${have:-none}); this takes 3-5 minutes on 2 cores"
  rm -rf "$CS_DIR"; mkdir -p "$CS_DIR"
  (cd "$CS_DIR" && echo '{"name":"harness-code-server","private":true}' >package.json \
    && PATH="$(dirname "$N24"):$PATH" npm install --no-save "code-server@$CS_VERSION" >"$H/code-server-install.log" 2>&1) \
    || { tail -60 "$H/code-server-install.log" >&2; exit 1; }
  # Smoke check with scratch HOME so nothing lands in the caller's home.
  mkdir -p "$H/tmp/install-home"
  HOME="$H/tmp/install-home" "$N24" "$CS_DIR/node_modules/code-server/out/node/entry.js" --version >&2
  echo "$STAMP" >"$CS_DIR/.complete"
fi

# Paths for the scripts that use this install.
cat >"$H/paths.env" <<ENV
HARNESS_DIR=$H
NODE24=$N24
CODE_SERVER_JS=$CS_DIR/node_modules/code-server/out/node/entry.js
VSCODE_SERVER_MAIN=$CS_DIR/node_modules/code-server/lib/vscode/out/server-main.js
CHROMIUM=$(command -v chromium)
CODE_SERVER_VERSION=$CS_VERSION
ENV
log "ready: node $("$N24" --version), code-server $CS_VERSION, $(chromium --version 2>/dev/null | head -1)"
