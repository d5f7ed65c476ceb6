package progress

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestPlainLinesWhileRunning: without a terminal, a long transfer prints a
// plain line at a steady rate at the default level, and its end.
func TestPlainLinesWhileRunning(t *testing.T) {
	var buf bytes.Buffer
	r := newTest(t, &buf, Normal, WithLineInterval(20*time.Millisecond))
	task := r.Start("big.jar", 4<<20)
	for i := 0; i < 4; i++ {
		time.Sleep(25 * time.Millisecond)
		task.Add(1 << 20)
	}
	task.Done(nil)
	r.Wait()
	out := buf.String()
	for _, want := range []string{"big.jar: 1.0 MiB of 4.0 MiB (25%)", "big.jar: 4.0 MiB of 4.0 MiB (100%)", "big.jar: 4194304 bytes in"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestRetriesSummarised: one line for the first retry per host, then a
// summary; -v prints each.
func TestRetriesSummarised(t *testing.T) {
	var buf bytes.Buffer
	r := newTest(t, &buf, Normal)
	for i := 0; i < 5; i++ {
		r.Retryf("dead.example", "retrying https://dead.example/a%d", i)
	}
	r.Retryf("other.example", "retrying https://other.example/x")
	r.Wait()
	want := "retrying https://dead.example/a0\nretrying https://other.example/x\ndead.example: 5 retries in all (-v prints each)\n"
	if buf.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
	buf.Reset()
	r = newTest(t, &buf, Verbose)
	for i := 0; i < 3; i++ {
		r.Retryf("dead.example", "retrying %d", i)
	}
	r.Wait()
	if strings.Count(buf.String(), "retrying") != 3 || strings.Contains(buf.String(), "in all") {
		t.Errorf("-v: %q", buf.String())
	}
}

// TestZeroSizeTerminalGetsLines: a pty of unknown size (0×0, as `script`
// gives) is not drawn on with bars, which would show nothing.
func TestZeroSizeTerminalGetsLines(t *testing.T) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("ptsname: %v", err)
	}
	pts, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pts: %v", err)
	}
	defer pts.Close()
	if err := unix.IoctlSetWinsize(int(pts.Fd()), unix.TIOCSWINSZ, &unix.Winsize{}); err != nil {
		t.Fatal(err)
	}
	if newTest(t, pts, Normal).tty {
		t.Errorf("a 0×0 terminal got bars")
	}
	if err := unix.IoctlSetWinsize(int(pts.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 120}); err != nil {
		t.Fatal(err)
	}
	if !newTest(t, pts, Normal).tty {
		t.Errorf("a 120×40 terminal got no bars")
	}
}
