#!/usr/bin/env bash
# tool-versions.sh installs or finds every tool the tests run on (through the setup
# scripts, which print their progress on stderr and return at once when warm) and prints
# the version of each, one line apiece, so a CI log starts with what it ran against:
#
#   go              go version go1.26.8 linux/amd64
#   kube-apiserver  Kubernetes v1.36.3
#   ...
set -euo pipefail
if [[ $# -gt 0 ]]; then
  printf 'usage: %s\n  sets up the tools the tests run on and prints their versions; it takes no arguments\n' "$0" >&2
  exit 2
fi
cd "$(dirname "$0")/.."

row() { printf '%-16s %s\n' "$1" "$2"; }
# first_line CMD... runs CMD and keeps its first line of output, or says why not.
first_line() { local out; out="$("$@" 2>/dev/null)" || out="(failed: $*)"; printf '%s\n' "${out%%$'\n'*}"; }
# module_version BINARY MODULE is the version of MODULE that BINARY was built from.
module_version() { go version -m "$1" | awk -v m="$2" '$1 == "mod" && $2 == m { print $3 }'; }

assets="$(hack/setup-envtest.sh)"
chromium="$(hack/setup-chromium.sh)"
hack/rekor-up.sh >/dev/null
rekor_env="${CAIRN_REKOR_STATE:-${TMPDIR:-/tmp}/cairn-rekor-$(id -u)}/env"
rekor_bin="$(. "$rekor_env" && printf '%s' "$REKOR_BIN_DIR")"
mariadbd="$(command -v mariadbd || command -v /usr/sbin/mariadbd || echo mariadbd)"
hack/postgres-up.sh >/dev/null
postgres_env="${CAIRN_POSTGRES_STATE:-${TMPDIR:-/tmp}/cairn-postgres-$(id -u)}/env"
postgres_bin="$(. "$postgres_env" && printf '%s' "$CAIRN_POSTGRES_BIN_DIR")"
omniwitness_bin="$(hack/omniwitness.sh build | sed -n 's/^OMNIWITNESS_BIN=//p')"
rekor_v2_bin="$(hack/rekor-v2-up.sh build)"

row go "$(go version)"
row kube-apiserver "$(first_line "$assets/kube-apiserver" --version)"
row kubectl "$(first_line "$assets/kubectl" version --client)"
row etcd "$(first_line "$assets/etcd" --version)"
row chromium "$(first_line "$chromium" --version) at $chromium"
if command -v dpkg-query >/dev/null && dpkg-query -W chromium >/dev/null 2>&1; then
  row "" "Debian package $(dpkg-query -W -f '${Package} ${Version}' chromium)"
fi
row python3 "$(first_line python3 --version) at $(command -v python3 || echo "(none on PATH)")"
row mariadb "$(first_line "$mariadbd" --version)"
row postgresql "$(first_line "$postgres_bin/postgres" --version) at $postgres_bin"
row trillian "$(module_version "$rekor_bin/trillian_log_server" github.com/google/trillian)"
row rekor "$(module_version "$rekor_bin/rekor-server" github.com/sigstore/rekor)"
row omniwitness "$(module_version "$omniwitness_bin" github.com/transparency-dev/witness) at $omniwitness_bin"
row rekor-tiles "$(module_version "$rekor_v2_bin/rekor-server-posix" github.com/sigstore/rekor-tiles/v2) at $rekor_v2_bin"
# timestamp-server is built from a patched copy of its module, so its build info says (devel).
row tsa "timestamp-authority $("$rekor_v2_bin/timestamp-server" version 2>/dev/null | sed -n 's/^GitVersion:[[:space:]]*//p') (metrics address patched)"
