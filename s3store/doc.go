// Package s3store is a content-addressed jar store in S3 (or in a local
// directory, for file:// stores), so Spark jobs can point spark.jars at jars
// that were resolved ahead of time. It is the only package that imports the
// AWS SDK.
//
// # Store layout
//
// A store is named by a URL, s3://bucket/prefix or file:///dir. Under its
// prefix it holds:
//
//	<prefix>/jars/sha256/<hex>/<spark-file-name>.jar   one jar, immutable
//	<prefix>/archives/sha256/<hex>/site-packages.tar.gz one set's wheels, immutable
//	<prefix>/sets/<lock-hash>.json                      one set's manifest
//
// The parts of a key:
//   - A jar's key is its sha256 (hex) plus the Spark-style file name, which
//     Spark uses to name its local copy. A key, once written, never changes.
//   - A set is named by the lock hash (lock.File.Hash). Its manifest
//     lists the set's jars (coord, file, sha256, size and path, relative to
//     the prefix) in lock order, which is spark.jars order. It is written
//     last, only after every jar is in place, so no reader sees a partial set.
//   - A set whose lock has wheels (WithWheels gives their files) also has
//     one archive: the wheels installed by prebake and merged into one
//     site-packages tree, a tar.gz with deterministic bytes, named by its
//     sha256, written before the jars; the manifest's "python" key names it
//     and the wheels. PythonConf is the Spark conf that ships it
//     (spark.archives=<url>#pydeps, PYTHONPATH=./pydeps). A jar-only set's
//     manifest has no "python" key: its bytes are unchanged (python.go).
//
// # Writes
//
//   - A blob that exists is never sent again: each jar is HEADed first and
//     skipped when present.
//   - The upload is a conditional PUT (If-None-Match: *). A 412 from a racing
//     writer means "already there". Where a server ignores the header, the race
//     is still harmless: both writers send the same bytes, named by their hash.
//   - Large jars go up as parallel multipart uploads (feature/s3/transfermanager)
//     with SHA-256 part checksums; small ones as one PUT with the object's
//     SHA-256, which the server checks. The local file is hashed before it is
//     sent, so a corrupt cache can never poison an immutable key.
//   - A failed multipart upload is aborted (also when the context is cancelled),
//     so no parts are left behind. A process killed with SIGKILL cannot abort:
//     add an AbortIncompleteMultipartUpload lifecycle rule to the bucket.
//   - A file:// store writes a temp file beside the target and links it into
//     place, so writes are atomic and never clobber.
//
// # Reads
//
// A cache hit costs one GET (the manifest). WithVerify adds one HEAD per jar and
// re-uploads missing jars.
//
// Credentials come from the standard AWS chain (environment, shared profile,
// web identity / IRSA). They are never printed; errors name the bucket and key.
package s3store
