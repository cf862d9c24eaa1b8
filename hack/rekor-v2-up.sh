#!/usr/bin/env bash
# rekor-v2-up.sh runs a real Sigstore Rekor v2 (rekor-tiles, POSIX storage) and a real RFC 3161
# timestamp authority (sigstore timestamp-authority) on 127.0.0.1 for integration tests.
#
#   hack/rekor-v2-up.sh [up]        build if needed (cold: several minutes), make the keys once,
#                                   start everything and wait until it answers
#   hack/rekor-v2-up.sh build       only build (or find) the binaries; prints their directory
#   hack/rekor-v2-up.sh down        stop every process this script started (by pid file)
#   hack/rekor-v2-up.sh down --wipe ... and delete the state dir (keys, log, logs)
#   hack/rekor-v2-up.sh status      show each component; exit 0 only if all of them answer
#   hack/rekor-v2-up.sh stop-rekor  stop ONLY rekor-server (uploads then fail with 502 from the
#                                   front; the tiles and the TSA stay up): a log outage for tests
#   hack/rekor-v2-up.sh start-rekor start rekor-server again (same port, key and tree), wait ready
#
# `up` prints the env file on stdout and writes it to $STATE/env (KEY=VALUE lines, shell-quoted
# only where needed), so a test harness can do
#   hack/rekor-v2-up.sh >/dev/null && . "${CAIRN_REKOR_V2_STATE:-/tmp/cairn-rekor-v2-$(id -u)}/env"
# It holds:
#   REKOR_V2_URL          the log's one base URL, as a public Rekor v2 log has:
#                           POST /api/v2/log/entries (answers once a checkpoint covers the entry)
#                           GET  /checkpoint, /tile/<L>/<N>[.p/<W>], /tile/entries/<N>[.p/<W>]
#   REKOR_V2_ORIGIN       the checkpoint origin (first line; also the note key name): the host
#                         name of REKOR_V2_URL without its port, as Sigstore's verifiers expect
#                         (sigstore-go checks a Rekor v2 checkpoint as signed by the host name of
#                         the trusted root's baseUrl)
#   REKOR_V2_PUBLIC_KEY   the log's Ed25519 public key (PEM file)
#   REKOR_V2_VKEY         the same key as a signed-note verifier key, name+hash+base64
#   REKOR_V2_LOG_ID       base64 of the full SHA-256 key ID, as in TransparencyLogEntry.logId.keyId
#   REKOR_V2_SERVER_URL   rekor-server's own HTTP API (no tiles), REKOR_V2_GRPC_ADDR its gRPC one
#   TSA_URL               the timestamp authority: POST /api/v1/timestamp
#   TSA_TIMESTAMP_URL     that timestamp endpoint, $TSA_URL/api/v1/timestamp
#                         (application/timestamp-query), GET /api/v1/timestamp/certchain
#   TSA_CERT_CHAIN        its certificate chain (PEM, leaf first, then the root)
#   TSA_ROOT_CERT         the root alone (for openssl ts -verify -CAfile)
#   ...the state dir, the storage dir, every port and the versions.
# Progress and errors go to stderr. `up` on a healthy stack only re-checks it (about a second).
#
# What runs (each with a pid file in $STATE/run and a log in $STATE/logs):
#   rekor-server-posix  github.com/sigstore/rekor-tiles/v2/cmd/rekor-server/posix: the write
#                       API (HTTP + gRPC); it writes the C2SP tlog-tiles files to $STATE/log and
#                       signs checkpoints with an Ed25519 key made once with openssl.
#   rekor-v2-front      hack/rekor-v2-front: rekor-server does not serve the tiles it writes
#                       (upstream puts nginx in front of the directory), so this small proxy
#                       serves them and passes everything else to rekor-server.
#   timestamp-server    github.com/sigstore/timestamp-authority/v2/cmd/timestamp-server with the
#                       file signer: an ECDSA P-256 leaf (critical EKU timeStamping) under a
#                       self-made root, both made once with openssl, so the chain is stable.
#                       One local change: upstream serves Prometheus metrics on :2112 of every
#                       interface and exits when that port is taken (rekor-up.sh's Rekor v1 takes
#                       it), so the build patches that address to come from
#                       $CAIRN_TSA_METRICS_ADDR, which this script sets to 127.0.0.1:TSA_METRICS_PORT.
# Uploads: 201 with the TransparencyLogEntry once a checkpoint covers the entry, about 1 s
# (rekor-server looks for a new checkpoint once a second; --checkpoint-interval is 100 ms);
# uploads in parallel share that wait. Dedup: persistent antispam is on, so an identical
# entry again answers 409 with header X-Log-Index: <index of the first one>, across restarts.
#
# Binaries are built with the Go module proxy into a versioned cache outside the work tree:
# rekor-tiles with `go install pkg@version`; timestamp-server with `go build` in a copy of its
# module (to apply the patch above); rekor-v2-front from this repository.
#
# Environment (all optional):
#   CAIRN_CACHE_DIR           cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/cairn)
#   CAIRN_REKOR_V2_STATE      state dir (default ${TMPDIR:-/tmp}/cairn-rekor-v2-$(id -u))
#   REKOR_TILES_VERSION       default v2.3.0 (newer ones need a newer Go than 1.26)
#   TSA_VERSION               default v2.1.3
#   REKOR_V2_PORT             rekor-v2-front, i.e. REKOR_V2_URL            default 3120
#   REKOR_V2_GRPC_PORT        rekor-server gRPC                            default 3121
#   TSA_PORT                  timestamp-server HTTP                        default 3122
#   REKOR_V2_SERVER_PORT      rekor-server HTTP (behind the front)         default 3123
#   REKOR_V2_METRICS_PORT     rekor-server Prometheus metrics              default 3124
#   TSA_METRICS_PORT          timestamp-server Prometheus metrics          default 3125
#   REKOR_V2_ORIGIN           checkpoint origin, fixed when the log is made
#                             (default: the host name of REKOR_V2_URL, 127.0.0.1)
#   REKOR_V2_CHECKPOINT_INTERVAL  how often a checkpoint is published (default 100ms, the
#                             smallest Tessera's POSIX storage allows)
#   REKOR_V2_READY_TIMEOUT    seconds to wait for each component (default 60)
# Ports and the origin chosen by an earlier `up` are remembered in $STATE/env and reused by
# later commands unless overridden. Everything listens on 127.0.0.1 only.
set -euo pipefail

