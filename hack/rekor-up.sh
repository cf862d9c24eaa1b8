#!/usr/bin/env bash
# rekor-up.sh runs a real Sigstore Rekor v1 transparency log on 127.0.0.1 for integration
# tests: MariaDB -> Trillian (log server + log signer) -> rekor-server. No Docker, no Redis.
#
#   hack/rekor-up.sh [up]         build (cold: minutes) and start everything, wait until ready
#   hack/rekor-up.sh down         stop every process this script started (by pid file)
#   hack/rekor-up.sh down --wipe  ... and delete the state dir (database, tree, logs)
#   hack/rekor-up.sh status       show each component; exit 0 only if all are healthy
#   hack/rekor-up.sh stop-rekor   stop ONLY rekor-server (MariaDB and Trillian keep running)
#   hack/rekor-up.sh start-rekor  start rekor-server again (same port, same tree), wait ready
#
# `up` ends by printing REKOR_URL=... on stdout and writes $REKOR_STATE/env (KEY=VALUE lines,
# shell-quoted only where needed) with REKOR_URL, REKOR_CLI, REKOR_TREE_ID, REKOR_STATE and more,
# so a test harness can do:  hack/rekor-up.sh && . "${CAIRN_REKOR_STATE:-/tmp/cairn-rekor-$(id -u)}/env"
# Progress and errors go to stderr. `up` on a healthy stack only re-checks it (about a second).
#
# Binaries are built from the Go module proxy with `go install pkg@version` into a versioned
# cache outside the work tree:
#   trillian_log_server, trillian_log_signer, createtree  github.com/google/trillian  (-tags mysql)
#   rekor-server, rekor-cli                              github.com/sigstore/rekor
# MariaDB comes from Debian's mariadb-server package (installed with apt-get when missing).
#
# Environment (all optional):
#   CAIRN_CACHE_DIR          cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/cairn)
#   CAIRN_REKOR_STATE        state dir (default ${TMPDIR:-/tmp}/cairn-rekor-$(id -u))
#   TRILLIAN_VERSION         default v1.7.3
#   REKOR_VERSION            default v1.5.4 (v1.5.5 needs a newer Go than 1.26)
#   REKOR_PORT               rekor-server HTTP API                 default 3100
#   REKOR_TRILLIAN_RPC_PORT  trillian_log_server gRPC              default 3101
#   REKOR_TRILLIAN_HTTP_PORT trillian_log_server /healthz+metrics  default 3102
#   REKOR_SIGNER_RPC_PORT    trillian_log_signer gRPC              default 3103
#   REKOR_SIGNER_HTTP_PORT   trillian_log_signer /healthz+metrics  default 3104
#   REKOR_MYSQL_PORT         private MariaDB TCP port              default 3105
#   REKOR_HOSTNAME           origin name in checkpoints            default cairn-rekor-local
#   REKOR_SIGNER             memory (default: new ECDSA P-256 key every time rekor-server
#                            starts), file (a P-256 key generated once in the state dir, so
#                            the log's public key survives stop-rekor/start-rekor), or any
#                            value rekor-server's --rekor_server.signer accepts
#   REKOR_READY_TIMEOUT      seconds to wait for each component (default 90)
# Ports chosen by an earlier `up` are remembered in $REKOR_STATE/env and reused by later
# commands unless overridden. Everything listens on 127.0.0.1 only, except that rekor-server
# always serves Prometheus metrics on :2112 (hard-coded upstream; it silently skips this
# when the port is taken).
#
# Note for callers: rekor-cli remembers the last tree head it saw per server URL and tree ID
# in ~/.rekor/state.json and checks consistency against it; after `down --wipe` pass
# --store_tree_state=false (as this script does) or remove that file.
set -euo pipefail

TRILLIAN_VERSION="${TRILLIAN_VERSION:-v1.7.3}"
REKOR_VERSION="${REKOR_VERSION:-v1.5.4}"

