"""The PySpark journeys' app (issue 44): the driver and a UDF on the
executors import the job's Python dependencies, one pure-Python
(tabulate) and one with native code (PyYAML's C extension, yaml._yaml),
and the driver writes and reads Avro (spark-avro, from --packages).

Usage: app.py OUT_DIR. It prints one PYDEPS line per fact, then
"PYDEPS OK"; on any mismatch it prints "PYDEPS FAIL: why" and exits 3.
"""
import json
import socket
import sys

WANT = {"tabulate": "0.9.0", "yaml": "6.0.2"}


def probe(_=None):
    """What this interpreter imports: versions, files, the C loader."""
    import tabulate
    import yaml
    import yaml._yaml as cyaml  # the native extension: ImportError without it

    loaded = yaml.load("k: [1, 2]", Loader=yaml.CSafeLoader)
    return json.dumps({
        "host": socket.gethostname(),
        "python": sys.version.split()[0],
        "tabulate": tabulate.__version__,
        "tabulate_file": tabulate.__file__,
        "yaml": yaml.__version__,
        "yaml_file": yaml.__file__,
        "yaml_native_file": cyaml.__file__,
        "libyaml": bool(yaml.__with_libyaml__),
        "loaded": loaded,
        "table": tabulate.tabulate([[1, "a"]], tablefmt="plain"),
    }, sort_keys=True)


def check(where, got, fails):
    for mod, v in WANT.items():
        if got[mod] != v:
            fails.append("%s: %s %s, want %s (from %s)" % (where, mod, got[mod], v, got[mod + "_file"]))
    if not got["yaml_native_file"].endswith(".so"):
        fails.append("%s: yaml._yaml is %s, not a native extension" % (where, got["yaml_native_file"]))
    if not got["libyaml"] or got["loaded"] != {"k": [1, 2]}:
        fails.append("%s: the C loader did not load (libyaml %s, %r)" % (where, got["libyaml"], got["loaded"]))
    if got["table"] != "1  a":
        fails.append("%s: tabulate rendered %r" % (where, got["table"]))


def main():
    out = sys.argv[1]
    fails = []
    try:
        driver = json.loads(probe())
    except Exception as e:  # noqa: BLE001 (the failure is the report)
        print("PYDEPS FAIL: the driver cannot import its dependencies: %r (sys.path %s)" % (e, sys.path), flush=True)
        sys.exit(3)
    print("PYDEPS DRIVER " + json.dumps(driver, sort_keys=True), flush=True)
    check("driver", driver, fails)

    from pyspark.sql import SparkSession
    from pyspark.sql.functions import udf

    spark = SparkSession.builder.appName("prebake-pydeps").getOrCreate()
    probe_udf = udf(probe)
    try:
        rows = spark.range(0, 4, 1, 2).select(probe_udf("id").alias("p")).collect()
    except Exception as e:  # noqa: BLE001
        print("PYDEPS FAIL: the executors' UDF: %s" % str(e)[-2000:], flush=True)
        sys.exit(3)
    execs = sorted({r.p for r in rows})
    for e in execs:
        print("PYDEPS EXECUTOR " + e, flush=True)
        check("executor", json.loads(e), fails)

    spark.range(3).selectExpr("id", "concat('row-', id) AS name").write.mode("overwrite").format("avro").save(out)
    got = [r["name"] for r in spark.read.format("avro").load(out).orderBy("id").collect()]
    print("PYDEPS AVRO " + ",".join(got), flush=True)
    if got != ["row-0", "row-1", "row-2"]:
        fails.append("avro rows %s" % got)
    spark.stop()

    if fails:
        for f in fails:
            print("PYDEPS FAIL: " + f, flush=True)
        sys.exit(3)
    print("PYDEPS OK", flush=True)


if __name__ == "__main__":
    main()
