#!/usr/bin/env bash
# postgres-up.sh runs a private, throwaway PostgreSQL server for the tests of the federation's
# history store: unix socket only (no TCP), trust authentication, fsync off.
#
#   hack/postgres-up.sh [up]         initialise (cold: about 3 s) and start it, wait until ready
#   hack/postgres-up.sh down         stop it (pg_ctl stop -m fast); the data stays
#   hack/postgres-up.sh down --wipe  ... and delete the state dir (data, socket, logs, env file)
#   hack/postgres-up.sh status       show the server; exit 0 only if it is healthy
#   hack/postgres-up.sh env          print the running server's env file
#
# `up` prints nothing on stdout (progress and errors go to stderr); it writes $STATE/env with
#   CAIRN_POSTGRES_DSN='host=$STATE/run port=55432 user=cairn dbname=cairn_test sslmode=disable'
# (a libpq/pgx keyword DSN; cairn is a superuser), CAIRN_POSTGRES_BIN_DIR (psql...) and more,
# for `set -a && . "$STATE/env" && set +a`. `up` on a healthy server only re-checks it.
#
# The binaries come from Debian's postgresql package, any major version: the newest
# /usr/lib/postgresql/*/bin, else PATH; apt-get installs it when missing (the system cluster
# it may create is never used). PostgreSQL will not run as root, so as root the server runs
# as the package's `postgres` user, which then owns the state dir.
#
# Environment (all optional):
#   CAIRN_POSTGRES_STATE          state dir (default ${TMPDIR:-/tmp}/cairn-postgres-$(id -u))
#   CAIRN_POSTGRES_PORT           names the socket, run/.s.PGSQL.PORT (default 55432)
#   CAIRN_POSTGRES_READY_TIMEOUT  seconds to wait for the server (default 60)
set -euo pipefail

STATE="${CAIRN_POSTGRES_STATE:-${TMPDIR:-/tmp}/cairn-postgres-$(id -u)}"
[[ "$STATE" == /* ]] || STATE="$PWD/$STATE"
ENV_FILE="$STATE/env"
RUN_DIR="$STATE/run"   # the socket
LOG_DIR="$STATE/logs"
DATA_DIR="$STATE/data"
READY_TIMEOUT="${CAIRN_POSTGRES_READY_TIMEOUT:-60}"
SUPERUSER=cairn
DATABASE=cairn_test

log() { printf 'postgres-up: %s\n' "$*" >&2; }
die() { printf 'postgres-up: error: %s\n' "$*" >&2; exit 1; }
. "$(dirname "$0")/lock.sh"

# use_port PORT sets PORT, the socket's path and the DSN.
use_port() {
  PORT="$1"
  SOCKET="$RUN_DIR/.s.PGSQL.$PORT"
  DSN="host=$RUN_DIR port=$PORT user=$SUPERUSER dbname=$DATABASE sslmode=disable"
}
use_port "${CAIRN_POSTGRES_PORT:-55432}"
[[ "$PORT" =~ ^[0-9]+$ ]] || die "CAIRN_POSTGRES_PORT must be a number, not '$PORT'"
# The path goes unquoted into the DSN and postgres's command line; a socket's must fit in 107 bytes.
case "$STATE" in
  *[[:space:]\'\"\\]*) die "the state dir '$STATE' must not contain spaces, quotes or backslashes" ;;
esac
((${#SOCKET} <= 107)) || die "the socket path $SOCKET is too long; set a shorter CAIRN_POSTGRES_STATE"

# as_db runs initdb, pg_ctl and postgres: as the postgres user when we are root.
DB_USER=postgres
as_db() { if [[ "$(id -u)" == 0 ]]; then (cd / && runuser -u "$DB_USER" -- "$@"); else "$@"; fi; }

PG_TOOLS=(initdb pg_ctl postgres psql pg_isready)
# find_postgres sets PG_BIN to the first directory with all of PG_TOOLS (Debian's, newest first,
# then the real one of initdb on PATH) and PG_VERSION (e.g. 15.18).
find_postgres() {
  local dir tool candidates
  candidates="$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -rV)"
  command -v initdb >/dev/null && candidates+=$'\n'"$(dirname -- "$(readlink -f -- "$(command -v initdb)")")"
  while IFS= read -r dir; do
    for tool in "${PG_TOOLS[@]}"; do [[ -x "$dir/$tool" ]] || continue 2; done
    PG_BIN="$dir"
    PG_VERSION="$("$PG_BIN/postgres" --version | awk '{ print $3 }')"
    return 0
  done <<<"$candidates"
  return 1
}

ensure_postgres() {
  find_postgres && return 0
  command -v apt-get >/dev/null || die "PostgreSQL is not installed and apt-get is unavailable; install PostgreSQL (${PG_TOOLS[*]})"
  [[ "$(id -u)" == 0 ]] || die "PostgreSQL is not installed; run: sudo apt-get install postgresql"
  log "installing postgresql with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -q --no-install-recommends postgresql >&2; then
    log "install failed; refreshing the package lists and retrying"
    apt-get update -q >&2
    apt-get install -y -q --no-install-recommends postgresql >&2
  fi
  find_postgres || die "postgresql installed, but not all of ${PG_TOOLS[*]} found in one directory"
}

# postgres_pid FILE prints the pid in FILE if it is a live postgres (not a zombie, nor recycled).
postgres_pid() {
  local pid
  pid="$(head -n1 "$1" 2>/dev/null)" || return 1
  [[ "$pid" =~ ^[0-9]+$ && -r "/proc/$pid/cmdline" ]] || return 1
  [[ "/$(tr '\0' '\n' <"/proc/$pid/cmdline" | head -n1)" == */postgres ]] || return 1
  printf '%s\n' "$pid"
}

