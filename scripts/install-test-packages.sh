#!/usr/bin/env bash
# Installs the Debian packages the plain-Node tests need before mocha runs, idempotently:
#   - bubblewrap: the Linux sandbox stdio servers run in (test/core/sandbox.test.ts)
#   - socat: bridges a unix socket into that sandbox
# A no-op when they are present, when apt-get is not there (not Debian), or with SKIP_TEST_APT=1.
# Installing needs root (CI runs as root); without it, it says what is missing and goes on, and the
# sandbox tests then fail with the launcher's own message naming the package.
set -euo pipefail
PACKAGES=(bubblewrap socat)
[ "${SKIP_TEST_APT:-}" = 1 ] && exit 0
command -v dpkg-query >/dev/null && command -v apt-get >/dev/null || exit 0
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ "${#missing[@]}" -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "[install-test-packages] missing Debian packages: ${missing[*]} (apt-get install them as root)" >&2
  exit 0
fi
echo "[install-test-packages] apt-get install ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# One apt at a time: the VS Code harness's installer may run beside this.
exec 9>/tmp/mcp-host-apt.lock
flock 9 2>/dev/null || true
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
