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
# The Go builds from source (the Kubernetes binaries, CoreDNS, the spark-operator) are CPU-bound
# and take most of a cold run; the other parts mostly download and unpack.
# So the builds run one after the other in a background subshell while the
# other parts run in order; the script waits for both and fails if either does.
builds="50-k8s.sh 56-coredns.sh 57-spark-operator.sh"
(
  for b in $builds; do
    log "running $b (in the background)"
    # shellcheck disable=SC1090
    source "$here/infra.d/$b"
  done
) &
builds_pid=$!
for part in "$here"/infra.d/*.sh; do
  case " $builds " in *" $(basename "$part") "*) continue ;; esac
  log "running $(basename "$part")"
  # shellcheck disable=SC1090
  source "$part"
done
if ! wait "$builds_pid"; then
  log "the background builds ($builds) failed"
  exit 1
fi
log "done"