CACHE_ROOT="${CAIRN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn}"
CACHE_DIR="$CACHE_ROOT/rekor"
BIN_DIR="$CACHE_DIR/trillian-$TRILLIAN_VERSION-rekor-$REKOR_VERSION/bin"
STATE="${CAIRN_REKOR_STATE:-${TMPDIR:-/tmp}/cairn-rekor-$(id -u)}"
ENV_FILE="$STATE/env"
RUN_DIR="$STATE/run"   # pid files, MariaDB socket
LOG_DIR="$STATE/logs"
DATA_DIR="$STATE/mysql"

log() { printf 'rekor-up: %s\n' "$*" >&2; }
die() { printf 'rekor-up: error: %s\n' "$*" >&2; exit 1; }
# shellcheck source=lock.sh source-path=SCRIPTDIR disable=SC1091 # -x follows them
. "$(dirname "$0")/lock.sh"
. "$(dirname "$0")/daemons.sh"

# ---------------------------------------------------------------------------------------
# Configuration: explicit environment > values remembered in $STATE/env > defaults.
# ---------------------------------------------------------------------------------------
REMEMBERED_KEYS=(REKOR_PORT REKOR_TRILLIAN_RPC_PORT REKOR_TRILLIAN_HTTP_PORT REKOR_SIGNER_RPC_PORT
  REKOR_SIGNER_HTTP_PORT REKOR_MYSQL_PORT REKOR_HOSTNAME REKOR_SIGNER)
if [[ -f "$ENV_FILE" ]]; then
  while IFS='=' read -r key value; do
    for k in "${REMEMBERED_KEYS[@]}"; do
      if [[ "$key" == "$k" && -z "${!k:-}" ]]; then
        printf -v "$k" '%s' "$value"
      fi
    done
  done <"$ENV_FILE"
fi
REKOR_PORT="${REKOR_PORT:-3100}"
REKOR_TRILLIAN_RPC_PORT="${REKOR_TRILLIAN_RPC_PORT:-3101}"
REKOR_TRILLIAN_HTTP_PORT="${REKOR_TRILLIAN_HTTP_PORT:-3102}"
REKOR_SIGNER_RPC_PORT="${REKOR_SIGNER_RPC_PORT:-3103}"
REKOR_SIGNER_HTTP_PORT="${REKOR_SIGNER_HTTP_PORT:-3104}"
REKOR_MYSQL_PORT="${REKOR_MYSQL_PORT:-3105}"
REKOR_HOSTNAME="${REKOR_HOSTNAME:-cairn-rekor-local}"
REKOR_SIGNER="${REKOR_SIGNER:-memory}"
READY_TIMEOUT="${REKOR_READY_TIMEOUT:-90}"

REKOR_URL="http://127.0.0.1:$REKOR_PORT"
MYSQL_SOCKET="$RUN_DIR/mysql.sock"
# Trillian's own database account; the server is private to this state dir and bound to
# 127.0.0.1, so a fixed password is fine.
TRILLIAN_DB=trillian
TRILLIAN_DB_USER=trillian
TRILLIAN_DB_PASS=trillian
MYSQL_URI="$TRILLIAN_DB_USER:$TRILLIAN_DB_PASS@tcp(127.0.0.1:$REKOR_MYSQL_PORT)/$TRILLIAN_DB"

# Every component is known by one name: its pid file is $RUN_DIR/NAME.pid, its log
# $LOG_DIR/NAME.log, and NAME is also the basename of the binary it runs.
MARIADB=mariadbd
LOG_SERVER=trillian_log_server
LOG_SIGNER=trillian_log_signer
REKOR=rekor-server

