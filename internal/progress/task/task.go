// Package task is the one type a library needs to report transfer
// progress: it holds no implementation, so the libraries do not link the
// terminal bars of package progress (mpb), which only cmd uses.
package task

// Task is one unit of transfer work (a download, upload or push).
type Task interface {
	// Add records n more bytes done.
	Add(n int64)
	// Done ends the task; err nil means success.
	Done(err error)
}
