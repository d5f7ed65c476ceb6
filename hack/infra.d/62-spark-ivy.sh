# The real spark-submit with Ivy 2.6.0 (issue 45): a copy of the newest
# pyspark line's distribution (60-spark.sh installs it) whose jars/ivy-*.jar
# is replaced by Ivy 2.6.0, which is what Spark's own change (SPARK-58878)
# does. hack/parity -spark runs it as the oracle of prebake's
# --ivy-version 2.6.0. Cached by version outside the clone:
# $PREBAKE_CI_CACHE/spark-<pyspark>-ivy-<ivy>/ (SPARK_HOME is its pyspark/,
# PYTHONPATH the directory itself, as for pyspark-<version>/).
#
# The jar comes from Maven Central through the machine's own Maven
# configuration (mvn dependency:get with --strict-checksums: Maven checks it
# against Central's .sha1 file), and its sha1 and sha256 are checked again
# here against the recorded ones. The copy hard-links the distribution's
# files (nothing writes into a SPARK_HOME), so it costs no disk and a second
# or two; the jar is a new file, so the original keeps its Ivy.
spark_ivy_pyspark="${PREBAKE_SPARK_IVY_PYSPARK:-4.3.0}"
spark_ivy_version=2.6.0
spark_ivy_sha1=11a76d2e1d439170c61b47a7a13110a78c6c0824
spark_ivy_sha256=7e14fe77306a8cc71197cb3f1681e9e673ccc04254a5ede7e848e2248491ec78
spark_ivy_dir="$PREBAKE_CI_CACHE/spark-$spark_ivy_pyspark-ivy-$spark_ivy_version"
if [ ! -f "$spark_ivy_dir/pyspark/jars/ivy-$spark_ivy_version.jar" ]; then
  src="$PREBAKE_CI_CACHE/pyspark-$spark_ivy_pyspark"
  if [ ! -x "$src/pyspark/bin/spark-submit" ]; then
    echo "62-spark-ivy.sh: pyspark $spark_ivy_pyspark is not installed under $src (60-spark.sh installs it)" >&2
    exit 1
  fi
  log "Ivy $spark_ivy_version from Maven Central (mvn, strict checksums) into $spark_ivy_dir"
  rm -rf "$spark_ivy_dir.tmp" "$spark_ivy_dir.jar"
  mvn -q -B -C dependency:copy -Dartifact="org.apache.ivy:ivy:$spark_ivy_version" -DoutputDirectory="$spark_ivy_dir.jar" >&2
  jar="$spark_ivy_dir.jar/ivy-$spark_ivy_version.jar"
  got1="$(sha1sum "$jar" | cut -d' ' -f1)"
  got256="$(sha256sum "$jar" | cut -d' ' -f1)"
  if [ "$got1" != "$spark_ivy_sha1" ] || [ "$got256" != "$spark_ivy_sha256" ]; then
    echo "62-spark-ivy.sh: $jar: sha1 $got1, sha256 $got256; want sha1 $spark_ivy_sha1, sha256 $spark_ivy_sha256 (Central's)" >&2
    exit 1
  fi
  rm -rf "$spark_ivy_dir.tmp"
  cp -al "$src" "$spark_ivy_dir.tmp"
  rm -f "$spark_ivy_dir.tmp"/pyspark/jars/ivy-*.jar
  mv "$jar" "$spark_ivy_dir.tmp/pyspark/jars/ivy-$spark_ivy_version.jar"
  rm -rf "$spark_ivy_dir.jar"
  rm -rf "$spark_ivy_dir"
  mv "$spark_ivy_dir.tmp" "$spark_ivy_dir"
fi
