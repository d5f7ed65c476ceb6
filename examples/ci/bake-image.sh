#!/usr/bin/env bash
# CI step: bake the job's resolved jars into its Spark image on every commit.
#
# The target tag derives from (base digest, lock hash), so when prebake.lock is
# unchanged the target already has it: a cache hit that downloads no jar and
# pushes nothing (2 registry requests). A changed lock bakes and pushes a new,
# reproducible image. The digest reference goes to stdout (and to
# $GITHUB_OUTPUT as image=… when set); the full JSON result to $BAKE_JSON.
#
# Environment:
#   BASE_IMAGE     the Spark image, e.g. apache/spark:3.5.1 (or oci:PATH:tag)
#   TARGET_IMAGE   where to push, e.g. ghcr.io/acme/spark-jobs (or oci:PATH)
#   LOCK           the committed lockfile (default prebake.lock)
#   PREBAKE        the prebake binary (default: prebake on PATH)
#   BAKE_JSON      where to write the JSON result (default bake-image.json)
#   PREBAKE_REGISTRY_AUTH  user:password for the target registry (else the Docker config)
#   PREBAKE_CACHE  the jar cache (cache it between CI runs to skip downloads; pruned at the end)
set -euo pipefail

: "${BASE_IMAGE:?set BASE_IMAGE to the Spark base image}"
: "${TARGET_IMAGE:?set TARGET_IMAGE to the repository to push to}"
LOCK="${LOCK:-prebake.lock}"
PREBAKE="${PREBAKE:-prebake}"
BAKE_JSON="${BAKE_JSON:-bake-image.json}"

# --lock alone: bake exactly the committed set; nothing is resolved here.
"$PREBAKE" bake image --base "$BASE_IMAGE" --target "$TARGET_IMAGE" --lock "$LOCK" -o json >"$BAKE_JSON"

# Parse the result with a JSON tool (jq is on GitHub's runners), never by layout.
ref=$(jq -er '.ref' "$BAKE_JSON")
hit=$(jq -r '.cacheHit' "$BAKE_JSON")
if [ -z "$ref" ] || [ -z "$hit" ]; then
  echo "bake-image: unexpected output in $BAKE_JSON" >&2
  exit 70
fi
if [ "$hit" = true ]; then
  echo "bake-image: cache hit, lock unchanged: $ref" >&2
else
  echo "bake-image: baked and pushed $ref" >&2
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  { echo "image=$ref"; echo "cache-hit=$hit"; } >>"$GITHUB_OUTPUT"
fi
# Keep the saved CI cache small: layers and jars unused for 30 days go, the lock's jars stay.
"$PREBAKE" cache prune --older-than 30d --keep-lock "$LOCK" >&2
echo "$ref"
