# Sourced by install.sh (the demo's and the real-VS-Code tests' packages) and by
# scripts/install-test-packages.sh (the sandbox tests' bubblewrap and socat): installs Debian
# packages, or stops with one message that says exactly what to install when that cannot be done
# here (no apt-get, or not root). HARNESS_SKIP_APT=1 skips it for packages installed some other way.
# HARNESS_EUID and HARNESS_APT_GET stand in for the user id and the apt-get command, so a test can
# play a normal user or a system without apt (test/core/harness-install.test.ts).

# ensure_debian_packages LOGFILE PACKAGE...: those of the packages dpkg does not list as installed.
ensure_debian_packages() {
  local logfile="$1" p
  shift
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  install_debian_packages "$logfile" "${missing[@]}"
}

# install_debian_packages LOGFILE PACKAGE...: installs these (none: nothing to do), or stops.
install_debian_packages() {
  local logfile="$1"
  shift
  local missing=("$@")
  [ "${#missing[@]}" -gt 0 ] && [ "${HARNESS_SKIP_APT:-}" != 1 ] || return 0
  local apt="${HARNESS_APT_GET:-apt-get}"
  if ! command -v "$apt" >/dev/null 2>&1; then
    local chromium=''
    [[ " ${missing[*]} " == *" chromium "* ]] && chromium=" (Chromium must be on PATH as 'chromium')"
    {
      echo "MCP Host's demo and tests need these Debian packages: ${missing[*]}"
      echo "This system has no apt-get: the harness is written for Debian and Ubuntu. Install the same"
      echo "programs another way$chromium, then run again with HARNESS_SKIP_APT=1."
      echo "To try the extension without the harness: npm run package, then install the .vsix (README, \"Install the VSIX\")."
    } >&2
    exit 1
  fi
  if [ "${HARNESS_EUID:-$(id -u)}" != 0 ]; then
    {
      echo "MCP Host's demo and tests need these Debian packages, and installing them needs root:"
      echo "  sudo apt-get install -y --no-install-recommends ${missing[*]}"
      echo "Run that, then run this again."
      echo "To try the extension without the harness: npm run package, then install the .vsix (README, \"Install the VSIX\")."
    } >&2
    exit 1
  fi
  echo "[install] apt-get install ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  # One apt at a time: the harness and the plain-Node tests may install side by side.
  local lock
  exec {lock}>/tmp/mcp-host-apt.lock
  flock "$lock" 2>/dev/null || true
  "$apt" update -qq >&2
  "$apt" install -y -qq --no-install-recommends "${missing[@]}" >"$logfile" 2>&1 || { tail -40 "$logfile" >&2; exit 1; }
  exec {lock}>&-
}
