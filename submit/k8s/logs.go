package k8s

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/prebake/prebake/internal/redact"
)

// logQuery selects part of a container log.
type logQuery struct {
	Since      time.Time // zero: from the start
	Tail       int64     // 0: all lines
	Timestamps bool
	LimitBytes int64 // 0: no limit
}

// logSource reads a container's log. The API implementation goes through
// pods/log (the API server proxies to the kubelet); tests may substitute it.
type logSource interface {
	ContainerLog(ctx context.Context, ns, pod, container string, q logQuery) ([]byte, error)
}

// apiLogs reads logs through the API server with the current client.
type apiLogs struct{ client func() kubernetes.Interface }

var _ logSource = apiLogs{}

func (a apiLogs) ContainerLog(ctx context.Context, ns, pod, container string, q logQuery) ([]byte, error) {
	opts := &corev1.PodLogOptions{Container: container, Timestamps: q.Timestamps}
	if !q.Since.IsZero() {
		t := metav1.NewTime(q.Since)
		opts.SinceTime = &t
	}
	if q.Tail > 0 {
		opts.TailLines = &q.Tail
	}
	if q.LimitBytes > 0 {
		opts.LimitBytes = &q.LimitBytes
	}
	rc, err := a.client().CoreV1().Pods(ns).GetLogs(pod, opts).Stream(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading log of %s/%s container %s: %w", ns, pod, container, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return b, fmt.Errorf("reading log of %s/%s container %s: %w", ns, pod, container, err)
	}
	return b, nil
}

// The driver-log lines that mean SparkContext has stopped (spark-semantics §3.1).
var (
	stopMarkers = []string{
		"Successfully stopped SparkContext", // any suffix: 4.1.1+ adds " (Uptime: N ms)"
		"Invoking stop() from shutdown hook",
		"Shutdown hook called",
	}
	stopExitCodeRE = regexp.MustCompile(`SparkContext is stopping with exitCode (-?\d+)`)
)

// mainExceptionPrefix starts the JVM's report of an uncaught exception in
// the driver's main thread (the thread then dies; a non-daemon thread can
// keep the JVM up).
const mainExceptionPrefix = `Exception in thread "main" `

// maxMainThrew bounds the exception line a hung driver's message quotes.
const maxMainThrew = 300

// appExitCode is the app's exit code as the driver log says it for a hung
// driver: SparkContext's, except a 0 after main threw (SparkSubmit's own
// stop, not the app's verdict: the app failed, and its code is unknown).
func (f *logFollower) appExitCode() *int {
	if f.exitCode != nil && *f.exitCode == 0 && f.mainThrew != "" {
		return nil
	}
	return f.exitCode
}

// logFollower reads the driver log incrementally (timestamps=true,
// sinceTime) and drops lines it has already seen. sinceTime has second
// precision on the wire, so the lines at the last timestamp are remembered.
type logFollower struct {
	last     time.Time       // timestamp of the newest line seen
	atLast   map[string]bool // lines seen with timestamp == last
	started  bool
	marker   string    // first stop marker seen
	markerAt time.Time // when prebake saw it
	exitCode *int      // from "SparkContext is stopping with exitCode N"
	// mainThrew is the JVM's line for an uncaught exception in main
	// (Exception in thread "main" …). Spark 3.5's SparkSubmit then stops
	// the SparkContext with exit code 0 (its finally block), so a 0 seen
	// with it is not the app's.
	mainThrew string
}

// firstFetchTail bounds the first read of a long-running driver's log.
const (
	firstFetchTail  = 10000
	fetchLimitBytes = 16 << 20
)

// query is the next log request.
func (f *logFollower) query() logQuery {
	q := logQuery{Timestamps: true, LimitBytes: fetchLimitBytes}
	if !f.started {
		q.Tail = firstFetchTail
	} else if !f.last.IsZero() {
		q.Since = f.last.Truncate(time.Second)
	}
	return q
}

// feed takes a log chunk fetched with query(); now is when it was read. It
// returns the new lines (without timestamps).
func (f *logFollower) feed(data []byte, now time.Time) []string {
	f.started = true
	var fresh []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		raw := sc.Text()
		ts, line, ok := splitTimestamp(raw)
		if ok {
			switch {
			case ts.Before(f.last):
				continue
			case ts.Equal(f.last):
				if f.atLast[raw] {
					continue
				}
			default:
				f.last, f.atLast = ts, map[string]bool{}
			}
			if f.atLast == nil {
				f.atLast = map[string]bool{}
			}
			f.atLast[raw] = true
		}
		fresh = append(fresh, line)
		f.scan(line, now)
	}
	return fresh
}

func (f *logFollower) scan(line string, now time.Time) {
	if f.mainThrew == "" && strings.HasPrefix(line, mainExceptionPrefix) {
		f.mainThrew = line
		if len(line) > maxMainThrew { // a line may be megabytes: the message keeps its start
			f.mainThrew = strings.ToValidUTF8(line[:maxMainThrew], "") + " ..."
		}
	}
	if m := stopExitCodeRE.FindStringSubmatch(line); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			f.exitCode = &n
		}
		f.mark("SparkContext is stopping with exitCode "+m[1], now)
		return
	}
	for _, s := range stopMarkers {
		if strings.Contains(line, s) {
			f.mark(s, now)
			return
		}
	}
}

func (f *logFollower) mark(marker string, now time.Time) {
	if f.marker == "" {
		f.marker, f.markerAt = marker, now
	}
}

// splitTimestamp splits "2026-11-29T10:00:00.123456789Z line" as the
// kubelet writes with timestamps=true.
func splitTimestamp(s string) (time.Time, string, bool) {
	i := strings.IndexByte(s, ' ')
	if i < 0 {
		i = len(s)
	}
	ts, err := time.Parse(time.RFC3339Nano, s[:i])
	if err != nil {
		return time.Time{}, s, false
	}
	if i < len(s) {
		i++
	}
	return ts, s[i:], true
}

// lastLines returns the last n non-empty-terminated lines of data.
func lastLines(data []byte, n int) []string {
	s := strings.TrimRight(string(data), "\n")
	if s == "" || n <= 0 {
		return nil
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		lines[i] = redact.Line(l)
	}
	return lines
}
