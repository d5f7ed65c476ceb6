// Package repo is the resolver's repository side: Spark's repository
// chain and the Source the graph engine reads through.
//
// NewChain builds a Config's chain once per call (spark-semantics §1.4):
// local-m2-cache, central and spark-packages (DefaultArtifactRepository
// replacing the last two roots), then Repositories as repo-1..N; a Maven
// settings.xml applies its mirrors, server credentials and
// localRepository; an Ivy settings file replaces the chain with its
// default resolver, flattened. LockedChain is the chain a lock's jars are
// fetched through. A Chain gives the lock's inputs (Inputs), the Source
// (NewSource), the locked fetch (FetchLocked) and the signature checks
// (VerifySignatures).
//
// Source fetches POMs, metadata and artifacts from http(s) and file
// repositories into resolver/cache: retries with backoff (honouring
// Retry-After), per-host limits, idle, deadline and minimum-rate bounds,
// size caps on every body, checksums under a ChecksumPolicy, SNAPSHOT
// names from maven-metadata.xml, merged concurrent requests, and
// speculation (jars and parent POMs fetched as soon as a POM names them).
//
// Invariants: no URL is printed with its userinfo; every path derived
// from a coordinate or a server's reply stays under its root; a file
// enters the cache only verified (checksum, else the lock's sha256); the
// chain's home and DEFAULT_ARTIFACT_REPOSITORY come from the Config, never
// from the process environment, which only settings files read (their
// ${env.X}, as Maven and Ivy do) and MavenCentralURL (to find Maven).
// Errors carry an errdefs kind; ErrNotFound,
// ErrChecksumMismatch and ErrTooLarge are matched with errors.Is.
package repo