REKOR_TILES_VERSION="${REKOR_TILES_VERSION:-v2.3.0}"
TSA_VERSION="${TSA_VERSION:-v2.1.3}"
REKOR_TILES_MODULE=github.com/sigstore/rekor-tiles/v2
TSA_MODULE=github.com/sigstore/timestamp-authority/v2

REPO="$(cd "$(dirname "$0")/.." && pwd)"
CACHE_ROOT="${CAIRN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn}"
CACHE_DIR="$CACHE_ROOT/rekor-v2"
BIN_DIR="$CACHE_DIR/rekor-tiles-$REKOR_TILES_VERSION-tsa-$TSA_VERSION/bin"
STATE="${CAIRN_REKOR_V2_STATE:-${TMPDIR:-/tmp}/cairn-rekor-v2-$(id -u)}"
ENV_FILE="$STATE/env"
RUN_DIR="$STATE/run"   # pid files
LOG_DIR="$STATE/logs"
KEY_DIR="$STATE/keys"
STORAGE_DIR="$STATE/log" # the tlog-tiles files (checkpoint, tile/...) and .state/

log() { printf 'rekor-v2-up: %s\n' "$*" >&2; }
die() { printf 'rekor-v2-up: error: %s\n' "$*" >&2; exit 1; }
# shellcheck source=lock.sh source-path=SCRIPTDIR disable=SC1091 # -x follows them
. "$(dirname "$0")/lock.sh"
. "$(dirname "$0")/daemons.sh"

# ---------------------------------------------------------------------------------------
# Configuration: explicit environment > values remembered in $STATE/env > defaults.
# ---------------------------------------------------------------------------------------
REMEMBERED_KEYS=(REKOR_V2_PORT REKOR_V2_GRPC_PORT TSA_PORT REKOR_V2_SERVER_PORT
  REKOR_V2_METRICS_PORT TSA_METRICS_PORT REKOR_V2_ORIGIN REKOR_V2_CHECKPOINT_INTERVAL)
