# shellcheck shell=bash
# daemons.sh is sourced by the scripts that run test servers in the background
# (rekor-up.sh, rekor-v2-up.sh). The caller defines log() and die() and sets RUN_DIR (pid
# files), LOG_DIR (one log per daemon), STATE (the daemons' working directory) and
# READY_TIMEOUT (seconds). A daemon is known by one NAME: the basename of the binary it
# runs, its pid file $RUN_DIR/NAME.pid and its log $LOG_DIR/NAME.log.

# pid_of NAME prints the pid from NAME's pid file if that process is alive and still runs
# the binary NAME (so a recycled pid is never mistaken for ours); fails otherwise.
pid_of() {
  local name="$1" pid argv0
  [[ -f "$RUN_DIR/$name.pid" ]] || return 1
  pid="$(<"$RUN_DIR/$name.pid")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [[ -r "/proc/$pid/cmdline" ]] || return 1
  argv0="$({ tr '\0' '\n' <"/proc/$pid/cmdline"; } 2>/dev/null | head -n1)"
  [[ "$(basename -- "$argv0")" == "$name" ]] || return 1
  printf '%s\n' "$pid"
}

# spawn NAME BINARY ARGS... starts BINARY fully detached (new session, stdin from /dev/null,
# output appended to NAME's log, working directory $STATE) and records its pid. The inner
# shell writes its own pid and then execs the binary, so the pid file holds the daemon's pid.
# Descriptor 9 (our lock) is closed so a daemon never holds the lock.
spawn() {
  local name="$1"; shift
  mkdir -p "$RUN_DIR" "$LOG_DIR"
  printf '\n==== %s starting %s\n' "$(date -u +%FT%TZ)" "$name" >>"$LOG_DIR/$name.log"
  # shellcheck disable=SC2016 # $$, $1 and $@ belong to the inner shell
  setsid nohup bash -c 'echo $$ >"$0"; cd "$1" || exit 1; shift; exec "$@"' "$RUN_DIR/$name.pid" "$STATE" "$@" \
    </dev/null >>"$LOG_DIR/$name.log" 2>&1 9>&- &
  # Wait briefly for the pid file so callers can use pid_of at once.
  for _ in $(seq 50); do
    pid_of "$name" >/dev/null && return 0
    sleep 0.1
  done
  fail_with_log "$name" "$name exited at once (or never started)"
}

# running PID succeeds while PID exists and has not exited: a daemon's parent is init, and
# until init reaps it (some inits take a second or two) an exited daemon is a zombie.
running() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [[ "${stat%% *}" != Z ]]
}

# stop NAME stops NAME's process: SIGTERM, then SIGKILL after 20 s.
stop() {
  local name="$1" pid
  if ! pid="$(pid_of "$name")"; then
    rm -f "$RUN_DIR/$name.pid"
    return 0
  fi
  log "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 200); do
    running "$pid" || break
    sleep 0.1
  done
  if running "$pid"; then
    log "$name did not exit after SIGTERM; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.5
  fi
  rm -f "$RUN_DIR/$name.pid"
}

# fail_with_log NAME MESSAGE says MESSAGE, shows the end of NAME's latest run from its log
# with the lines that look like the cause, and exits 1.
fail_with_log() {
  local name="$1" msg="$2"
  log "error: $msg"
  local f="$LOG_DIR/$name.log" run
  local pattern='^(panic: |fatal error: |F[0-9]{4} )|level=ERROR|\[ERROR\]|(ERROR|FATAL|PANIC)(.\[0m)?[[:space:]]'
  if [[ -f "$f" ]]; then
    # Only the latest run: the log is appended to, one "==== ... starting" header per start.
    run="$(awk '/^==== /{buf=""} {buf=buf $0 "\n"} END{printf "%s", buf}' "$f")"
    log "last lines of $f:"
    tail -n 40 <<<"$run" | sed 's/^/    /' >&2
    # Go panics and klog fatals put the cause above a long stack trace; repeat it last.
    if grep -qE "$pattern" <<<"$run"; then
      log "likely cause:"
      grep -E "$pattern" <<<"$run" | tail -n 3 | cut -c1-600 | sed 's/^/    /' >&2
    fi
  fi
  exit 1
}

# port_open PORT succeeds if something accepts TCP connections on 127.0.0.1:PORT.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# ensure_port_free NAME PORT fails early when another program already listens on PORT.
ensure_port_free() {
  if port_open "$2"; then
    die "cannot start $1: 127.0.0.1:$2 is already in use by another program (override the port with the env vars listed at the top of $0)"
  fi
}

# wait_ready NAME DESCRIPTION CHECK... polls CHECK every 0.2 s until it succeeds; fails with
# the tail of NAME's log if NAME's process dies or READY_TIMEOUT seconds pass.
wait_ready() {
  local name="$1" what="$2"; shift 2
  local deadline=$((SECONDS + READY_TIMEOUT))
  until "$@" >/dev/null 2>&1; do
    pid_of "$name" >/dev/null || fail_with_log "$name" "$name exited while waiting for $what"
    ((SECONDS < deadline)) || fail_with_log "$name" "timed out after ${READY_TIMEOUT}s waiting for $what"
    sleep 0.2
  done
}
