package progress

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestPlainLinesAndRedaction(t *testing.T) {
	var buf bytes.Buffer
	r := newTest(t, &buf, Verbose)
	r.Printf("fetching %s", "https://user:s3cret@repo.example/maven2/")
	task := r.Start("https://user:s3cret@repo.example/a.jar", 10)
	task.Add(10)
	task.Done(nil)
	r.Start("b.jar", 0).Done(errors.New("boom"))
	r.Wait()
	out := buf.String()
	if strings.Contains(out, "s3cret") {
		t.Fatalf("secret leaked: %q", out)
	}
	for _, want := range []string{"fetching https://repo.example/maven2/", "a.jar: 10 bytes", "b.jar: failed: boom"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestQuietPrintsNothing: -q prints no step, warning or transfer; at the
// default level a short transfer prints nothing either (no terminal).
func TestQuietPrintsNothing(t *testing.T) {
	for _, level := range []Level{Quiet, Normal} {
		var buf bytes.Buffer
		r := newTest(t, &buf, level)
		if level == Quiet {
			r.Printf("step")
			r.Warnf("warn")
		}
		r.Start("x", 1).Done(nil)
		if buf.Len() != 0 {
			t.Fatalf("level %d printed %q", level, buf.String())
		}
	}
}

func TestNormalHidesDebug(t *testing.T) {
	var buf bytes.Buffer
	r := newTest(t, &buf, Normal)
	r.Debugf("detail")
	r.Printf("step")
	if got := buf.String(); got != "step\n" {
		t.Fatalf("got %q", got)
	}
}

func TestBarsOnTerminal(t *testing.T) {
	var buf bytes.Buffer
	r := newTest(t, &buf, Normal, WithTerminal(true))
	task := r.Start("jar", 100)
	task.Add(100)
	task.Done(nil)
	r.Printf("after")
	r.Wait()
	if !strings.Contains(buf.String(), "after") {
		t.Fatalf("line lost with bars: %q", buf.String())
	}
}
