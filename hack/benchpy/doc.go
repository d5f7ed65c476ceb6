// Package benchpy holds make bench's Python rows (bench_test.go): a real
// PySpark dependency set (pandas, pyarrow and their dependencies, for
// CPython 3.11 on manylinux x86_64) resolved and fetched cold by prebake
// against uv pip install --target of the same set, the warm path from the
// lock and the cache (with a count of the index connections), and the
// Python layer bake against a read + write + hash floor, side by side in
// one run. It has no code of its own.
package benchpy