if [[ -f "$ENV_FILE" ]]; then
  while IFS='=' read -r key value; do
    for k in "${REMEMBERED_KEYS[@]}"; do
      if [[ "$key" == "$k" && -z "${!k:-}" ]]; then
        printf -v "$k" '%s' "$value"
      fi
    done
  done <"$ENV_FILE"
fi
# The origin is fixed when the log is made; $STATE/origin keeps it even without the env file.
if [[ -z "${REKOR_V2_ORIGIN:-}" && -s "$STATE/origin" ]]; then
  REKOR_V2_ORIGIN="$(<"$STATE/origin")"
fi
REKOR_V2_PORT="${REKOR_V2_PORT:-3120}"
REKOR_V2_GRPC_PORT="${REKOR_V2_GRPC_PORT:-3121}"
TSA_PORT="${TSA_PORT:-3122}"
REKOR_V2_SERVER_PORT="${REKOR_V2_SERVER_PORT:-3123}"
REKOR_V2_METRICS_PORT="${REKOR_V2_METRICS_PORT:-3124}"
TSA_METRICS_PORT="${TSA_METRICS_PORT:-3125}"
REKOR_V2_ORIGIN="${REKOR_V2_ORIGIN:-127.0.0.1}"
REKOR_V2_CHECKPOINT_INTERVAL="${REKOR_V2_CHECKPOINT_INTERVAL:-100ms}"
READY_TIMEOUT="${REKOR_V2_READY_TIMEOUT:-60}"

REKOR_V2_URL="http://127.0.0.1:$REKOR_V2_PORT"
REKOR_V2_SERVER_URL="http://127.0.0.1:$REKOR_V2_SERVER_PORT"
TSA_URL="http://127.0.0.1:$TSA_PORT"

# Every component is known by one name: its pid file is $RUN_DIR/NAME.pid, its log
# $LOG_DIR/NAME.log, and NAME is also the basename of the binary it runs.
REKOR=rekor-server-posix
FRONT=rekor-v2-front
TSA=timestamp-server

REKOR_KEY="$KEY_DIR/rekor-signer.pem"   # Ed25519 private key (PKCS#8 PEM)
REKOR_PUB="$KEY_DIR/rekor.pub"          # its public key (PKIX PEM)
TSA_ROOT_KEY="$KEY_DIR/tsa-root.key"
TSA_ROOT_CERT="$KEY_DIR/tsa-root.pem"
TSA_LEAF_KEY="$KEY_DIR/tsa-leaf.key"
TSA_LEAF_CERT="$KEY_DIR/tsa-leaf.pem"
TSA_CERT_CHAIN="$KEY_DIR/tsa-chain.pem" # leaf, then root

# The front is built from this repository, into a directory named after its source's hash.
FRONT_SRC="$REPO/hack/rekor-v2-front"
front_bin() {
  local hash
  hash="$(cat "$FRONT_SRC"/*.go | sha256sum | cut -c1-12)"
  printf '%s\n' "$CACHE_DIR/front-$hash/$FRONT"
}

# ---------------------------------------------------------------------------------------
# Keys and the checkpoint check
# ---------------------------------------------------------------------------------------

# raw_pub prints the 32 raw bytes of the log's Ed25519 public key.
raw_pub() { openssl pkey -pubin -in "$REKOR_PUB" -outform DER | tail -c 32; }

# key_id prints SHA-256(origin || "\n" || 0x01 || public key): the C2SP signed-note key ID of
# an Ed25519 key. Its first 4 bytes start every checkpoint signature; rekor-server puts all
# 32 in TransparencyLogEntry.logId.keyId.
key_id() { { printf '%s\n\001' "$REKOR_V2_ORIGIN"; raw_pub; } | openssl dgst -sha256 -binary; }

