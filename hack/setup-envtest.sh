#!/usr/bin/env bash
# setup-envtest.sh builds the control-plane binaries that envtest and `cairn dev` run:
# kube-apiserver and kubectl from k8s.io/kubernetes, and etcd from go.etcd.io/etcd/server.
#
# Everything comes from the Go module proxy; nothing is downloaded prebuilt. Binaries are
# cached outside the work tree, one directory per Kubernetes version, and a warm cache makes
# this script return at once. The cache directory is printed on stdout, so:
#
#   export KUBEBUILDER_ASSETS="$(hack/setup-envtest.sh)"
#
# Progress goes to stderr. Binaries are built one at a time to keep memory in bounds.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-3.6.16}"
CACHE_ROOT="${CAIRN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn}"
ASSETS="$CACHE_ROOT/envtest/$KUBE_VERSION"

log() { printf 'setup-envtest: %s\n' "$*" >&2; }
. "$(dirname "$0")/lock.sh"

have_all() {
  [[ -x "$ASSETS/kube-apiserver" && -x "$ASSETS/kubectl" && -x "$ASSETS/etcd" ]]
}

if have_all; then
  printf '%s\n' "$ASSETS"
  exit 0
fi

mkdir -p "$ASSETS"
# One builder at a time: a second caller waits for the first and then finds the cache warm.
exec 9>"$ASSETS/.lock"
take_lock 9 "$ASSETS/.lock" "build of the control-plane binaries"
if have_all; then
  printf '%s\n' "$ASSETS"
  exit 0
fi

export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# new_wrapper DIR MODULE@VERSION PACKAGE... writes a module that depends on MODULE and
# imports the given main packages, so `go mod tidy` resolves their whole build list.
new_wrapper() {
  local dir="$1" req="$2"; shift 2
  mkdir -p "$dir"
  printf 'module cairn.local/envtest-build\n\ngo 1.26\n\nrequire %s\n' "${req/@/ }" >"$dir/go.mod"
  {
    printf '//go:build tools\n\npackage tools\n\nimport (\n'
    local pkg
    for pkg in "$@"; do printf '\t_ "%s"\n' "$pkg"; done
    printf ')\n'
  } >"$dir/tools.go"
}

build() { # build DIR PACKAGE OUTPUT [LDFLAGS]
  local dir="$1" pkg="$2" out="$3" ldflags="${4:-}"
  log "building $(basename "$out") from $pkg (cold builds take minutes)"
  (cd "$dir" && go build -trimpath -ldflags "-s -w $ldflags" -o "$out.tmp" "$pkg")
  mv "$out.tmp" "$out"
}

if [[ ! -x "$ASSETS/kube-apiserver" || ! -x "$ASSETS/kubectl" ]]; then
  kdir="$work/kubernetes"
  new_wrapper "$kdir" "k8s.io/kubernetes@v$KUBE_VERSION" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl
  # k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with local
  # paths that a dependent module does not see; point each one at its published release.
  gomod="$(cd "$kdir" && go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
  staging_version="v0.${KUBE_VERSION#1.}"
  grep -oE '^[[:space:]]*k8s\.io/[a-z0-9-]+ => \./staging/' "$gomod" | awk '{print $1}' |
    while read -r mod; do
      printf 'replace %s => %s %s\n' "$mod" "$mod" "$staging_version"
    done >>"$kdir/go.mod"
  log "resolving k8s.io/kubernetes v$KUBE_VERSION with $(grep -c '^replace' "$kdir/go.mod") staging modules at $staging_version"
  (cd "$kdir" && go mod tidy)
  minor="${KUBE_VERSION#*.}"; minor="${minor%%.*}"
  ld=""
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $pkg.gitVersion=v$KUBE_VERSION -X $pkg.gitMajor=${KUBE_VERSION%%.*} -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
  done
  [[ -x "$ASSETS/kube-apiserver" ]] || build "$kdir" k8s.io/kubernetes/cmd/kube-apiserver "$ASSETS/kube-apiserver" "$ld"
  [[ -x "$ASSETS/kubectl" ]] || build "$kdir" k8s.io/kubernetes/cmd/kubectl "$ASSETS/kubectl" "$ld"
fi

if [[ ! -x "$ASSETS/etcd" ]]; then
  edir="$work/etcd"
  new_wrapper "$edir" "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" go.etcd.io/etcd/server/v3
  (cd "$edir" && go mod tidy)
  build "$edir" go.etcd.io/etcd/server/v3 "$ASSETS/etcd"
fi

have_all
log "ready in $ASSETS"
printf '%s\n' "$ASSETS"
