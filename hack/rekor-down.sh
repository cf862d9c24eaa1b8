#!/usr/bin/env bash
# rekor-down.sh stops the local Rekor stack started by hack/rekor-up.sh.
# Extra arguments are passed on, so `hack/rekor-down.sh --wipe` also deletes the state dir.
set -euo pipefail
exec "$(dirname "$0")/rekor-up.sh" down "$@"
