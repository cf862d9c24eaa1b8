#!/usr/bin/env bash
# fuzz.sh runs every fuzz target of the repository for a while (default 5m each, two at a
# time on two cores) and copies the inputs the fuzzer found interesting into the target's
# testdata/fuzz/<Target>/ directory, where `go test` replays them as regression seeds.
#
#   hack/fuzz.sh [duration]      e.g. hack/fuzz.sh 30s
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-5m}"
cache="$(go env GOCACHE)/fuzz"

# Every "func FuzzX(" in a _test.go file, as "package-dir target".
mapfile -t targets < <(grep -rl --include='*_test.go' '^func Fuzz' . |
  xargs grep -o '^func Fuzz[A-Za-z0-9_]*' | sed 's|^\./||; s|/[^/]*_test.go:func | |' | sort -u)

run() {
  local dir="$1" target="$2"
  echo "fuzz: $dir $target for $duration" >&2
  local log="/tmp/cairn-fuzz-$target.log"
  if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$duration" -fuzzminimizetime 10s -parallel 1 "./$dir" >"$log" 2>&1; then
    # When -fuzztime runs out while the fuzzer minimizes a new interesting input, go test
    # fails with "context deadline exceeded" and writes no failing input: not a finding.
    if grep -q 'Failing input written' "$log" || ! grep -q 'context deadline exceeded' "$log"; then
      cat "$log" >&2
      return 1
    fi
    echo "fuzz: $target: time ran out while minimizing (no failing input)" >&2
  fi
  tail -n 3 "/tmp/cairn-fuzz-$target.log" >&2
  local pkg; pkg="$(go list "./$dir")"
  mkdir -p "$dir/testdata/fuzz/$target"
  if compgen -G "$cache/$pkg/$target/*" >/dev/null; then
    cp -n "$cache/$pkg/$target/"* "$dir/testdata/fuzz/$target/"
  fi
}

status=0
for ((i = 0; i < ${#targets[@]}; i += 2)); do
  read -r d1 t1 <<<"${targets[i]}"
  run "$d1" "$t1" & p1=$!
  p2=""
  if ((i + 1 < ${#targets[@]})); then
    read -r d2 t2 <<<"${targets[i + 1]}"
    run "$d2" "$t2" & p2=$!
  fi
  wait "$p1" || status=1
  [[ -z "$p2" ]] || wait "$p2" || status=1
done
exit "$status"
