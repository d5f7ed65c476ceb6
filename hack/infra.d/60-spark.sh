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
    pip_target "$dir" "pyspark==$v"
  fi
done

# The Python Spark Connect client's own dependencies (pyspark[connect] of
# 4.3.0: grpcio, pandas, pyarrow…), for test/spark's Connect tests; pinned to
# the versions those tests ran with, beside pyspark (PYTHONPATH gets both).
connect_deps="$PREBAKE_CI_CACHE/pyspark-connect-deps-4.3.0"
if [ ! -d "$connect_deps/grpc" ]; then
  log "pip install the Spark Connect client's dependencies into $connect_deps"
  pip_target "$connect_deps" \
    grpcio==1.85.3 grpcio-status==1.85.3 googleapis-common-protos==1.76.0 \
    pandas==3.1.1 pyarrow==26.0.1 numpy==2.4.6 zstandard==0.25.0
fi
