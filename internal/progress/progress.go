// Package progress reports what prebake is doing on stderr: bars for
// downloads, uploads and pushes when stderr is a terminal, plain lines
// otherwise (CI, Airflow logs). Results never go here; they go to stdout.
package progress

import (
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

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
	// warned receives every warning (for JSON results); nil: none.
	warned func(string)
	// every is how often a running transfer prints a plain line (no
	// terminal); retries counts the retries not printed, by host.
	every   time.Duration
	retries map[string]int
}

// LineInterval is how often, without a terminal, a running download or
// upload prints a plain progress line (CI and Airflow logs).
const LineInterval = 5 * time.Second

// WithLineInterval sets how often a running transfer prints a plain line
// when there is no terminal (default LineInterval).
func WithLineInterval(d time.Duration) Option {
	return func(o *options) error { o.every = d; return nil }
}

// Option configures a Reporter.
type Option func(*options) error

type options struct {
	tty    bool
	warned func(string)
	every  time.Duration
}

// WithTerminal forces bar mode on or off. The default detects whether w is a
// character device.
func WithTerminal(on bool) Option { return func(o *options) error { o.tty = on; return nil } }

// WithWarnings passes every warning (Warnf, Alertf), redacted, to f as
// well, whatever the level.
func WithWarnings(f func(string)) Option { return func(o *options) error { o.warned = f; return nil } }

// New returns a Reporter writing to w at level, or the first option's
// error.
func New(w io.Writer, level Level, opts ...Option) (*Reporter, error) {
	o := options{tty: isTerminal(w), every: LineInterval}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	return &Reporter{w: w, level: level, tty: o.tty, start: time.Now(), warned: o.warned, every: o.every}, nil
}

// Discard is a Reporter that prints nothing.
func Discard() *Reporter { return &Reporter{w: io.Discard, level: Quiet} }

// isTerminal reports whether w is a terminal that can draw bars: a
// terminal of unknown size (a 0×0 pty, as `script` or some CI runners give)
// gets plain lines instead, since bars would draw nothing there.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	width, _, err := term.GetSize(int(f.Fd()))
	return err == nil && width > 0
}

// Printf prints one step line at Normal level. Secrets are redacted.
func (r *Reporter) Printf(format string, args ...any) { r.print(Normal, format, args...) }

// Debugf prints one line at Verbose level.
func (r *Reporter) Debugf(format string, args ...any) { r.print(Verbose, format, args...) }

// Warnf prints a warning; only -q hides it.
func (r *Reporter) Warnf(format string, args ...any) {
	r.record(format, args...)
	r.print(Normal, "warning: "+format, args...)
}

// Alertf prints a warning that changes the outcome (a Scala mismatch,
// presigned URLs that expire): -q does not hide it.
func (r *Reporter) Alertf(format string, args ...any) {
	r.record(format, args...)
	r.print(Quiet, "warning: "+format, args...)
}

func (r *Reporter) record(format string, args ...any) {
	if r != nil && r.warned != nil {
		r.warned(redact.String(fmt.Sprintf(format, args...)))
	}
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
		now := time.Now()
		return &lineTask{r: r, name: name, total: total, start: now, last: now}
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

// Retryf reports a retry of a request to host: the first one for each host
// is printed, the others are counted and summarised by Wait, so a dead
// repository costs a few lines, not one per request.
func (r *Reporter) Retryf(host, format string, args ...any) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if r.retries == nil {
		r.retries = map[string]int{}
	}
	n, seen := r.retries[host]
	r.retries[host] = n + 1
	r.mu.Unlock()
	if !seen || r.level >= Verbose {
		r.print(Normal, format, args...)
	}
}

// Wait flushes the bars, if any, and summarises the retries not printed.
func (r *Reporter) Wait() {
	if r == nil {
		return
	}
	r.mu.Lock()
	p := r.bars
	r.bars = nil
	retries := r.retries
	r.retries = nil
	r.mu.Unlock()
	if p != nil {
		p.Wait()
	}
	hosts := make([]string, 0, len(retries))
	for h, n := range retries {
		if n > 1 && r.level < Verbose {
			hosts = append(hosts, h)
		}
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		r.print(Normal, "%s: %d retries in all (-v prints each)", h, retries[h])
	}
}

type nopTask struct{}

func (nopTask) Add(int64)  {}
func (nopTask) Done(error) {}

// lineTask reports a transfer as plain lines: one every r.every while it
// runs (Normal), and one at the end (Verbose, or Normal when it was long
// enough to have printed while running).
type lineTask struct {
	r      *Reporter
	name   string
	total  int64
	n      int64
	mu     sync.Mutex
	start  time.Time
	last   time.Time
	talked bool
}

func (t *lineTask) Add(n int64) {
	t.mu.Lock()
	t.n += n
	now := time.Now()
	due := t.r.every > 0 && now.Sub(t.last) >= t.r.every
	done, total := t.n, t.total
	if due {
		t.last, t.talked = now, true
	}
	t.mu.Unlock()
	if !due {
		return
	}
	if total > 0 {
		t.r.Printf("%s: %s of %s (%d%%)", t.name, size(done), size(total), done*100/total)
		return
	}
	t.r.Printf("%s: %s so far", t.name, size(done))
}

func (t *lineTask) Done(err error) {
	t.mu.Lock()
	n, talked := t.n, t.talked
	t.mu.Unlock()
	level := Verbose
	if talked {
		level = Normal
	}
	if err != nil {
		t.r.print(level, "%s: failed: %v", t.name, err)
		return
	}
	t.r.print(level, "%s: %d bytes in %s", t.name, n, time.Since(t.start).Round(time.Millisecond))
}

// size formats a byte count for a progress line.
func size(n int64) string {
	const mib = 1 << 20
	if n < mib {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/mib)
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
