// Package flock takes advisory whole-file locks (flock(2)) without
// waiting: the one probe the caches' and staging areas' sweeps share to
// tell whether a writer still holds a file.
package flock
