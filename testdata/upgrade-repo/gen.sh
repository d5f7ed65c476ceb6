#!/bin/sh
# gen.sh writes this file:// Maven repository, the fixture of
# pipeline/upgrade's tests and `prebake upgrade-report`'s goldens: a Spark
# 3.5 job's set and its 4.0 counterparts. Run from this directory; the
# output is committed.
set -eu
mod() { # g a v [dep g:a:v ...]
  g=$1 a=$2 v=$3; shift 3
  d=$(echo "$g" | tr . /)/$a/$v
  mkdir -p "$d"
  deps=""
  for dep in "$@"; do
    dg=${dep%%:*} rest=${dep#*:}; da=${rest%%:*} dv=${rest#*:}
    deps="$deps<dependency><groupId>$dg</groupId><artifactId>$da</artifactId><version>$dv</version></dependency>"
  done
  printf '<project><modelVersion>4.0.0</modelVersion><groupId>%s</groupId><artifactId>%s</artifactId><version>%s</version><dependencies>%s</dependencies></project>\n' "$g" "$a" "$v" "$deps" > "$d/$a-$v.pom"
  printf 'jar of %s:%s:%s\n' "$g" "$a" "$v" > "$d/$a-$v.jar"
  for f in "$d/$a-$v.pom" "$d/$a-$v.jar"; do sha1sum "$f" | cut -d' ' -f1 > "$f.sha1"; done
}
meta() { # g a v...
  g=$1 a=$2; shift 2
  d=$(echo "$g" | tr . /)/$a
  vs=""; for v in "$@"; do vs="$vs<version>$v</version>"; last=$v; done
  printf '<metadata><groupId>%s</groupId><artifactId>%s</artifactId><versioning><latest>%s</latest><release>%s</release><versions>%s</versions></versioning></metadata>\n' "$g" "$a" "$last" "$last" "$vs" > "$d/maven-metadata.xml"
  sha1sum "$d/maven-metadata.xml" | cut -d" " -f1 > "$d/maven-metadata.xml.sha1"
}
mod org.apache.spark spark-avro_2.12 3.5.1 org.tukaani:xz:1.9
mod org.apache.spark spark-avro_2.13 4.0.0 org.tukaani:xz:1.10
mod org.apache.spark spark-avro_2.13 4.0.1 org.tukaani:xz:1.10
mod org.apache.spark spark-avro_2.13 4.1.0 org.tukaani:xz:1.10
meta org.apache.spark spark-avro_2.12 3.5.1
meta org.apache.spark spark-avro_2.13 4.0.0 4.0.1 4.1.0
mod org.tukaani xz 1.9
mod org.tukaani xz 1.10
meta org.tukaani xz 1.9 1.10
# a third-party Scala library with a 2.13 build at the same version
mod com.example lib-good_2.12 1.0 org.scala-lang:scala-library:2.12.18
mod com.example lib-good_2.13 1.0 org.scala-lang:scala-library:2.13.14
meta com.example lib-good_2.12 1.0
meta com.example lib-good_2.13 1.0
mod org.scala-lang scala-library 2.12.18
mod org.scala-lang scala-library 2.13.14
meta org.scala-lang scala-library 2.12.18 2.13.14
# one whose 2.13 builds stop before the job's version
mod com.example lib-old_2.12 2.1
mod com.example lib-old_2.13 1.5
mod com.example lib-old_2.13 1.8
meta com.example lib-old_2.12 2.1
meta com.example lib-old_2.13 1.5 1.8
# one with no 2.13 build at all
mod com.example lib-none_2.12 1.0
meta com.example lib-none_2.12 1.0
# no Scala suffix: the same on both lines
mod org.apache.hadoop hadoop-aws 3.3.4 com.amazonaws:aws-java-sdk-bundle:1.12.262
mod com.amazonaws aws-java-sdk-bundle 1.12.262
meta org.apache.hadoop hadoop-aws 3.3.4
meta com.amazonaws aws-java-sdk-bundle 1.12.262