# ---------------------------------------------------------------------------------------
# Health checks
# ---------------------------------------------------------------------------------------
mysql_client() { # runs the MariaDB client as root over the private socket
  "$MYSQL_CLIENT" --no-defaults --socket="$MYSQL_SOCKET" -uroot "$@"
}
mariadb_healthy() { mysql_client -N -e 'SELECT 1' >/dev/null 2>&1; }
log_server_healthy() { curl -fsS -m 5 "http://127.0.0.1:$REKOR_TRILLIAN_HTTP_PORT/healthz" >/dev/null 2>&1; }
log_signer_healthy() { curl -fsS -m 5 "http://127.0.0.1:$REKOR_SIGNER_HTTP_PORT/healthz" >/dev/null 2>&1; }

# rekor_healthy: GET /api/v1/log answers 200 for our tree, and rekor-cli verifies the signed
# tree head against the server's public key.
rekor_healthy() {
  local tree_id body
  tree_id="$(cat "$STATE/tree_id" 2>/dev/null)" || return 1
  body="$(curl -fsS -m 5 "$REKOR_URL/api/v1/log")" || return 1
  [[ "$body" == *"\"treeID\":\"$tree_id\""* ]] || return 1
  "$BIN_DIR/rekor-cli" loginfo --rekor_server "$REKOR_URL" --store_tree_state=false \
    --retry 0 --timeout 5s >/dev/null 2>&1
}

# ---------------------------------------------------------------------------------------
# Installation
# ---------------------------------------------------------------------------------------
BINARIES=(trillian_log_server trillian_log_signer createtree rekor-server rekor-cli)

have_binaries() {
  local b
  for b in "${BINARIES[@]}"; do [[ -x "$BIN_DIR/$b" ]] || return 1; done
}

# go_env runs go outside any module (and workspace) with a fixed toolchain and cgo off.
go_env() {
  (cd "$CACHE_DIR" && GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod "$@")
}

ensure_binaries() {
  have_binaries && return 0
  mkdir -p "$CACHE_DIR" "$BIN_DIR"
  # One builder at a time: a concurrent caller waits here and then finds the cache warm.
  exec 8>"$CACHE_DIR/.build.lock"
  take_lock 8 "$CACHE_DIR/.build.lock" "build of Trillian and Rekor"
  if ! have_binaries; then
    command -v go >/dev/null || die "go is not on PATH"
    if [[ ! -x "$BIN_DIR/trillian_log_server" || ! -x "$BIN_DIR/trillian_log_signer" || ! -x "$BIN_DIR/createtree" ]]; then
      log "building trillian $TRILLIAN_VERSION (-tags mysql) into $BIN_DIR (cold: a few minutes)"
      go_env env GOBIN="$BIN_DIR" go install -tags mysql \
        "github.com/google/trillian/cmd/trillian_log_server@$TRILLIAN_VERSION" \
        "github.com/google/trillian/cmd/trillian_log_signer@$TRILLIAN_VERSION" \
        "github.com/google/trillian/cmd/createtree@$TRILLIAN_VERSION"
    fi
    if [[ ! -x "$BIN_DIR/rekor-server" || ! -x "$BIN_DIR/rekor-cli" ]]; then
      log "building rekor $REKOR_VERSION into $BIN_DIR (cold: a few minutes)"
      go_env env GOBIN="$BIN_DIR" go install \
        "github.com/sigstore/rekor/cmd/rekor-server@$REKOR_VERSION" \
        "github.com/sigstore/rekor/cmd/rekor-cli@$REKOR_VERSION"
    fi
    have_binaries || die "build finished but binaries are missing from $BIN_DIR"
  fi
  flock -u 8
  exec 8>&-
}

# find_mariadb sets MARIADBD, MARIADB_INSTALL_DB and MYSQL_CLIENT; fails if any is missing.
find_mariadb() {
  local p
  MARIADBD="" MARIADB_INSTALL_DB="" MYSQL_CLIENT=""
  for p in mariadbd mysqld /usr/sbin/mariadbd /usr/sbin/mysqld; do
    if command -v "$p" >/dev/null; then MARIADBD="$(command -v "$p")"; break; fi
  done
  for p in mariadb-install-db mysql_install_db; do
    if command -v "$p" >/dev/null; then MARIADB_INSTALL_DB="$(command -v "$p")"; break; fi
  done
  for p in mariadb mysql; do
    if command -v "$p" >/dev/null; then MYSQL_CLIENT="$(command -v "$p")"; break; fi
  done
  [[ -n "$MARIADBD" && -n "$MARIADB_INSTALL_DB" && -n "$MYSQL_CLIENT" ]]
}

