// Package layers bakes a resolved jar set into image layers appended to a
// Spark base image, reproducibly, and reads it back. It is the only package
// that imports go-containerregistry; no Docker daemon is used.
//
// # References
//
// A reference is either a registry reference (registry/repo[:tag|@sha256:…])
// or "oci:PATH[:tag]" / "oci:PATH@sha256:…", an OCI image layout on disk
// whose manifests are named by the org.opencontainers.image.ref.name
// annotation.
//
// # Bake
//
// Bake reads the base digest (one HEAD; none for a digest or a layout),
// derives the tag "prebake-<32 hex>" from the base digest, the lock hash and
// the options (or uses BakeInput.Tag), and GETs the target's manifest: when it
// carries the same lock, base, jars dir and key, that is a cache hit and
// nothing is fetched, built or pushed (2 registry requests, not counting the
// auth handshake). Otherwise it fetches the jars, builds the layer(s) and
// pushes with remote.Write: blobs the target has are skipped (HEAD), blobs of
// the same registry are mounted, the rest stream with WithJobs uploads in
// flight. A registry that refuses a mount gets an upload.
//
// # Reproducibility
//
// Layer tar entries are sorted, parent directories included, uid/gid 0, no
// user names, modes 0644 (0755 when executable), mtime SOURCE_DATE_EPOCH when
// set and non-empty, else 1970-01-01T00:00:01Z. The compression
// (WithCompression; compression.go) is none by default: jars are already
// deflated, so a plain tar layer costs one sha256 pass (its digest is its
// diffID) where gzip or zstd save under 1 % for several times the time
// (BenchmarkCompression). Each compressor is pinned: klauspost/compress gzip
// level 1 (BenchmarkCompressor: 1.6x the speed of compress/gzip level 1 at
// the same size), klauspost/compress zstd SpeedFastest with one encoder
// goroutine; eStargz (estargz.go) is pinned the same way. The same base
// digest, lock and compression give the same digest; the compression is
// part of the layer and bake keys.
//
// # Annotations
//
// The baked manifest (and index) carries:
//   - dev.prebake.lock: the lock hash (lock.File.Hash);
//   - dev.prebake.jars: {"dir":"/opt/spark/prebake/jars","files":[…]}, the
//     jar file names in spark.jars (lock) order; ReadJars returns them;
//   - dev.prebake.coords: the requested coordinates, comma-separated;
//   - dev.prebake.key: the bake key (base, lock, options);
//   - dev.prebake.spark-version: the base's Spark version as its
//     spark-core_*.jar says ("4.0.1"), when it has one; a cache hit reads it
//     back into Result.SparkVersion;
//   - dev.prebake.shared: the shared set's hash (BakeInput.Shared), when
//     the bake has a shared layer;
//   - dev.prebake.python: {"dir":"/opt/prebake/python/site-packages",
//     "files":[…]}, the wheels installed there, in lock order (a lock with
//     wheels only);
//   - org.opencontainers.image.base.digest: the base's digest.
//
// An eStargz layer's descriptor (CompressionEstargz, estargz.go) carries
// containerd.io/snapshot/stargz/toc.digest and
// io.containers.estargz.uncompressed-size.
//
// # Shared layers
//
// With BakeInput.Shared the jars of the lock that the shared set has go
// into one layer right above the base, the Extra files' next, the per-job
// layer(s) last: the shared layer depends only on its jars, so every job
// whose lock holds the set gets the same digest, and the bytes a node pulls
// for its next job are that job's own layer (TestITSharedLayerPull).
//
// # Python
//
// A lock with wheels (BakeInput.Wheels gives their files) gets one more
// layer right above the jars' (python.go): the wheels installed by
// internal/wheel (no script runs) and merged by internal/sitepkgs into one
// site-packages tree at DefaultPythonDir, with the layers' rules above;
// two wheels writing one path are refused naming both. The image config's
// PYTHONPATH gets the directory appended (WithPythonPath), which Spark's
// driver and executor Pythons put after pyspark's own. The bake key adds
// the directory for a lock with wheels only: jar-only keys are unchanged.
//
// # JSON
//
// Result, Info and Report marshal to stable JSON documents; the CLI's
// documents that carry them are described in docs/json-output.md, with a
// schema each in docs/schemas.
package layers
