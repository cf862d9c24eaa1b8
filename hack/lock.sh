# lock.sh is sourced by the setup scripts, which each define log(). It holds take_lock.
#
# take_lock FD FILE WHAT takes an exclusive flock on FILE, already open on descriptor FD.
# When another caller holds it, it says so on stderr at once (with that caller's pid and
# command, where lslocks can tell), again every 30 s, and once more when it gets the lock,
# so a second `make dev` or `make test` waiting on a first one's build does not look hung.
take_lock() {
  local fd="$1" file="$2" what="$3" start=$SECONDS holder=""
  flock -n "$fd" && return 0
  if command -v lslocks >/dev/null 2>&1; then
    holder="$(lslocks --noheadings --raw -o PID,PATH 2>/dev/null | awk -v f="$file" '$2 == f { print $1; exit }')"
    [[ -n "$holder" ]] && holder=" (pid $holder: $(tr '\0' ' ' <"/proc/$holder/cmdline" 2>/dev/null | cut -c1-100))"
  fi
  log "waiting for another $what to finish: it holds $file$holder"
  until flock -w 30 "$fd"; do
    log "still waiting for the other $what after $((SECONDS - start)) s"
  done
  log "the other $what finished after $((SECONDS - start)) s; going on"
}