ensure_mariadb() {
  find_mariadb && return 0
  command -v apt-get >/dev/null || die "MariaDB is not installed and apt-get is unavailable; install mariadb-server"
  [[ "$(id -u)" == 0 ]] || die "MariaDB is not installed; run: sudo apt-get install mariadb-server"
  log "installing mariadb-server with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -q --no-install-recommends mariadb-server >&2; then
    log "install failed; refreshing the package lists and retrying"
    apt-get update -q >&2
    apt-get install -y -q --no-install-recommends mariadb-server >&2
  fi
  find_mariadb || die "mariadb-server installed but mariadbd/mariadb-install-db/mariadb not found"
}

# The OS user MariaDB runs as. As root it must be told --user=root explicitly.
db_os_user() { id -un; }

# ---------------------------------------------------------------------------------------
# Components
# ---------------------------------------------------------------------------------------
start_mariadb() {
  if pid_of "$MARIADB" >/dev/null && mariadb_healthy; then return 0; fi
  if pid_of "$MARIADB" >/dev/null; then
    log "waiting for the running MariaDB to answer"
    wait_ready "$MARIADB" "MariaDB on $MYSQL_SOCKET" mariadb_healthy
    return 0
  fi
  mkdir -p "$RUN_DIR" "$LOG_DIR" "$STATE/tmp"
  if [[ ! -d "$DATA_DIR/mysql" ]]; then
    log "initialising a private MariaDB datadir in $DATA_DIR"
    rm -rf "$DATA_DIR"
    "$MARIADB_INSTALL_DB" --no-defaults --datadir="$DATA_DIR" --user="$(db_os_user)" \
      --auth-root-authentication-method=socket --skip-test-db \
      >>"$LOG_DIR/$MARIADB.log" 2>&1 || fail_with_log "$MARIADB" "mariadb-install-db failed"
  fi
  ensure_port_free MariaDB "$REKOR_MYSQL_PORT"
  rm -f "$MYSQL_SOCKET"
  log "starting MariaDB on 127.0.0.1:$REKOR_MYSQL_PORT (socket $MYSQL_SOCKET)"
  # Small, test-only settings: durability is traded for speed (flush once a second).
  spawn "$MARIADB" "$MARIADBD" --no-defaults \
    --datadir="$DATA_DIR" --user="$(db_os_user)" \
    --bind-address=127.0.0.1 --port="$REKOR_MYSQL_PORT" --socket="$MYSQL_SOCKET" \
    --pid-file="$RUN_DIR/mariadbd.own.pid" --tmpdir="$STATE/tmp" \
    --skip-name-resolve --skip-log-bin \
    --innodb-buffer-pool-size=64M --innodb-flush-log-at-trx-commit=2 \
    --character-set-server=utf8mb4 --collation-server=utf8mb4_unicode_ci
  wait_ready "$MARIADB" "MariaDB on $MYSQL_SOCKET" mariadb_healthy
}

