#!/usr/bin/env bash
# Installs what the plain-Node tests need before mocha runs (`npm test`, `npm run test:core`):
#   - bubblewrap (bwrap): the Linux sandbox stdio servers run in (test/core/sandbox.test.ts)
#   - socat: bridges a unix socket into that sandbox
# Nothing to do when both are on PATH, or off Linux. Otherwise the same installer as the harness's
# (test/harness/debian-packages.sh): apt-get as root, or one message naming the packages and the
# command, and a stop; HARNESS_SKIP_APT=1 goes on without them (the sandbox tests then fail).
set -euo pipefail
[ "$(uname -s)" = Linux ] || exit 0
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v socat >/dev/null 2>&1 || missing+=(socat)
[ "${#missing[@]}" -gt 0 ] || exit 0
source "$(dirname "$0")/../test/harness/debian-packages.sh"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
install_debian_packages "$log" "${missing[@]}"
