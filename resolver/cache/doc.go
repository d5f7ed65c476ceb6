// Package cache is prebake's content-addressed jar cache: blobs named by
// their sha256 (BlobPath), an index from a URL to the blob it served, the
// per-user verification stamps (VerifyBlob, OpenBlob, JarOpener), the
// cross-process download locks and 404 records, and Retrieve (a lock's
// jars under their own names).
//
// Invariants: every write is a temp file renamed into place, so a present
// blob is complete and processes sharing a cache never see partial files;
// a blob is handed out only once it hashes to its name (or carries this
// user's stamp of that check); directories prebake writes into or hands
// out paths under are checked to be the user's (internal/cachedir). The
// package reads no PREBAKE_* variable: DefaultDir takes getenv, and the
// PREBAKE_CACHE override is cmd's.
package cache