# setup_database creates Trillian's database and account and loads its schema once.
setup_database() {
  if [[ -f "$STATE/schema-loaded" ]]; then return 0; fi
  log "creating database '$TRILLIAN_DB' and loading Trillian $TRILLIAN_VERSION's MySQL schema"
  mysql_client <<SQL
CREATE DATABASE IF NOT EXISTS $TRILLIAN_DB;
CREATE USER IF NOT EXISTS '$TRILLIAN_DB_USER'@'127.0.0.1' IDENTIFIED BY '$TRILLIAN_DB_PASS';
CREATE USER IF NOT EXISTS '$TRILLIAN_DB_USER'@'localhost' IDENTIFIED BY '$TRILLIAN_DB_PASS';
GRANT ALL PRIVILEGES ON $TRILLIAN_DB.* TO '$TRILLIAN_DB_USER'@'127.0.0.1';
GRANT ALL PRIVILEGES ON $TRILLIAN_DB.* TO '$TRILLIAN_DB_USER'@'localhost';
FLUSH PRIVILEGES;
SQL
  # The schema is not idempotent (plain CREATE INDEX), so load it only into an empty database.
  if [[ -z "$(mysql_client -N -e "SHOW TABLES FROM $TRILLIAN_DB LIKE 'Trees'")" ]]; then
    local dir
    dir="$(go_env go mod download -json "github.com/google/trillian@$TRILLIAN_VERSION" |
      sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    [[ -f "$dir/storage/mysql/schema/storage.sql" ]] ||
      die "Trillian schema not found (module dir: '${dir}')"
    mysql_client "$TRILLIAN_DB" <"$dir/storage/mysql/schema/storage.sql"
  fi
  touch "$STATE/schema-loaded"
}

start_log_server() {
  if pid_of "$LOG_SERVER" >/dev/null; then
    wait_ready "$LOG_SERVER" "trillian_log_server /healthz on :$REKOR_TRILLIAN_HTTP_PORT" log_server_healthy
    return 0
  fi
  ensure_port_free trillian_log_server "$REKOR_TRILLIAN_RPC_PORT"
  ensure_port_free trillian_log_server "$REKOR_TRILLIAN_HTTP_PORT"
  log "starting trillian_log_server on 127.0.0.1:$REKOR_TRILLIAN_RPC_PORT"
  spawn "$LOG_SERVER" "$BIN_DIR/trillian_log_server" \
    --storage_system=mysql --quota_system=mysql --mysql_uri="$MYSQL_URI" \
    --rpc_endpoint="127.0.0.1:$REKOR_TRILLIAN_RPC_PORT" \
    --http_endpoint="127.0.0.1:$REKOR_TRILLIAN_HTTP_PORT" \
    --alsologtostderr
  wait_ready "$LOG_SERVER" "trillian_log_server /healthz on :$REKOR_TRILLIAN_HTTP_PORT" log_server_healthy
}

start_log_signer() {
  if pid_of "$LOG_SIGNER" >/dev/null; then
    wait_ready "$LOG_SIGNER" "trillian_log_signer /healthz on :$REKOR_SIGNER_HTTP_PORT" log_signer_healthy
    return 0
  fi
  ensure_port_free trillian_log_signer "$REKOR_SIGNER_RPC_PORT"
  ensure_port_free trillian_log_signer "$REKOR_SIGNER_HTTP_PORT"
  log "starting trillian_log_signer on 127.0.0.1:$REKOR_SIGNER_RPC_PORT"
  # --force_master: a single signer sequences every tree without an etcd election;
  # --pre_election_pause=10ms (the minimum) makes it take a new tree within ~10 ms
  # instead of up to 1 s.
  spawn "$LOG_SIGNER" "$BIN_DIR/trillian_log_signer" \
    --storage_system=mysql --quota_system=mysql --mysql_uri="$MYSQL_URI" \
    --rpc_endpoint="127.0.0.1:$REKOR_SIGNER_RPC_PORT" \
    --http_endpoint="127.0.0.1:$REKOR_SIGNER_HTTP_PORT" \
    --force_master --pre_election_pause=10ms \
    --sequencer_interval=100ms --batch_size=1000 --num_sequencers=2 \
    --alsologtostderr
  wait_ready "$LOG_SIGNER" "trillian_log_signer /healthz on :$REKOR_SIGNER_HTTP_PORT" log_signer_healthy
}

