# Real Apache Spark distributions from PyPI (pyspark brings bin/spark-submit,
# the standalone master and worker, and Spark's own Ivy code). Pinned, and
# cached by version under $PREBAKE_CI_CACHE/pyspark-<version>/ (outside the
# clone): SPARK_HOME is $PREBAKE_CI_CACHE/pyspark-<version>/pyspark and the
# directory itself goes on PYTHONPATH (pyspark and py4j are installed there).
# pip reaches PyPI through the machine's own pip configuration.
# The versions are read by internal/testenv (keep SparkVersions there in step).
spark_versions="${PREBAKE_SPARK_VERSIONS:-3.5.9 4.0.5}"
for v in $spark_versions; do
  dir="$PREBAKE_CI_CACHE/pyspark-$v"
  if [ ! -x "$dir/pyspark/bin/spark-submit" ]; then
    log "pip install pyspark==$v into $dir"
    rm -rf "$dir.tmp"
    python3 -m pip install --quiet --no-compile --target "$dir.tmp" "pyspark==$v"
    rm -rf "$dir"
    mv "$dir.tmp" "$dir"
  fi
done
