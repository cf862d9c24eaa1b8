#!/usr/bin/env bash
# setup-chromium.sh makes sure Debian's headless-capable Chromium is installed, for the
# browser test of the chain service's /docs and /redoc pages (internal/api). It installs
# the `chromium` package with apt-get when no chromium binary is found, and does nothing
# (and prints nothing else) when one is. The binary's path is printed on stdout, so:
#
#   export CAIRN_CHROMIUM="$(hack/setup-chromium.sh)"
#
# Progress goes to stderr. Installing needs root, or sudo without a password.
set -euo pipefail

log() { printf 'setup-chromium: %s\n' "$*" >&2; }
. "$(dirname "$0")/lock.sh"

find_chromium() {
  local name
  for name in chromium chromium-browser; do
    if command -v "$name" >/dev/null 2>&1; then
      command -v "$name"
      return 0
    fi
  done
  return 1
}

if path="$(find_chromium)"; then
  printf '%s\n' "$path"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  log "no chromium found and no apt-get to install it with; install Chromium by hand"
  exit 1
fi

sudo=()
if [[ "$(id -u)" != 0 ]]; then
  if ! command -v sudo >/dev/null 2>&1; then
    log "installing chromium needs root: run this script as root or install sudo"
    exit 1
  fi
  sudo=(sudo -n)
fi

# One installer at a time: dpkg takes its own lock, but a second caller should wait for
# the first rather than fail on it.
lock="${TMPDIR:-/tmp}/cairn-setup-chromium.lock"
exec 9>"$lock"
take_lock 9 "$lock" "Chromium install"
if path="$(find_chromium)"; then
  printf '%s\n' "$path"
  exit 0
fi

log "installing Debian's chromium package (this takes a minute)"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq >&2
"${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium >&2

if ! path="$(find_chromium)"; then
  log "apt-get installed chromium, but no chromium binary is on PATH"
  exit 1
fi
log "installed $("$path" --version 2>/dev/null || echo chromium)"
printf '%s\n' "$path"
