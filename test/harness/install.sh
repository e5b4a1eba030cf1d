#!/usr/bin/env bash
# Installs what the real-VS-Code tests and the demo need, idempotently, cached under .harness/:
#   - Debian packages: chromium (driven by playwright-core), fonts (one with CJK glyphs, for the zh-cn
#     e2e test), and code-server's native build deps
#   - node@24 from npm (code-server 4.139.x needs Node 24; the system node may be older)
#   - code-server@4.139.1 (embeds VS Code 1.139.1), installed with Node 24 first on PATH
# With CODE_SERVER_VERSION=<older> and NODE_MAJOR=<its Node> it installs that code-server beside the
# default one (.harness/code-server-<version>, .harness/node<major>) and writes .harness/paths-<version>.env:
# the compatibility smoke test uses it for the oldest VS Code that engines.vscode claims.
# Prints nothing but progress on stderr; safe to run many times (a warm run takes about a second).
# Environment: HARNESS_DIR (default <repo>/.harness), HARNESS_NPM_CACHE (default $HARNESS_DIR/npm-cache),
#   CODE_SERVER_VERSION, NODE_MAJOR (default 24), HARNESS_SKIP_APT=1 (see debian-packages.sh).
set -euo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
H="${HARNESS_DIR:-$REPO/.harness}"
DEFAULT_CS_VERSION=4.139.1
CS_VERSION="${CODE_SERVER_VERSION:-$DEFAULT_CS_VERSION}"
NODE_MAJOR="${NODE_MAJOR:-24}"
if [ "$CS_VERSION" = "$DEFAULT_CS_VERSION" ]; then
  CS_DIR="$H/code-server" PATHS_ENV="$H/paths.env"
else
  CS_DIR="$H/code-server-$CS_VERSION" PATHS_ENV="$H/paths-$CS_VERSION.env"
fi
APT_PACKAGES=(chromium fonts-liberation fonts-dejavu-core fonts-wqy-microhei curl ca-certificates libkrb5-dev pkg-config g++ make python3)
# Older code-server builds need a ripgrep binary from somewhere other than GitHub (see seed_ripgrep).
[ "$CS_VERSION" = "$DEFAULT_CS_VERSION" ] || APT_PACKAGES+=(ripgrep)

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

# ---- Debian packages (or one message saying what to install, when this user or system cannot)
source "$REPO/test/harness/debian-packages.sh"
ensure_debian_packages "$H/apt.log" "${APT_PACKAGES[@]}"
command -v chromium >/dev/null || { log "chromium is missing: install Chromium so that 'chromium' is on PATH"; exit 1; }

# ---- node@<major> (a registry package that ships the binary)
ND="$H/node$NODE_MAJOR"
NODE_BIN="$ND/node_modules/node/bin/node"
if [ -x "$NODE_BIN" ] && "$NODE_BIN" --version 2>/dev/null | grep -q "^v$NODE_MAJOR\."; then
  :
else
  log "npm install node@$NODE_MAJOR"
  rm -rf "$ND"; mkdir -p "$ND"
  (cd "$ND" && echo "{\"name\":\"harness-node$NODE_MAJOR\",\"private\":true}" >package.json \
    && npm install --no-save "node@$NODE_MAJOR" >"$H/node$NODE_MAJOR-install.log" 2>&1) \
    || { tail -40 "$H/node$NODE_MAJOR-install.log" >&2; exit 1; }
  "$NODE_BIN" --version >/dev/null
fi

# Headers for native modules (node-gyp) come from the node@24 package itself: node-gyp would
# otherwise download them from nodejs.org (unreachable here) or use whatever `nodedir` a user
# .npmrc names (e.g. Debian's Node 20 headers in /usr).
hdr="$(find -L "$ND/node_modules" -path '*/include/node/node.h' -print -quit 2>/dev/null || true)"
[ -n "$hdr" ] || { log "node@$NODE_MAJOR ships no headers (include/node/node.h)"; exit 1; }
export npm_config_nodedir="${hdr%/include/node/node.h}"