# vkey prints the signed-note verifier key: origin+hex(key ID[:4])+base64(0x01 || public key).
vkey() {
  printf '%s+%s+%s\n' "$REKOR_V2_ORIGIN" "$(key_id | head -c 4 | od -An -tx1 | tr -d ' \n')" \
    "$({ printf '\001'; raw_pub; } | base64 -w0)"
}

ensure_rekor_key() {
  mkdir -p "$KEY_DIR"
  if [[ ! -s "$REKOR_KEY" ]]; then
    # A log whose key is gone cannot go on: its checkpoints would change signer.
    [[ -e "$STORAGE_DIR/checkpoint" ]] &&
      die "the log in $STORAGE_DIR exists but its signing key $REKOR_KEY is gone; run '$0 down --wipe'"
    log "generating the log's Ed25519 signing key in $REKOR_KEY"
    (umask 077 && openssl genpkey -algorithm ed25519 -out "$REKOR_KEY.tmp" 2>/dev/null) ||
      die "openssl could not generate an Ed25519 key"
    mv "$REKOR_KEY.tmp" "$REKOR_KEY"
    rm -f "$REKOR_PUB"
  fi
  if [[ ! -s "$REKOR_PUB" ]]; then
    openssl pkey -in "$REKOR_KEY" -pubout -out "$REKOR_PUB" 2>/dev/null ||
      die "openssl could not read $REKOR_KEY"
  fi
}

# ensure_tsa_chain makes the TSA's root CA and its timestamping leaf once (ECDSA P-256,
# ten years). timestamp-server checks: the chain verifies for EKU timeStamping, the leaf is
# not a CA and has exactly one EKU, marked critical, and its key is the signer's.
ensure_tsa_chain() {
  [[ -s "$TSA_CERT_CHAIN" && -s "$TSA_LEAF_KEY" && -s "$TSA_ROOT_CERT" ]] && return 0
  mkdir -p "$KEY_DIR"
  log "generating the TSA's root CA and timestamping certificate in $KEY_DIR"
  local tmp
  tmp="$(mktemp -d "$KEY_DIR/.tsa.XXXXXX")"
  cat >"$tmp/openssl.cnf" <<'EOF'
[req]
distinguished_name = dn
prompt = no
[dn]
O = Cairn local test
CN = Cairn local TSA root
[leaf_dn]
O = Cairn local test
CN = Cairn local TSA
[v3_root]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[v3_leaf]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = critical, timeStamping
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
EOF
  (
    set -e
    umask 077
    cd "$tmp"
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out root.key
    openssl req -new -x509 -config openssl.cnf -extensions v3_root -key root.key -sha256 \
      -days 3650 -set_serial "0x$(openssl rand -hex 15)" -out root.pem
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out leaf.key
    openssl req -new -config openssl.cnf -key leaf.key -subj "/O=Cairn local test/CN=Cairn local TSA" -out leaf.csr
    openssl x509 -req -in leaf.csr -CA root.pem -CAkey root.key -sha256 -days 3650 \
      -set_serial "0x$(openssl rand -hex 15)" -extfile openssl.cnf -extensions v3_leaf -out leaf.pem
    openssl verify -CAfile root.pem -purpose timestampsign leaf.pem
    cat leaf.pem root.pem >chain.pem
  ) >"$tmp/openssl.log" 2>&1 || { sed 's/^/    /' "$tmp/openssl.log" >&2; rm -rf "$tmp"; die "openssl could not make the TSA certificates"; }
  chmod 644 "$tmp/root.pem" "$tmp/leaf.pem" "$tmp/chain.pem"
  mv "$tmp/root.key" "$TSA_ROOT_KEY"
  mv "$tmp/root.pem" "$TSA_ROOT_CERT"
  mv "$tmp/leaf.key" "$TSA_LEAF_KEY"
  mv "$tmp/leaf.pem" "$TSA_LEAF_CERT"
  mv "$tmp/chain.pem" "$TSA_CERT_CHAIN"
  rm -rf "$tmp"
}