# running succeeds if our server runs, setting SERVER_PID and the port it really uses.
running() {
  SERVER_PID="$(postgres_pid "$DATA_DIR/postmaster.pid")" || return 1
  use_port "$(sed -n 4p "$DATA_DIR/postmaster.pid")"
}

healthy() { [[ "$("$PG_BIN/psql" -X -At -d "$DSN" -c 'SELECT 1' 2>/dev/null)" == 1 ]]; }
psql_admin() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$RUN_DIR" -p "$PORT" -U "$SUPERUSER" -d postgres "$@"; }

fail_with_log() { # fail_with_log FILE MESSAGE
  log "error: $2"
  [[ -f "$1" ]] && log "last lines of $1:" && tail -n 30 "$1" | sed 's/^/    /' >&2
  exit 1
}

# wait_ready polls pg_isready every 0.25 s until the server accepts connections.
wait_ready() {
  local deadline=$((SECONDS + READY_TIMEOUT))
  until "$PG_BIN/pg_isready" -q -h "$RUN_DIR" -p "$PORT" -U "$SUPERUSER" -d postgres; do
    postgres_pid "$DATA_DIR/postmaster.pid" >/dev/null || fail_with_log "$LOG_DIR/postgres.log" "PostgreSQL exited while starting"
    ((SECONDS < deadline)) || fail_with_log "$LOG_DIR/postgres.log" "timed out after ${READY_TIMEOUT}s waiting for PostgreSQL on $SOCKET"
    sleep 0.25
  done
}

# prepare_state makes the state dir, and as root hands it to the postgres user.
prepare_state() {
  mkdir -p "$RUN_DIR" "$LOG_DIR"
  [[ "$(id -u)" == 0 ]] || return 0
  id -u "$DB_USER" >/dev/null 2>&1 || die "PostgreSQL will not run as root, and there is no '$DB_USER' user to run it as"
  chown "$DB_USER:" "$STATE" "$RUN_DIR" "$LOG_DIR"
  as_db test -w "$RUN_DIR" || die "user $DB_USER cannot write $RUN_DIR (is a parent directory private?); set CAIRN_POSTGRES_STATE"
}

# init_cluster runs initdb unless the data dir holds a finished cluster of our major version.
init_cluster() {
  local marker="$DATA_DIR/cairn-initdb-done" major="${PG_VERSION%%.*}"
  [[ -f "$marker" && "$(cat "$DATA_DIR/PG_VERSION" 2>/dev/null)" == "$major" ]] && return 0
  [[ -d "$DATA_DIR" ]] && log "replacing $DATA_DIR: an unfinished initdb's, or not PostgreSQL $major's"
  rm -rf "$DATA_DIR"
  log "initialising a PostgreSQL $PG_VERSION cluster in $DATA_DIR"
  as_db "$PG_BIN/initdb" -D "$DATA_DIR" -U "$SUPERUSER" --auth=trust -E UTF8 --locale=C --no-sync \
    >>"$LOG_DIR/initdb.log" 2>&1 || fail_with_log "$LOG_DIR/initdb.log" "initdb failed"
  touch "$marker"
}

