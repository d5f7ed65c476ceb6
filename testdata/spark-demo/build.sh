#!/usr/bin/env bash
# Rebuilds repo/dev/prebake/demo/greeting/1.0/greeting-1.0.jar (and its .sha1)
# from src/ with javac (Java 8 bytecode, so that every Spark can load it) and
# a fixed entry time, so that the jar is the same bytes on every machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
out=repo/dev/prebake/demo/greeting/1.0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
javac --release 8 -d "$tmp/classes" src/dev/prebake/demo/Greeting.java
jar --create --file "$out/greeting-1.0.jar" --date 1980-01-01T00:00:02Z --no-manifest -C "$tmp/classes" .
for f in "$out"/greeting-1.0.jar "$out"/greeting-1.0.pom; do sha1sum "$f" | cut -d' ' -f1 | tr -d '\n' > "$f.sha1"; done
