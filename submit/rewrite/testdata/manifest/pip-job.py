# prebake test input: a PySpark job that installs its packages itself.
import subprocess
import sys

subprocess.check_call([sys.executable, "-m", "pip", "install", "requests"])
from pyspark.sql import SparkSession