# ensure_tree creates the Trillian log tree once and keeps its id in $STATE/tree_id.
ensure_tree() {
  local id=""
  [[ -f "$STATE/tree_id" ]] && id="$(<"$STATE/tree_id")"
  if [[ "$id" =~ ^[0-9]+$ ]] &&
    [[ "$(mysql_client -N -e "SELECT COUNT(*) FROM $TRILLIAN_DB.Trees WHERE TreeId=$id AND Deleted IS NOT TRUE")" == 1 ]]; then
    return 0
  fi
  log "creating a Trillian log tree"
  id="$("$BIN_DIR/createtree" --admin_server="127.0.0.1:$REKOR_TRILLIAN_RPC_PORT" \
    --display_name=cairn-rekor --max_root_duration=1h 2>>"$LOG_DIR/createtree.log")" ||
    fail_with_log createtree "createtree failed"
  [[ "$id" =~ ^[0-9]+$ ]] || die "createtree printed '$id', not a tree id"
  printf '%s\n' "$id" >"$STATE/tree_id"
  log "tree id $id"
}

# rekor_signer_arg prints the value for --rekor_server.signer.
rekor_signer_arg() {
  case "$REKOR_SIGNER" in
    file)
      if [[ ! -s "$STATE/rekor-signer.pem" ]]; then
        (umask 077 && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
          -out "$STATE/rekor-signer.pem" 2>/dev/null) || die "openssl could not generate a signer key"
      fi
      printf '%s\n' "$STATE/rekor-signer.pem"
      ;;
    *) printf '%s\n' "$REKOR_SIGNER" ;;
  esac
}

start_rekor() {
  local tree_id
  tree_id="$(<"$STATE/tree_id")"
  if pid_of "$REKOR" >/dev/null; then
    wait_ready "$REKOR" "rekor-server at $REKOR_URL" rekor_healthy
    return 0
  fi
  ensure_port_free rekor-server "$REKOR_PORT"
  local signer
  signer="$(rekor_signer_arg)"
  log "starting rekor-server on $REKOR_URL (tree $tree_id, signer $REKOR_SIGNER)"
  # Index search (searchIndex, which needs Redis or a MySQL index) and attestation storage
  # are off; every other API endpoint is on.
  spawn "$REKOR" "$BIN_DIR/rekor-server" serve \
    --rekor_server.address=127.0.0.1 --port="$REKOR_PORT" \
    --rekor_server.hostname="$REKOR_HOSTNAME" \
    --rekor_server.signer="$signer" \
    --trillian_log_server.address=127.0.0.1 \
    --trillian_log_server.port="$REKOR_TRILLIAN_RPC_PORT" \
    --trillian_log_server.tlog_id="$tree_id" \
    --enable_retrieve_api=false \
    --enabled_api_endpoints=getLogInfo,getPublicKey,getLogProof,createLogEntry,getLogEntryByIndex,getLogEntryByUUID,searchLogQuery \
    --enable_attestation_storage=false \
    --log_type=dev
  wait_ready "$REKOR" "rekor-server at $REKOR_URL (GET /api/v1/log and rekor-cli loginfo)" rekor_healthy
  # Keep the current public key next to the env file (with the memory signer it changes on
  # every start).
  curl -fsS -m 5 "$REKOR_URL/api/v1/log/publicKey" >"$STATE/rekor.pub.tmp" &&
    mv "$STATE/rekor.pub.tmp" "$STATE/rekor.pub"
}