# checkpoint_ok URL fetches URL/checkpoint and checks that it is this log's: the origin line
# and an Ed25519 note signature by the log's key over the checkpoint body.
checkpoint_ok() {
  local url="$1" tmp ok=1
  tmp="$(mktemp -d)"
  if curl -fsS -m 5 -o "$tmp/cp" "$url/checkpoint" &&
    [[ "$(head -n1 "$tmp/cp")" == "$REKOR_V2_ORIGIN" ]] &&
    awk 'NF == 0 { exit } { print }' "$tmp/cp" >"$tmp/body" &&
    O="$REKOR_V2_ORIGIN" awk '$1 == "\342\200\224" && $2 == ENVIRON["O"] { print $3 }' "$tmp/cp" |
    head -n1 | base64 -d >"$tmp/sig" 2>/dev/null &&
    [[ "$(head -c 4 "$tmp/sig" | od -An -tx1)" == "$(key_id | head -c 4 | od -An -tx1)" ]] &&
    tail -c +5 "$tmp/sig" >"$tmp/sig.raw" &&
    openssl pkeyutl -verify -pubin -inkey "$REKOR_PUB" -rawin -in "$tmp/body" -sigfile "$tmp/sig.raw" >/dev/null 2>&1; then
    ok=0
  fi
  rm -rf "$tmp"
  return "$ok"
}

# ---------------------------------------------------------------------------------------
# Health checks
# ---------------------------------------------------------------------------------------
serving() { [[ "$(curl -fsS -m 5 "$1/healthz" 2>/dev/null)" == *'"status":"SERVING"'* ]]; }
rekor_healthy() { serving "$REKOR_V2_SERVER_URL" && [[ -s "$STORAGE_DIR/checkpoint" ]]; }
front_healthy() { serving "$REKOR_V2_URL" && checkpoint_ok "$REKOR_V2_URL"; }
# tsa_healthy: the TSA serves exactly the chain we made for it.
tsa_healthy() {
  local served
  served="$(curl -fsS -m 5 "$TSA_URL/api/v1/timestamp/certchain" 2>/dev/null)" || return 1
  [[ -n "$served" && "$served" == "$(<"$TSA_CERT_CHAIN")" ]]
}

# ---------------------------------------------------------------------------------------
# Installation
# ---------------------------------------------------------------------------------------
have_binaries() { [[ -x "$BIN_DIR/$REKOR" && -x "$BIN_DIR/$TSA" && -x "$(front_bin)" ]]; }

# go_env runs go with a fixed toolchain and cgo off, outside any workspace.
go_env() { GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0 "$@"; }

build_rekor() {
  log "building $REKOR_TILES_MODULE $REKOR_TILES_VERSION (cmd/rekor-server/posix) into $BIN_DIR (cold: a few minutes)"
  (cd "$CACHE_DIR" && go_env env GOFLAGS=-mod=mod GOBIN="$BIN_DIR" go install \
    "$REKOR_TILES_MODULE/cmd/rekor-server/posix@$REKOR_TILES_VERSION")
  mv "$BIN_DIR/posix" "$BIN_DIR/$REKOR"
}

# build_tsa builds timestamp-server from a copy of its module with one change: the metrics
# listener's hard-coded ":2112" becomes $CAIRN_TSA_METRICS_ADDR (":2112" when unset).
build_tsa() {
  local dir src="$CACHE_DIR/src/timestamp-authority-$TSA_VERSION" file
  log "building $TSA_MODULE $TSA_VERSION (cmd/timestamp-server, metrics address patched) into $BIN_DIR (cold: a few minutes)"
  dir="$(cd "$CACHE_DIR" && go_env env GOFLAGS=-mod=mod go mod download -json "$TSA_MODULE@$TSA_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -n "$dir" && -d "$dir" ]] || die "go mod download $TSA_MODULE@$TSA_VERSION found no module directory"
  rm -rf "$src"
  mkdir -p "$(dirname "$src")"
  cp -R "$dir" "$src"
  chmod -R u+w "$src"
  file="$src/pkg/server/prometheus.go"
  [[ "$(grep -c '":2112"' "$file" 2>/dev/null)" == 1 ]] ||
    die "cannot patch $TSA_MODULE $TSA_VERSION: $file no longer has exactly one \":2112\""
  sed -i 's/":2112"/cairnMetricsAddr()/' "$file"
  cat >"$src/pkg/server/cairn_metrics_addr.go" <<'EOF'
