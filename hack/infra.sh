#!/usr/bin/env bash
# Install everything the tests need, idempotently. Used by .ci/run and by
# developers. Each part lives in hack/infra.d/NN-name.sh and is sourced in order.
# Binaries built from source are cached by version under $PREBAKE_CI_CACHE
# (default /var/cache/prebake-ci), outside the clone.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export PREBAKE_CI_CACHE="${PREBAKE_CI_CACHE:-/var/cache/prebake-ci}"
mkdir -p "$PREBAKE_CI_CACHE"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export SUDO
log() { echo "infra: $*" >&2; }
export -f log
for part in "$here"/infra.d/*.sh; do
  log "running $(basename "$part")"
  # shellcheck disable=SC1090
  source "$part"
done
log "done"
