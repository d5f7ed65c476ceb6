// Package progress reports what prebake is doing on stderr: bars for
// downloads, uploads and pushes when stderr is a terminal, plain lines
// otherwise (CI, Airflow logs). Results never go here; they go to stdout.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/prebake/prebake/internal/progress/task"
	"github.com/prebake/prebake/internal/redact"
)

// Level is how much is printed.
type Level int

const (
	Quiet   Level = iota // errors only (-q)
	Normal               // steps and summaries
	Verbose              // every file (-v)
)

// Reporter prints progress. The zero value prints nothing. It is safe for
// concurrent use.
type Reporter struct {
	w     io.Writer
	level Level
	tty   bool
	mu    sync.Mutex
	bars  *mpb.Progress
	start time.Time
}

// Option configures a Reporter.
type Option func(*Reporter)

// WithTerminal forces bar mode on or off. The default detects whether w is a
// character device.
func WithTerminal(on bool) Option { return func(r *Reporter) { r.tty = on } }

// New returns a Reporter writing to w at level.
func New(w io.Writer, level Level, opts ...Option) *Reporter {
	r := &Reporter{w: w, level: level, tty: isTerminal(w), start: time.Now()}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Discard is a Reporter that prints nothing.
func Discard() *Reporter { return &Reporter{w: io.Discard, level: Quiet} }

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Printf prints one step line at Normal level. Secrets are redacted.
func (r *Reporter) Printf(format string, args ...any) { r.print(Normal, format, args...) }

// Debugf prints one line at Verbose level.
func (r *Reporter) Debugf(format string, args ...any) { r.print(Verbose, format, args...) }

// Warnf prints a warning; only -q hides it.
func (r *Reporter) Warnf(format string, args ...any) {
	r.print(Normal, "warning: "+format, args...)
}

func (r *Reporter) print(l Level, format string, args ...any) {
	if r == nil || r.w == nil || r.level < l {
		return
	}
	msg := redact.String(fmt.Sprintf(format, args...))
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bars != nil {
		// Print above the bars.
		fmt.Fprintf(r.bars, "%s\n", msg)
		return
	}
	fmt.Fprintf(r.w, "%s\n", msg)
}

// Task is one unit of transfer work (a download, upload or push).
type Task = task.Task

// Start begins a task of total bytes (0 if unknown) named name (redacted).
// On a terminal it draws a bar; otherwise it prints one line when the task
// ends (Verbose) and nothing while it runs.
func (r *Reporter) Start(name string, total int64) Task {
	name = redact.String(name)
	if r == nil || r.level < Normal {
		return nopTask{}
	}
	if !r.tty {
		return &lineTask{r: r, name: name, start: time.Now()}
	}
	r.mu.Lock()
	if r.bars == nil {
		r.bars = mpb.New(mpb.WithOutput(r.w), mpb.WithWidth(40), mpb.WithAutoRefresh())
	}
	p := r.bars
	r.mu.Unlock()
	b := p.AddBar(total,
		mpb.PrependDecorators(decor.Name(name, decor.WC{W: len(name) + 1, C: decor.DindentRight})),
		mpb.AppendDecorators(decor.Counters(decor.SizeB1024(0), "% .1f / % .1f")),
		mpb.BarRemoveOnComplete(),
	)
	return &barTask{b: b, total: total}
}

// Wait flushes the bars, if any.
func (r *Reporter) Wait() {
	if r == nil {
		return
	}
	r.mu.Lock()
	p := r.bars
	r.bars = nil
	r.mu.Unlock()
	if p != nil {
		p.Wait()
	}
}

type nopTask struct{}

func (nopTask) Add(int64)  {}
func (nopTask) Done(error) {}

type lineTask struct {
	r     *Reporter
	name  string
	n     int64
	mu    sync.Mutex
	start time.Time
}

func (t *lineTask) Add(n int64) { t.mu.Lock(); t.n += n; t.mu.Unlock() }
func (t *lineTask) Done(err error) {
	if err != nil {
		t.r.Debugf("%s: failed: %v", t.name, err)
		return
	}
	t.r.Debugf("%s: %d bytes in %s", t.name, t.n, time.Since(t.start).Round(time.Millisecond))
}

type barTask struct {
	b     *mpb.Bar
	total int64
}

func (t *barTask) Add(n int64) { t.b.IncrInt64(n) }
func (t *barTask) Done(err error) {
	if err != nil {
		t.b.Abort(true)
		return
	}
	if t.total <= 0 {
		t.b.SetTotal(-1, true)
		return
	}
	t.b.SetTotal(t.total, true)
}