# ---- code-server
# VS Code builds before @vscode/ripgrep-universal depend on @vscode/ripgrep, whose postinstall downloads
# rg from GitHub (unreachable here) unless the archive is already in its cache,
# $TMPDIR/vscode-ripgrep-cache-<package version>/ripgrep-<rg release>-<target>.tar.gz. Put Debian's rg
# there under the names the version that code-server pins (npm-shrinkwrap.json) will look for.
seed_ripgrep() {
  local work="$H/tmp/ripgrep-seed" tgz rgver rgtgz release target
  rm -rf "$work"; mkdir -p "$work"
  tgz="$(cd "$work" && npm pack --silent "code-server@$CS_VERSION" | tail -1)"
  rgver="$(tar xzOf "$work/$tgz" package/lib/vscode/npm-shrinkwrap.json 2>/dev/null \
    | "$NODE_BIN" -e 'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>{const p=JSON.parse(s).packages||{};process.stdout.write((p["node_modules/@vscode/ripgrep"]||{}).version||"")})' || true)"
  [ -n "$rgver" ] || return 0
  rgtgz="$(cd "$work" && npm pack --silent "@vscode/ripgrep@$rgver" | tail -1)"
  release="$(tar xzOf "$work/$rgtgz" package/lib/postinstall.js | sed -n "s/^const VERSION = '\(.*\)';/\1/p")"
  case "$(uname -m)" in x86_64) target=x86_64-unknown-linux-musl ;; aarch64) target=aarch64-unknown-linux-musl ;; *) return 0 ;; esac
  command -v rg >/dev/null || { log "ripgrep (rg) is missing; apt-get install ripgrep"; exit 1; }
  mkdir -p "$H/tmp/rg-cache/vscode-ripgrep-cache-$rgver"
  tar czf "$H/tmp/rg-cache/vscode-ripgrep-cache-$rgver/ripgrep-$release-$target.tar.gz" -C "$(dirname "$(command -v rg)")" rg
  log "seeded @vscode/ripgrep $rgver ($release) with $(command -v rg)"
}
CS_PKG="$CS_DIR/node_modules/code-server/package.json"
# The stamp names what the install depends on; bump RECIPE when the way it is installed changes.
RECIPE=2
STAMP="code-server $CS_VERSION node $("$NODE_BIN" --version) recipe $RECIPE"
have="$([ -f "$CS_PKG" ] && "$NODE_BIN" -p "require('$CS_PKG').version" 2>/dev/null || true)"
if [ "$have" = "$CS_VERSION" ] && [ "$(cat "$CS_DIR/.complete" 2>/dev/null)" = "$STAMP" ]; then
  :
else
  log "npm install code-server@$CS_VERSION with node $NODE_MAJOR (have: ${have:-none}); this takes 3-5 minutes on 2 cores"
  rm -rf "$CS_DIR"; mkdir -p "$CS_DIR"
  rm -rf "$H/tmp/rg-cache"; mkdir -p "$H/tmp/rg-cache"
  [ "$CS_VERSION" = "$DEFAULT_CS_VERSION" ] || seed_ripgrep
  (cd "$CS_DIR" && echo '{"name":"harness-code-server","private":true}' >package.json \
    && PATH="$(dirname "$NODE_BIN"):$PATH" npm_config_unsafe_perm=true CXXFLAGS="${CXXFLAGS:-} -fpermissive" TMPDIR="$H/tmp/rg-cache" \
       npm install --no-save "code-server@$CS_VERSION" >"$CS_DIR.install.log" 2>&1) \
    || { tail -60 "$CS_DIR.install.log" >&2; exit 1; }
  # Older code-server's postinstall refuses to run as root unless npm_config_unsafe_perm says so, and
  # its kerberos module's node-addon-api predates the const napi_env of newer Node 20 headers (-fpermissive).
  # Smoke check with scratch HOME so nothing lands in the caller's home.
  mkdir -p "$H/tmp/install-home"
  HOME="$H/tmp/install-home" "$NODE_BIN" "$CS_DIR/node_modules/code-server/out/node/entry.js" --version >&2
  echo "$STAMP" >"$CS_DIR/.complete"
fi

# Paths for the scripts that use this install.
cat >"$PATHS_ENV" <<ENV
HARNESS_DIR=$H
CODE_SERVER_NODE=$NODE_BIN
CODE_SERVER_JS=$CS_DIR/node_modules/code-server/out/node/entry.js
VSCODE_SERVER_MAIN=$CS_DIR/node_modules/code-server/lib/vscode/out/server-main.js
CHROMIUM=$(command -v chromium)
CODE_SERVER_VERSION=$CS_VERSION
ENV
log "ready: node $("$NODE_BIN" --version), code-server $CS_VERSION, $(chromium --version 2>/dev/null | head -1)"
