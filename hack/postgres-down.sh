#!/usr/bin/env bash
# postgres-down.sh stops the private PostgreSQL server started by hack/postgres-up.sh.
# Extra arguments are passed on, so `hack/postgres-down.sh --wipe` also deletes the state dir.
set -euo pipefail
exec "$(dirname "$0")/postgres-up.sh" down "$@"
