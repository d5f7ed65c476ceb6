#!/usr/bin/env bash
# Install everything the tests need, idempotently. Used by .ci/run and by
# developers. Each part lives in hack/infra.d/NN-name.sh and is sourced in order.
# Binaries built from source are cached by version under $PREBAKE_CI_CACHE
# (default /var/cache/prebake-ci), outside the clone.
#
# hack/infra.sh [-only "PART..."] [-skip "PART..."]: only those parts, or all but those
# (names as in infra.d, e.g. 57-spark-operator.sh; .ci/run runs the Go builds apart, so
# that the steps which need none of them run meanwhile). Each part says its wall and CPU
# time ("infra: NN-name.sh took Ns (CPU Ms)"): docs/contributing.md keeps a fresh machine's figures.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
only="" skip=""
while [ $# -gt 0 ]; do
  case "$1" in
    -only) only="${2:?-only wants part names}"; shift 2 ;;
    -skip) skip="${2:?-skip wants part names}"; shift 2 ;;
    *) echo "usage: hack/infra.sh [-only \"PART...\"] [-skip \"PART...\"]" >&2; exit 2 ;;
  esac
done
for p in $only $skip; do
  if [ ! -f "$here/infra.d/$p" ]; then echo "hack/infra.sh: no part $p in hack/infra.d" >&2; exit 2; fi
done
export PREBAKE_CI_CACHE="${PREBAKE_CI_CACHE:-/var/cache/prebake-ci}"
mkdir -p "$PREBAKE_CI_CACHE"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export SUDO
log() { echo "infra: $*" >&2; }
export -f log
# wanted PART: whether this run does PART (00-lib.sh, the shared functions, always).
wanted() {
  case "$1" in 00-lib.sh) return 0 ;; esac
  if [ -n "$only" ]; then case " $only " in *" $1 "*) ;; *) return 1 ;; esac; fi
  case " $skip " in *" $1 "*) return 1 ;; esac
  return 0
}
# cpu_now sets cpu to the CPU seconds this shell and the children it has waited for used so
# far (user + system, from /proc; empty without it): a part's CPU time says what it costs
# on a loaded machine, where its wall time says little.
cpu_now() {
  local st
  cpu=""
  if read -r -a st 2>/dev/null <"/proc/$BASHPID/stat"; then
    cpu=$(((st[13] + st[14] + st[15] + st[16]) / clk_tck))
  fi
}
clk_tck="$(getconf CLK_TCK 2>/dev/null || echo 100)"
# run_part sources one part and says its wall time and CPU time.
run_part() {
  local part_start=$SECONDS part_cpu
  cpu_now
  part_cpu="$cpu"
  # shellcheck disable=SC1090
  source "$1"
  cpu_now
  log "$(basename "$1") took $((SECONDS - part_start))s${cpu:+ (CPU $((cpu - part_cpu))s)}"
}
infra_start=$SECONDS
# The Go builds from source (the Kubernetes binaries, CoreDNS, the spark-operator) are CPU-bound
# and take most of a cold run's CPU (about 1,480 of 1,880 CPU-seconds); the other parts mostly
# download and unpack.
# So the builds run one after the other in a background subshell while the
# other parts run in order; the script waits for both and fails if either does.
builds="50-k8s.sh 56-coredns.sh 57-spark-operator.sh"
(
  for b in $builds; do
    if wanted "$b"; then
      log "running $b (in the background)"
      run_part "$here/infra.d/$b"
    fi
  done
) &
builds_pid=$!
for part in "$here"/infra.d/*.sh; do
  name="$(basename "$part")"
  case " $builds " in *" $name "*) continue ;; esac
  wanted "$name" || continue
  log "running $name"
  run_part "$part"
done
log "the parts in order took $((SECONDS - infra_start))s; waiting for the background builds"
if ! wait "$builds_pid"; then
  log "the background builds ($builds) failed"
  exit 1
fi
log "done: took $((SECONDS - infra_start))s"