# start_server starts postgres, which is not running. postgres itself clears a postmaster.pid
# whose pid is dead, but not one whose pid is a zombie (a killed postmaster, where PID 1 does
# not reap orphans) or another program's: those are removed here.
start_server() {
  local pid
  pid="$(head -n1 "$DATA_DIR/postmaster.pid" 2>/dev/null)" || pid=""
  if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
    log "removing a stale postmaster.pid: pid $pid is a zombie or not postgres"
    rm -f "$DATA_DIR/postmaster.pid" "$SOCKET.lock"
  fi
  # Test-only settings: no TCP, and no waiting for the disk.
  local opts=(
    -c "listen_addresses=''" -c "unix_socket_directories=$RUN_DIR" -c "port=$PORT"
    -c fsync=off -c synchronous_commit=off -c full_page_writes=off
    -c max_connections=100 -c shared_buffers=32MB
  )
  log "starting PostgreSQL $PG_VERSION on $SOCKET"
  as_db "$PG_BIN/pg_ctl" start -D "$DATA_DIR" -l "$LOG_DIR/postgres.log" -s -w -t "$READY_TIMEOUT" \
    -o "${opts[*]}" >&2 9>&- || fail_with_log "$LOG_DIR/postgres.log" "pg_ctl start failed"
  wait_ready
}

create_database() {
  [[ "$(psql_admin -At -c "SELECT 1 FROM pg_database WHERE datname = '$DATABASE'")" == 1 ]] && return 0
  log "creating database $DATABASE"
  psql_admin -c "CREATE DATABASE $DATABASE" >&2
}

# write_env writes KEY=VALUE lines; the DSN holds spaces, so it is single-quoted.
write_env() {
  {
    printf "CAIRN_POSTGRES_DSN='%s'\n" "$DSN"
    printf '%s=%q\n' CAIRN_POSTGRES_STATE "$STATE" CAIRN_POSTGRES_PORT "$PORT" \
      CAIRN_POSTGRES_BIN_DIR "$PG_BIN" CAIRN_POSTGRES_VERSION "$PG_VERSION"
  } >"$ENV_FILE.tmp"
  mv "$ENV_FILE.tmp" "$ENV_FILE"
}

# lock_state serialises commands on one state dir (fd 9, which pg_ctl start closes).
lock_state() {
  mkdir -p "$STATE"
  exec 9>"$STATE/.lock"
  take_lock 9 "$STATE/.lock" "postgres-up.sh on $STATE"
}

cmd_up() {
  lock_state
  ensure_postgres
  prepare_state
  if running; then
    [[ "$PORT" == "${CAIRN_POSTGRES_PORT:-$PORT}" ]] || log "it already runs on port $PORT; run '$0 down' first to change it"
    wait_ready
  else
    init_cluster
    start_server
  fi
  create_database
  healthy || fail_with_log "$LOG_DIR/postgres.log" "cannot run a query with $DSN"
  write_env
  log "ready; env in $ENV_FILE, logs in $LOG_DIR"
}

cmd_down() {
  [[ $# -eq 0 || ($# -eq 1 && "$1" == --wipe) ]] || die "usage: $0 down [--wipe]"
  [[ -d "$STATE" ]] || { log "nothing to stop ($STATE does not exist)"; return 0; }
  lock_state
  if running; then
    find_postgres || die "PostgreSQL (pid $SERVER_PID) runs but its binaries are gone"
    log "stopping PostgreSQL (pid $SERVER_PID)"
    as_db "$PG_BIN/pg_ctl" stop -D "$DATA_DIR" -m fast -s -w -t "$READY_TIMEOUT" >&2
  fi
  if [[ "${1:-}" == --wipe ]]; then
    log "deleting $STATE"
    exec 9>&-
    rm -rf "$STATE"
  fi
}

cmd_status() {
  find_postgres || { printf '%-20s not installed\n' postgres; return 1; }
  running || { printf '%-20s stopped (PostgreSQL %s in %s)\n' postgres "$PG_VERSION" "$PG_BIN"; return 1; }
  healthy || { printf '%-20s UNHEALTHY (pid %s), see %s\n' postgres "$SERVER_PID" "$LOG_DIR/postgres.log"; return 1; }
  printf '%-20s healthy (pid %s), PostgreSQL %s on %s\n' postgres "$SERVER_PID" "$PG_VERSION" "$SOCKET"
  if [[ -f "$ENV_FILE" ]]; then sed 's/^/  /' "$ENV_FILE"; fi
}

main() {
  local cmd="${1:-up}"
  [[ $# -gt 0 ]] && shift
  case "$cmd" in
    up) cmd_up "$@" ;;
    down) cmd_down "$@" ;;
    status) cmd_status "$@" ;;
    env)
      { [[ -f "$ENV_FILE" ]] && running; } || die "PostgreSQL is not running; run '$0 up' first"
      cat "$ENV_FILE" ;;
    -h | --help | help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' ;;
    *) die "unknown command '$cmd' (use up, down [--wipe], status, env)" ;;
  esac
}

main "$@"