package server

import "os"

// cairnMetricsAddr is the metrics listener's address: $CAIRN_TSA_METRICS_ADDR, else upstream's
// ":2112". Added by Cairn's hack/rekor-v2-up.sh.
func cairnMetricsAddr() string {
	if a := os.Getenv("CAIRN_TSA_METRICS_ADDR"); a != "" {
		return a
	}
	return ":2112"
}
EOF
  (cd "$src" && go_env env GOFLAGS=-mod=readonly go build \
    -ldflags "-X sigs.k8s.io/release-utils/version.gitVersion=$TSA_VERSION" \
    -o "$BIN_DIR/$TSA.tmp" ./cmd/timestamp-server)
  mv "$BIN_DIR/$TSA.tmp" "$BIN_DIR/$TSA"
  rm -rf "$src"
}

build_front() {
  local bin
  bin="$(front_bin)"
  log "building hack/rekor-v2-front into $(dirname "$bin")"
  mkdir -p "$(dirname "$bin")"
  (cd "$REPO" && go_env go build -o "$bin.tmp" ./hack/rekor-v2-front)
  mv "$bin.tmp" "$bin"
  # Older fronts (from older sources) are no longer wanted.
  find "$CACHE_DIR" -maxdepth 1 -name 'front-*' ! -path "$(dirname "$bin")" -exec rm -rf {} +
}

ensure_binaries() {
  have_binaries && return 0
  command -v go >/dev/null || die "go is not on PATH"
  mkdir -p "$CACHE_DIR" "$BIN_DIR"
  # One builder at a time: a concurrent caller waits here and then finds the cache warm.
  exec 8>"$CACHE_DIR/.build.lock"
  take_lock 8 "$CACHE_DIR/.build.lock" "build of rekor-tiles and timestamp-authority"
  [[ -x "$BIN_DIR/$REKOR" ]] || build_rekor
  [[ -x "$BIN_DIR/$TSA" ]] || build_tsa
  [[ -x "$(front_bin)" ]] || build_front
  have_binaries || die "build finished but binaries are missing from $BIN_DIR"
  flock -u 8
  exec 8>&-
}

# ---------------------------------------------------------------------------------------
# Components
# ---------------------------------------------------------------------------------------
start_tsa() {
  if pid_of "$TSA" >/dev/null; then
    wait_ready "$TSA" "timestamp-server at $TSA_URL" tsa_healthy
    return 0
  fi
  ensure_port_free timestamp-server "$TSA_PORT"
  ensure_port_free "timestamp-server (metrics)" "$TSA_METRICS_PORT"
  # An empty config file, so that no timestamp-server.yaml in $HOME is read.
  : >"$STATE/timestamp-server.yaml"
  log "starting timestamp-server on $TSA_URL"
  # NTP monitoring is off: it asks public NTP servers, which tests must not depend on.
  spawn "$TSA" env CAIRN_TSA_METRICS_ADDR="127.0.0.1:$TSA_METRICS_PORT" "$BIN_DIR/$TSA" serve \
    --config="$STATE/timestamp-server.yaml" \
    --host=127.0.0.1 --port="$TSA_PORT" --scheme=http \
    --timestamp-signer=file --timestamp-signer-hash=sha256 \
    --file-signer-key-path="$TSA_LEAF_KEY" --certificate-chain-path="$TSA_CERT_CHAIN" \
    --disable-ntp-monitoring --cleanup-timeout=5s --log-type=dev
  wait_ready "$TSA" "timestamp-server at $TSA_URL (GET /api/v1/timestamp/certchain)" tsa_healthy
}

