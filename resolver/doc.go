// Package resolver resolves Maven coordinates the way spark-submit
// --packages does (Apache Ivy with Spark's settings), in Go.
//
// Resolve takes a Request (packages, repositories, excludes, conflict mode,
// lock, cache) and returns a Result: the lock.File it produced, the
// dependency graph and the jars' cache paths. Its parts:
//   - the repository chain (Spark's default chain, --repositories, Maven
//     settings.xml mirrors and credentials, spark.jars.ivySettings) and the
//     HTTP/file fetcher with checksum checks, declared in this package;
//   - the graph engine: Ivy's latest-revision conflict manager (Spark's) or
//     Maven's nearest-wins, with Ivy's dynamic revisions and exclusions, over
//     the POM model of package maven, reaching the repositories only
//     through Source;
//   - the lockfile round trip (LockFor, FetchLocked) and Why.
//
// Its subjects below the engine are packages of their own, each importing
// none of the others: resolver/cache (the content-addressed blob cache,
// Retrieve, JarOpener), resolver/ivysettings and resolver/mavensettings
// (the two settings parsers, into plain models). The lockfile format lives
// in package lock, so that the stores and submit never import the
// resolver. Errors carry an errdefs kind; a bad option is
// errdefs.BadArgument naming it.
package resolver
