// Package resolver resolves Maven coordinates the way spark-submit
// --packages does (Apache Ivy with Spark's settings), in Go.
//
// Resolve takes a Request (packages, repositories, excludes, conflict mode,
// lock, cache) and returns a Result: the lock.File it produced, the
// dependency graph and the jars' cache paths. This package holds:
//   - the graph engine: Ivy's latest-revision conflict manager (Spark's) or
//     Maven's nearest-wins, with Ivy's dynamic revisions and exclusions, over
//     the POM model of package maven, reaching the repositories only
//     through the Source it declares;
//   - the lock flow (Resolve, LockFor, FetchLocked: a lock used, checked or
//     written) and Why.
//
// Its subjects below the engine are packages of their own:
// resolver/repo (the repository chain, built once per call, and the
// Source over it: fetch, retries, bounds, checksums, SNAPSHOTs, the
// locked fetch, signatures), which imports resolver/cache (the
// content-addressed blob cache, Retrieve, JarOpener), resolver/ivysettings
// and resolver/mavensettings (the two settings parsers, into plain
// models); none of them imports the engine. A Request's I/O half is
// handed to repo as a repo.Config. The lockfile format lives in package
// lock, so that the stores and submit never import the resolver. Errors
// carry an errdefs kind; a bad option is errdefs.BadArgument naming it.
package resolver
