#!/usr/bin/env bash
# omniwitness.sh runs transparency-dev's own witness (the cmd/omniwitness monolith) on
# 127.0.0.1, so tests can check that Cairn's checkpoints are cosigned by a witness Cairn did
# not write (C2SP tlog-witness POST /add-checkpoint, tlog-cosignature "cosignature/v1").
#
#   hack/omniwitness.sh up --origin ORIGIN --log-vkey VKEY [--port N]
#       build if needed (cold: about a minute), make the witness key once, trust the log
#       ORIGIN whose checkpoints are signed by the Ed25519 signed-note key VKEY
#       (name+hash+base64), start the witness and wait until it answers. Prints
#         OMNIWITNESS_URL=http://127.0.0.1:PORT
#         OMNIWITNESS_VKEY=<witness cosignature/v1 verifier key, name+hash+base64, type 0x04>
#       on stdout and writes the same lines to $STATE/env. On a running witness with the same
#       arguments it only re-checks it; with other arguments it restarts it.
#   hack/omniwitness.sh build           only build (or find) the binaries; prints OMNIWITNESS_BIN=...
#   hack/omniwitness.sh down [--wipe]   stop it; --wipe also deletes the state dir (the
#                                       witness's key and everything it has cosigned)
#   hack/omniwitness.sh status          exit 0 only if the witness is running and answers
#
# The binaries (omniwitness, generate_keys) come from github.com/transparency-dev/witness at
# OMNIWITNESS_VERSION, built with `go install pkg@version` (CGO off: its sqlite is pure Go)
# into a versioned cache outside the work tree. The witness keeps its state in sqlite
# ($STATE/witness.db), so it remembers what it cosigned across down/up. It listens on
# 127.0.0.1 only, serves no metrics, and calls nothing outside: no feeders, no bastion, no
# distributor, no public witness network config. Besides the trusted log it also trusts the
# logs compiled into the binary (omniwitness/logs.yaml), which it never contacts.
#
# The witness stores a log's key the first time it sees the log and never replaces it, so
# `up` refuses a new VKEY for an ORIGIN this state dir already trusts: use `down --wipe`.
# Answers seen at this version: 200 cosignature line(s); 409 text/x.tlog.size for a wrong
# old size; 422 for a fork at the same size; but 500 (not 403/404) for a checkpoint with no
# valid log signature or an unknown origin (the sqlite store errors on a missing log).
#
# Environment (all optional):
#   CAIRN_CACHE_DIR          cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/cairn)
#   CAIRN_OMNIWITNESS_STATE  state dir (default ${TMPDIR:-/tmp}/cairn-omniwitness-$(id -u))
#   OMNIWITNESS_VERSION      module version (default below)
#   OMNIWITNESS_NAME         the witness's key name, used only when the key is first made
#   OMNIWITNESS_READY_TIMEOUT  seconds to wait for the witness to answer (default 30)
# The port defaults to the one of the previous `up` in this state dir, else 3110.
set -euo pipefail

OMNIWITNESS_VERSION="${OMNIWITNESS_VERSION:-v0.0.0-20260720115447-2e1c6971d19e}"
OMNIWITNESS_NAME="${OMNIWITNESS_NAME:-localhost/cairn-omniwitness}"
MODULE=github.com/transparency-dev/witness

CACHE_ROOT="${CAIRN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn}"
CACHE_DIR="$CACHE_ROOT/omniwitness"
BIN_DIR="$CACHE_DIR/$OMNIWITNESS_VERSION/bin"
STATE="${CAIRN_OMNIWITNESS_STATE:-${TMPDIR:-/tmp}/cairn-omniwitness-$(id -u)}"
ENV_FILE="$STATE/env"
PID_FILE="$STATE/omniwitness.pid"
LOG_FILE="$STATE/omniwitness.log"
READY_TIMEOUT="${OMNIWITNESS_READY_TIMEOUT:-30}"

log() { printf 'omniwitness: %s\n' "$*" >&2; }
die() { printf 'omniwitness: error: %s\n' "$*" >&2; exit 1; }
. "$(dirname "$0")/lock.sh"

# pid_of prints the witness's pid if its pid file names a live omniwitness process.
pid_of() {
  local pid argv0
  [[ -f "$PID_FILE" ]] || return 1
  pid="$(<"$PID_FILE")"
  [[ "$pid" =~ ^[0-9]+$ && -r "/proc/$pid/cmdline" ]] || return 1
  argv0="$(tr '\0' '\n' <"/proc/$pid/cmdline" | head -n1)"
  [[ "$(basename -- "$argv0")" == omniwitness ]] || return 1
  printf '%s\n' "$pid"
}

