# uv, the Python resolver prebake drives when a PySpark job's Python
# requirements are not fully pinned (resolver/pypi, issue 44). Pinned, and
# installed from PyPI by pip (through the machine's own pip configuration)
# into $PREBAKE_CI_CACHE/uv-<version>/ (outside the clone): the binary is
# $PREBAKE_CI_CACHE/uv-<version>/bin/uv, where resolver/pypi looks for it
# after $PREBAKE_UV and PATH. A fully pinned input needs no uv.
uv_version="${PREBAKE_UV_VERSION:-0.13.8}"
case "$uv_version" in
  *[!0-9.]*|"") echo "72-uv.sh: uv version $uv_version: want digits and dots" >&2; exit 1 ;;
esac
uv_dir="$PREBAKE_CI_CACHE/uv-$uv_version"
if [ ! -x "$uv_dir/bin/uv" ]; then
  log "pip install uv==$uv_version into $uv_dir"
  pip_target "$uv_dir" "uv==$uv_version"
fi
