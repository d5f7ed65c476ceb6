# Real Apache Spark distributions from PyPI (pyspark brings bin/spark-submit,
# the standalone master and worker, and Spark's own Ivy code). Pinned, and
# cached by version under $PREBAKE_CI_CACHE/pyspark-<version>/ (outside the
# clone): SPARK_HOME is $PREBAKE_CI_CACHE/pyspark-<version>/pyspark and the
# directory itself goes on PYTHONPATH (pyspark and py4j are installed there).
# pip reaches PyPI through the machine's own pip configuration.
# The default is what .ci/run uses: internal/testenv's SparkVersions and the
# CI lines of its SparkLines (hack/central's TestInfraSparkVersions keeps them
# in step); make parity-lines passes every line's version.
spark_versions="${PREBAKE_SPARK_VERSIONS:-3.4.4 3.5.9 4.0.5 4.3.0}"
for v in $spark_versions; do
  case "$v" in
    *[!0-9.]*|"") echo "60-spark.sh: pyspark version $v: want digits and dots" >&2; exit 1 ;;
  esac
  dir="$PREBAKE_CI_CACHE/pyspark-$v"
  if [ ! -x "$dir/pyspark/bin/spark-submit" ]; then
    log "pip install pyspark==$v into $dir"
    rm -rf "$dir.tmp"
    python3 -m pip install --quiet --no-compile --target "$dir.tmp" "pyspark==$v"
    rm -rf "$dir"
    mv "$dir.tmp" "$dir"
  fi
done
