#!/usr/bin/env bash
# setup-crds.sh fetches the CustomResourceDefinitions of the other projects that config/
# uses, so that the install tests (test/install) can dry-run config/ against an envtest API
# server that knows those kinds:
#
#   cert-manager.io Certificate and Issuer     (config/certmanager, in config/default)
#   monitoring.coreos.com ServiceMonitor       (config/prometheus)
#
# They are the projects' own published CRDs, taken from their Go modules through the Go
# module proxy (github.com/cert-manager/cert-manager: deploy/crds/;
# github.com/prometheus-operator/prometheus-operator: example/prometheus-operator-crd/);
# nothing else is downloaded. They are cached outside the work tree, one directory per pair
# of versions, and a warm cache makes this script return at once. The directory is printed
# on stdout, so:
#
#   export CAIRN_EXTERNAL_CRDS="$(hack/setup-crds.sh)"
set -euo pipefail

CERT_MANAGER_VERSION="${CERT_MANAGER_VERSION:-v1.21.2}"
PROMETHEUS_OPERATOR_VERSION="${PROMETHEUS_OPERATOR_VERSION:-v0.85.0}"
CACHE_ROOT="${CAIRN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn}"
DIR="$CACHE_ROOT/crds/cert-manager-$CERT_MANAGER_VERSION-prometheus-operator-$PROMETHEUS_OPERATOR_VERSION"

# module path, version, then the files to take from it.
CERT_MANAGER=(github.com/cert-manager/cert-manager "$CERT_MANAGER_VERSION"
  deploy/crds/cert-manager.io_certificates.yaml deploy/crds/cert-manager.io_issuers.yaml)
PROMETHEUS_OPERATOR=(github.com/prometheus-operator/prometheus-operator "$PROMETHEUS_OPERATOR_VERSION"
  example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml)

log() { printf 'setup-crds: %s\n' "$*" >&2; }
. "$(dirname "$0")/lock.sh"

have_all() {
  local f
  for f in "${CERT_MANAGER[@]:2}" "${PROMETHEUS_OPERATOR[@]:2}"; do
    [[ -s "$DIR/$(basename "$f")" ]] || return 1
  done
}

if have_all; then
  printf '%s\n' "$DIR"
  exit 0
fi

mkdir -p "$DIR"
exec 9>"$DIR/.lock"
take_lock 9 "$DIR/.lock" "fetch of the CRDs"
if have_all; then
  printf '%s\n' "$DIR"
  exit 0
fi

export GOTOOLCHAIN=local GOFLAGS=-mod=mod
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# take MODULE VERSION FILE... copies each FILE of the module at VERSION into $DIR.
take() {
  local mod="$1" version="$2"; shift 2
  log "fetching $mod $version"
  local src
  src="$(cd "$work" && go mod download -json "$mod@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -n "$src" ]] || { log "go mod download $mod@$version gave no directory"; exit 1; }
  local f
  for f in "$@"; do
    [[ -s "$src/$f" ]] || { log "$mod $version has no $f"; exit 1; }
    cp "$src/$f" "$DIR/.$(basename "$f").tmp"
    chmod 0644 "$DIR/.$(basename "$f").tmp"
    mv "$DIR/.$(basename "$f").tmp" "$DIR/$(basename "$f")"
  done
}

take "${CERT_MANAGER[@]}"
take "${PROMETHEUS_OPERATOR[@]}"
have_all
log "ready in $DIR"
printf '%s\n' "$DIR"