# answers URL: an empty POST /add-checkpoint gets 400 from the witness's own handler.
answers() { [[ "$(curl -s -o /dev/null -w '%{http_code}' -m 5 -X POST --data-binary '' "$1/add-checkpoint")" == 400 ]]; }

stop() {
  local pid
  if pid="$(pid_of)"; then
    log "stopping omniwitness (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && { log "sending SIGKILL"; kill -KILL "$pid" 2>/dev/null || true; sleep 0.3; }
  fi
  rm -f "$PID_FILE"
}

fail_with_log() {
  printf 'omniwitness: error: %s\nomniwitness: last lines of %s:\n' "$1" "$LOG_FILE" >&2
  awk '/^==== /{buf=""} {buf=buf $0 "\n"} END{printf "%s", buf}' "$LOG_FILE" | tail -n 30 | sed 's/^/    /' >&2
  exit 1
}

ensure_binaries() {
  [[ -x "$BIN_DIR/omniwitness" && -x "$BIN_DIR/generate_keys" ]] && return 0
  mkdir -p "$BIN_DIR"
  exec 8>"$CACHE_DIR/.build.lock"
  take_lock 8 "$CACHE_DIR/.build.lock" "build of omniwitness"
  if [[ ! -x "$BIN_DIR/omniwitness" || ! -x "$BIN_DIR/generate_keys" ]]; then
    command -v go >/dev/null || die "go is not on PATH"
    log "building $MODULE@$OMNIWITNESS_VERSION into $BIN_DIR (cold: about a minute)"
    (cd "$CACHE_DIR" && GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod GOBIN="$BIN_DIR" \
      go install "$MODULE/cmd/omniwitness@$OMNIWITNESS_VERSION" "$MODULE/cmd/generate_keys@$OMNIWITNESS_VERSION")
  fi
  exec 8>&-
}

# yaml_str prints S as a double-quoted YAML scalar.
yaml_str() { local s="${1//\\/\\\\}"; printf '"%s"' "${s//\"/\\\"}"; }

