// Package layers bakes a resolved jar set into an image layer appended to a
// Spark base image, reproducibly, and reads it back. It is the only package
// that imports go-containerregistry.
//
// A reference is either a registry reference (registry/repo:tag or
// repo@sha256:…) or "oci:PATH[:tag]", an OCI image layout on disk.
//
// The baked manifest carries three annotations:
//   - dev.prebake.lock: the lock hash (resolver.Lockfile.Hash);
//   - dev.prebake.jars: {"dir":"/opt/spark/prebake/jars","files":[…]} in lock order;
//   - dev.prebake.coords: the coordinates, comma-separated, in lock order.
package layers
