"""The demo's Spark job: it calls dev.prebake.demo.Greeting, a class that only the
package dev.prebake.demo:greeting:1.0 provides, so it runs only when that jar (resolved
and cached by prebake) is on the classpath. An argument N makes it exit with code N
after the job, for the exit-code tests."""
import sys

from pyspark.sql import SparkSession

spark = SparkSession.builder.appName("prebake-demo").getOrCreate()
greeting = spark.sparkContext._jvm.dev.prebake.demo.Greeting.hello("spark")
rows = spark.range(3).count()
print("GREETING: %s (%d rows)" % (greeting, rows), flush=True)
spark.stop()
if len(sys.argv) > 1:
    sys.exit(int(sys.argv[1]))