start_rekor() {
  if pid_of "$REKOR" >/dev/null; then
    wait_ready "$REKOR" "rekor-server at $REKOR_V2_SERVER_URL" rekor_healthy
    return 0
  fi
  ensure_port_free rekor-server "$REKOR_V2_SERVER_PORT"
  ensure_port_free "rekor-server (gRPC)" "$REKOR_V2_GRPC_PORT"
  ensure_port_free "rekor-server (metrics)" "$REKOR_V2_METRICS_PORT"
  mkdir -p "$STORAGE_DIR"
  log "starting rekor-server on $REKOR_V2_SERVER_URL (gRPC 127.0.0.1:$REKOR_V2_GRPC_PORT, origin $REKOR_V2_ORIGIN)"
  # --batch-max-age and --checkpoint-interval are as small as Tessera allows, so an upload
  # (which answers only once a checkpoint covers the entry) waits as little as it can.
  spawn "$REKOR" "$BIN_DIR/$REKOR" serve \
    --http-address=127.0.0.1 --http-port="$REKOR_V2_SERVER_PORT" \
    --grpc-address=127.0.0.1 --grpc-port="$REKOR_V2_GRPC_PORT" \
    --http-metrics-port="$REKOR_V2_METRICS_PORT" \
    --hostname="$REKOR_V2_ORIGIN" \
    --storage-dir="$STORAGE_DIR" \
    --signer-filepath="$REKOR_KEY" \
    --checkpoint-interval="$REKOR_V2_CHECKPOINT_INTERVAL" --batch-max-age=10ms \
    --persistent-antispam=true \
    --tlog-timeout=10s
  wait_ready "$REKOR" "rekor-server at $REKOR_V2_SERVER_URL (GET /healthz) and its first checkpoint" rekor_healthy
}

start_front() {
  if pid_of "$FRONT" >/dev/null; then
    wait_ready "$FRONT" "rekor-v2-front at $REKOR_V2_URL" front_healthy
    return 0
  fi
  ensure_port_free rekor-v2-front "$REKOR_V2_PORT"
  log "starting rekor-v2-front on $REKOR_V2_URL"
  spawn "$FRONT" "$(front_bin)" -listen="127.0.0.1:$REKOR_V2_PORT" \
    -dir="$STORAGE_DIR" -backend="$REKOR_V2_SERVER_URL"
  wait_ready "$FRONT" "rekor-v2-front at $REKOR_V2_URL (GET /healthz and a checkpoint signed by $REKOR_PUB)" front_healthy
}

# check_origin refuses to change the origin of an existing log.
check_origin() {
  if [[ -f "$STATE/origin" ]]; then
    local was
    was="$(<"$STATE/origin")"
    [[ "$was" == "$REKOR_V2_ORIGIN" ]] ||
      die "the log in $STORAGE_DIR has origin '$was', not '$REKOR_V2_ORIGIN'; unset REKOR_V2_ORIGIN or run '$0 down --wipe'"
  else
    [[ -n "$REKOR_V2_ORIGIN" && "$REKOR_V2_ORIGIN" != *[[:space:]+]* ]] ||
      die "REKOR_V2_ORIGIN '$REKOR_V2_ORIGIN' is not a valid note name (no spaces, no '+')"
    printf '%s\n' "$REKOR_V2_ORIGIN" >"$STATE/origin"
  fi
}

write_env() {
  local tmp="$ENV_FILE.tmp"
  {
    printf '%s=%q\n' \
      REKOR_V2_URL "$REKOR_V2_URL" \
      REKOR_V2_ORIGIN "$REKOR_V2_ORIGIN" \
      REKOR_V2_PUBLIC_KEY "$REKOR_PUB" \
      REKOR_V2_VKEY "$(vkey)" \
      REKOR_V2_LOG_ID "$(key_id | base64 -w0)" \
      REKOR_V2_STATE "$STATE" \
      REKOR_V2_STORAGE_DIR "$STORAGE_DIR" \
      REKOR_V2_SERVER_URL "$REKOR_V2_SERVER_URL" \
      REKOR_V2_GRPC_ADDR "127.0.0.1:$REKOR_V2_GRPC_PORT" \
      REKOR_V2_CHECKPOINT_INTERVAL "$REKOR_V2_CHECKPOINT_INTERVAL" \
      TSA_URL "$TSA_URL" \
      TSA_TIMESTAMP_URL "$TSA_URL/api/v1/timestamp" \
      TSA_CERT_CHAIN "$TSA_CERT_CHAIN" \
      TSA_ROOT_CERT "$TSA_ROOT_CERT" \
      TSA_LEAF_CERT "$TSA_LEAF_CERT" \
      REKOR_TILES_VERSION "$REKOR_TILES_VERSION" \
      TSA_VERSION "$TSA_VERSION" \
      REKOR_V2_BIN_DIR "$BIN_DIR" \
      REKOR_V2_PORT "$REKOR_V2_PORT" \
      REKOR_V2_GRPC_PORT "$REKOR_V2_GRPC_PORT" \
      REKOR_V2_SERVER_PORT "$REKOR_V2_SERVER_PORT" \
      REKOR_V2_METRICS_PORT "$REKOR_V2_METRICS_PORT" \
      TSA_PORT "$TSA_PORT" \
      TSA_METRICS_PORT "$TSA_METRICS_PORT"
  } >"$tmp"
  mv "$tmp" "$ENV_FILE"
}