cmd_up() {
  local origin="" vkey="" port="" url pid
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --origin) origin="${2-}"; shift 2 || die "--origin needs a value" ;;
      --log-vkey) vkey="${2-}"; shift 2 || die "--log-vkey needs a value" ;;
      --port) port="${2-}"; shift 2 || die "--port needs a value" ;;
      *) die "usage: $0 up --origin ORIGIN --log-vkey VKEY [--port N]" ;;
    esac
  done
  [[ -n "$origin" && "$origin" != *$'\n'* ]] || die "--origin ORIGIN (one non-empty line) is required"
  [[ "$vkey" =~ ^[^+[:space:]]+\+[0-9a-f]{8}\+[A-Za-z0-9+/]+=*$ ]] || die "--log-vkey must be a signed-note verifier key name+hash+base64, got '$vkey'"
  if [[ -z "$port" && -f "$ENV_FILE" ]]; then
    port="$(sed -n 's|^OMNIWITNESS_URL=http://127.0.0.1:\([0-9]*\)$|\1|p' "$ENV_FILE")"
  fi
  port="${port:-3110}"
  [[ "$port" =~ ^[0-9]+$ ]] || die "--port must be a number, got '$port'"
  url="http://127.0.0.1:$port"

  mkdir -p "$STATE"
  exec 9>"$STATE/.lock"
  take_lock 9 "$STATE/.lock" "omniwitness.sh on $STATE"
  ensure_binaries

  # The witness's own key, made once by its own tool: a note signing key (PRIVATE+...) and
  # the matching cosignature/v1 verifier key.
  if [[ ! -s "$STATE/witness.sec" || ! -s "$STATE/witness.vkey" ]]; then
    log "generating the witness key '$OMNIWITNESS_NAME' in $STATE"
    rm -f "$STATE/witness.sec" "$STATE/witness.vkey"
    "$BIN_DIR/generate_keys" --origin="$OMNIWITNESS_NAME" \
      --out_priv="$STATE/witness.sec" --out_pub="$STATE/witness.vkey" >&2
  fi

  # Every log this state dir's database ever trusted, one "VKEY ORIGIN" line each.
  local known
  known="$(O="$origin" awk '{k=$1; sub(/^[^ ]+ /, "")} $0 == ENVIRON["O"] {print k; exit}' "$STATE/trusted" 2>/dev/null || true)"
  [[ -z "$known" || "$known" == "$vkey" ]] ||
    die "this witness already trusts '$origin' with key $known and would keep that key; run '$0 down --wipe' first"

  local config want
  config="$(printf 'Logs:\n  - Origin: %s\n    PublicKey: %s\n' "$(yaml_str "$origin")" "$(yaml_str "$vkey")")"
  want="$(printf '%s\nport %s\n' "$config" "$port")"
  if pid="$(pid_of)"; then
    if [[ "$(cat "$STATE/running" 2>/dev/null)" == "$want" ]] && answers "$url"; then
      log "omniwitness already running (pid $pid) on $url"
    else
      stop
    fi
  fi
  if ! pid_of >/dev/null; then
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && die "127.0.0.1:$port is already in use (use --port)"
    printf '%s\n' "$config" >"$STATE/logs.yaml"
    log "starting omniwitness on $url (log '$origin', state in $STATE)"
    printf '\n==== %s starting omniwitness\n' "$(date -u +%FT%TZ)" >>"$LOG_FILE"
    # Flags left at their defaults keep everything else off: --public_witness_config_url,
    # --rest_distro_url and --bastion_addr are empty.
    # shellcheck disable=SC2016 # $$ and $@ belong to the inner shell
    setsid nohup bash -c 'echo $$ >"$0"; exec "$@"' "$PID_FILE" "$BIN_DIR/omniwitness" \
      --listen="127.0.0.1:$port" --metrics_listen= \
      --db_file="$STATE/witness.db" \
      --private_key_path="$STATE/witness.sec" \
      --additional_logs="$STATE/logs.yaml" \
      </dev/null >>"$LOG_FILE" 2>&1 9>&- &
    local deadline=$((SECONDS + READY_TIMEOUT))
    sleep 0.2
    until answers "$url"; do
      pid_of >/dev/null || fail_with_log "omniwitness exited while starting"
      ((SECONDS < deadline)) || fail_with_log "omniwitness did not answer on $url within ${READY_TIMEOUT}s"
      sleep 0.2
    done
    printf '%s\n' "$want" >"$STATE/running"
    [[ -n "$known" ]] || printf '%s %s\n' "$vkey" "$origin" >>"$STATE/trusted"
  fi

  printf 'OMNIWITNESS_URL=%s\nOMNIWITNESS_VKEY=%s\n' "$url" "$(<"$STATE/witness.vkey")" >"$ENV_FILE.tmp"
  mv "$ENV_FILE.tmp" "$ENV_FILE"
  log "ready; env in $ENV_FILE, log in $LOG_FILE"
  cat "$ENV_FILE"
}

cmd_down() {
  local wipe=false
  case "${1:-}" in "") ;; --wipe) wipe=true ;; *) die "usage: $0 down [--wipe]" ;; esac
  [[ -d "$STATE" ]] || { log "nothing to stop ($STATE does not exist)"; return 0; }
  exec 9>"$STATE/.lock"
  take_lock 9 "$STATE/.lock" "omniwitness.sh on $STATE"
  stop
  rm -f "$STATE/running"
  if $wipe; then log "deleting $STATE"; exec 9>&-; rm -rf "$STATE"; fi
}

cmd_status() {
  local pid url
  pid="$(pid_of)" || { echo "omniwitness stopped"; return 1; }
  url="$(sed -n 's/^OMNIWITNESS_URL=//p' "$ENV_FILE" 2>/dev/null)"
  if [[ -n "$url" ]] && answers "$url"; then echo "omniwitness healthy (pid $pid)"; cat "$ENV_FILE"; return 0; fi
  echo "omniwitness UNHEALTHY (pid $pid), see $LOG_FILE"; return 1
}

case "${1:-}" in
  up) shift; cmd_up "$@" ;;
  build) ensure_binaries; echo "OMNIWITNESS_BIN=$BIN_DIR/omniwitness" ;;
  down) shift; cmd_down "$@" ;;
  status) shift; cmd_status "$@" ;;
  -h | --help | help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' ;;
  *) die "unknown command '${1:-}' (use up --origin ORIGIN --log-vkey VKEY [--port N], build, down [--wipe], status)" ;;
esac
