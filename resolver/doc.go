// Package resolver resolves Maven coordinates the way spark-submit
// --packages does (Apache Ivy with Spark's settings), in Go.
//
// Resolve takes a Request (packages, repositories, excludes, conflict mode,
// lock, cache) and returns a Result: the lock.File it produced, the
// dependency graph and the jars' cache paths. Its parts:
//   - the repository chain (Spark's default chain, --repositories, Maven
//     settings.xml mirrors and credentials) and the HTTP/file fetcher with
//     checksum checks, over a content-addressed cache;
//   - the graph engine: Ivy's latest-revision conflict manager (Spark's) or
//     Maven's nearest-wins, with Ivy's dynamic revisions and exclusions, over
//     the POM model of package maven;
//   - the lockfile round trip (LockFor, FetchLocked, Retrieve) and Why.
//
// The lockfile format itself lives in package lock, so that the stores and
// submit never import the resolver. Errors carry an errdefs kind.
package resolver
