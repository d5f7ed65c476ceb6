package repo

import (
	"io"

	"github.com/prebake/prebake/internal/progress/task"
	"github.com/prebake/prebake/internal/redact"
)

// Progress starts transfer tasks, one per artifact download (POMs,
// checksums and metadata are not reported). *progress.Reporter
// (internal/progress) implements it.
type Progress interface {
	Start(name string, total int64) task.Task
}

// WithProgress reports every artifact download (during Resolve and
// FetchLocked) to p, named by its URL without userinfo, with the response's
// Content-Length as the total. The default reports nothing.
func WithProgress(p Progress) Option {
	return func(o *options) error { o.progress = p; return nil }
}

// track wraps a download destination so the bytes written to it are
// reported to a task named by u (redacted). The task starts when the
// response arrives (fetcher.once calls begin with its Content-Length) and
// ends with done. Without a Progress it reports nothing.
func (f *fetcher) track(u string, w resetWriter) *trackedDest {
	return &trackedDest{resetWriter: w, p: f.progress, name: redact.URL(u)}
}

// trackedDest is a resetWriter reporting its bytes to a progress task. A
// retry resets the destination but not the task: bytes are reported once,
// when they pass the most any attempt has written, so the count ends at the
// body's size.
type trackedDest struct {
	resetWriter
	p    Progress
	name string

	task     task.Task
	n, shown int64
}

// contentLengthSetter is what fetcher.once tells of a 200 response.
type contentLengthSetter interface {
	begin(total int64)
}

var (
	_ contentLengthSetter = (*trackedDest)(nil)
	_ io.Writer           = (*trackedDest)(nil)
)

func (d *trackedDest) begin(total int64) {
	if d.task != nil || d.p == nil {
		return
	}
	d.task = d.p.Start(d.name, max(total, 0))
}

func (d *trackedDest) Write(b []byte) (int, error) {
	n, err := d.resetWriter.Write(b)
	d.n += int64(n)
	if d.n > d.shown {
		d.begin(0)
		if d.task != nil {
			d.task.Add(d.n - d.shown)
		}
		d.shown = d.n
	}
	return n, err
}

func (d *trackedDest) reset() error {
	d.n = 0
	return d.resetWriter.reset()
}

// done ends the task, if one was started.
func (d *trackedDest) done(err error) {
	if d.task != nil {
		d.task.Done(err)
		d.task = nil
	}
}
