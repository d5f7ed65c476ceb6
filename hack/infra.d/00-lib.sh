# The parts' shared shell functions (hack/infra.sh sources this first; a
# Makefile target that sources one part sources this before it).

# pip_target DIR PIP_ARG...: pip install PIP_ARG... into DIR, a cache
# directory named by version, through DIR.tmp, so that DIR is either whole
# or absent. pip reaches the index through the machine's own pip
# configuration.
pip_target() {
  local dir="$1"
  shift
  rm -rf "$dir.tmp"
  python3 -m pip install --quiet --no-compile --target "$dir.tmp" "$@"
  rm -rf "$dir"
  mv "$dir.tmp" "$dir"
}