write_env() {
  local tmp="$ENV_FILE.tmp"
  {
    printf '%s=%q\n' \
      REKOR_URL "$REKOR_URL" \
      REKOR_CLI "$BIN_DIR/rekor-cli" \
      REKOR_TREE_ID "$(<"$STATE/tree_id")" \
      REKOR_STATE "$STATE" \
      REKOR_PUBLIC_KEY_FILE "$STATE/rekor.pub" \
      REKOR_HOSTNAME "$REKOR_HOSTNAME" \
      REKOR_SIGNER "$REKOR_SIGNER" \
      REKOR_BIN_DIR "$BIN_DIR" \
      REKOR_PORT "$REKOR_PORT" \
      REKOR_TRILLIAN_RPC_PORT "$REKOR_TRILLIAN_RPC_PORT" \
      REKOR_TRILLIAN_HTTP_PORT "$REKOR_TRILLIAN_HTTP_PORT" \
      REKOR_SIGNER_RPC_PORT "$REKOR_SIGNER_RPC_PORT" \
      REKOR_SIGNER_HTTP_PORT "$REKOR_SIGNER_HTTP_PORT" \
      REKOR_MYSQL_PORT "$REKOR_MYSQL_PORT" \
      REKOR_MYSQL_SOCKET "$MYSQL_SOCKET" \
      REKOR_TRILLIAN_ADDR "127.0.0.1:$REKOR_TRILLIAN_RPC_PORT"
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
  take_lock 9 "$STATE/.lock" "rekor-up.sh on $STATE"
}

cmd_up() {
  lock_state
  ensure_binaries
  ensure_mariadb
  start_mariadb
  setup_database
  start_log_server
  start_log_signer
  ensure_tree
  start_rekor
  write_env
  log "ready; env in $ENV_FILE, logs in $LOG_DIR"
  printf 'REKOR_URL=%s\n' "$REKOR_URL"
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
  stop "$REKOR"
  stop "$LOG_SIGNER"
  stop "$LOG_SERVER"
  stop "$MARIADB"
  if $wipe; then
    log "deleting $STATE"
    exec 9>&-
    rm -rf "$STATE"
  fi
}

cmd_status() {
  local ok=true name pid check
  find_mariadb || true
  for name in "$MARIADB" "$LOG_SERVER" "$LOG_SIGNER" "$REKOR"; do
    case "$name" in
      "$MARIADB") check=mariadb_healthy ;;
      "$LOG_SERVER") check=log_server_healthy ;;
      "$LOG_SIGNER") check=log_signer_healthy ;;
      "$REKOR") check=rekor_healthy ;;
    esac
    if pid="$(pid_of "$name")"; then
      if [[ "$name" == "$MARIADB" && -z "$MYSQL_CLIENT" ]]; then
        printf '%-20s running (pid %s)\n' "$name" "$pid"
      elif $check; then
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

cmd_stop_rekor() {
  [[ -d "$STATE" ]] || die "no state dir $STATE; run '$0 up' first"
  lock_state
  stop "$REKOR"
  # Make sure the port really refuses connections before returning.
  for _ in $(seq 50); do port_open "$REKOR_PORT" || return 0; sleep 0.1; done
  die "127.0.0.1:$REKOR_PORT still accepts connections after stopping rekor-server"
}

cmd_start_rekor() {
  [[ -f "$STATE/tree_id" ]] || die "no tree in $STATE; run '$0 up' first"
  lock_state
  have_binaries || die "binaries missing from $BIN_DIR; run '$0 up' first"
  find_mariadb || die "MariaDB is not installed; run '$0 up' first"
  if ! pid_of "$MARIADB" >/dev/null || ! mariadb_healthy; then
    die "MariaDB is not running; run '$0 up'"
  fi
  if ! pid_of "$LOG_SERVER" >/dev/null || ! log_server_healthy; then
    die "trillian_log_server is not running; run '$0 up'"
  fi
  if ! pid_of "$LOG_SIGNER" >/dev/null || ! log_signer_healthy; then
    die "trillian_log_signer is not running; run '$0 up'"
  fi
  start_rekor
  write_env
  printf 'REKOR_URL=%s\n' "$REKOR_URL"
}

main() {
  local cmd="${1:-up}"
  [[ $# -gt 0 ]] && shift
  case "$cmd" in
    up) cmd_up "$@" ;;
    down) cmd_down "$@" ;;
    status) cmd_status "$@" ;;
    stop-rekor) cmd_stop_rekor "$@" ;;
    start-rekor) cmd_start_rekor "$@" ;;
    -h | --help | help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' ;;
    *) die "unknown command '$cmd' (use up, down [--wipe], status, stop-rekor, start-rekor)" ;;
  esac
}

main "$@"