# ---------------------------------------------------------------------------------------
# Subcommands
# ---------------------------------------------------------------------------------------

# lock_state serialises commands on one state dir (fd 9; spawn closes it for daemons).
lock_state() {
  mkdir -p "$STATE"
  exec 9>"$STATE/.lock"
  take_lock 9 "$STATE/.lock" "rekor-v2-up.sh on $STATE"
}

cmd_up() {
  [[ $# -eq 0 ]] || die "usage: $0 up"
  command -v openssl >/dev/null || die "openssl is not on PATH"
  command -v curl >/dev/null || die "curl is not on PATH"
  lock_state
  ensure_binaries
  check_origin
  ensure_rekor_key
  ensure_tsa_chain
  start_tsa
  start_rekor
  start_front
  write_env
  log "ready; env in $ENV_FILE, logs in $LOG_DIR"
  cat "$ENV_FILE"
}

cmd_down() {
  local wipe=false
  case "${1:-}" in
    "") ;;
    --wipe) wipe=true ;;
    *) die "usage: $0 down [--wipe]" ;;
  esac
  [[ -d "$STATE" ]] || { log "nothing to stop ($STATE does not exist)"; return 0; }
  lock_state
  stop "$FRONT"
  stop "$REKOR"
  stop "$TSA"
  if $wipe; then
    log "deleting $STATE"
    exec 9>&-
    rm -rf "$STATE"
  fi
}

cmd_status() {
  local ok=true name pid check
  for name in "$REKOR" "$FRONT" "$TSA"; do
    case "$name" in
      "$REKOR") check=rekor_healthy ;;
      "$FRONT") check=front_healthy ;;
      "$TSA") check=tsa_healthy ;;
    esac
    if pid="$(pid_of "$name")"; then
      if $check; then
        printf '%-20s healthy (pid %s)\n' "$name" "$pid"
      else
        printf '%-20s UNHEALTHY (pid %s), see %s\n' "$name" "$pid" "$LOG_DIR/$name.log"; ok=false
      fi
    else
      printf '%-20s stopped\n' "$name"; ok=false
    fi
  done
  [[ -f "$ENV_FILE" ]] && sed 's/^/  /' "$ENV_FILE"
  $ok
}

# cmd_stop_rekor and cmd_start_rekor make a log outage for tests: rekor-server alone stops.
cmd_stop_rekor() {
  lock_state
  stop "$REKOR"
}

cmd_start_rekor() {
  lock_state
  ensure_binaries
  check_origin
  start_rekor
}

cmd_build() {
  [[ $# -eq 0 ]] || die "usage: $0 build"
  ensure_binaries
  printf '%s\n' "$BIN_DIR"
}

main() {
  local cmd="${1:-up}"
  [[ $# -gt 0 ]] && shift
  case "$cmd" in
    up) cmd_up "$@" ;;
    build) cmd_build "$@" ;;
    down) cmd_down "$@" ;;
    status) cmd_status "$@" ;;
    stop-rekor) cmd_stop_rekor "$@" ;;
    start-rekor) cmd_start_rekor "$@" ;;
    -h | --help | help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' ;;
    *) die "unknown command '$cmd' (use up, build, down [--wipe], status, stop-rekor, start-rekor)" ;;
  esac
}

main "$@"
