# The tests' Spark base images (issue 25), one per pyspark of 60-spark.sh:
# hack/sparkimage puts pyspark's distribution and an entry point on the root
# file system of 55-node.sh, by prebake's layers package (no Docker), as OCI
# layouts in $PREBAKE_CI_CACHE/spark-images-<hash>/spark-<version> (symlink
# spark-images-current), keyed on the root file system and hack/sparkimage.
# internal/testenv/cluster pushes them to its registry. Measured: 40 s for the
# first (the root file system compressed once, 157 MB), 16 s for the second;
# 468 MB and 582 MB layouts.
si_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
si_rootfs="$(readlink -f "$PREBAKE_CI_CACHE/spark-rootfs-current.tar")"
si_hash="$( { basename "$si_rootfs"; cat "$si_root"/hack/sparkimage/main.go "$si_root"/hack/sparkimage/entrypoint.sh; } | sha256sum | cut -c1-12)"
si_dir="$PREBAKE_CI_CACHE/spark-images-$si_hash"
for v in ${PREBAKE_SPARK_VERSIONS:-3.5.9 4.0.5}; do
  if [ -s "$si_dir/spark-$v/index.json" ]; then
    log "spark image $v: $si_dir/spark-$v is up to date"
  else
    log "spark image $v: building into $si_dir"
    (cd "$si_root" && nice go run ./hack/sparkimage -rootfs "$si_rootfs" \
      -spark-home "$PREBAKE_CI_CACHE/pyspark-$v/pyspark" -out "$si_dir")
  fi
done
ln -sfn "$si_dir" "$PREBAKE_CI_CACHE/spark-images-current"
unset si_root si_rootfs si_hash si_dir
