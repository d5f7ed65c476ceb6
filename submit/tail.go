package submit

import (
	"bytes"
	"sync"

	"github.com/prebake/prebake/internal/redact"
)

// TailWriter keeps the last Max lines written to it (spark-submit's output,
// for a failed run's log tail); Lines returns them redacted.
type TailWriter struct {
	Max int

	mu   sync.Mutex
	buf  []string
	part []byte
}

func (t *TailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.part = append(t.part, p...)
	for {
		i := bytes.IndexByte(t.part, '\n')
		if i < 0 {
			break
		}
		t.buf = append(t.buf, string(t.part[:i]))
		t.part = t.part[i+1:]
		if len(t.buf) > t.Max {
			t.buf = t.buf[len(t.buf)-t.Max:]
		}
	}
	return len(p), nil
}

// Lines returns the kept lines, and an unfinished last one, redacted.
func (t *TailWriter) Lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]string{}, t.buf...)
	if len(t.part) > 0 {
		out = append(out, string(t.part))
	}
	for i, l := range out {
		out[i] = redact.Line(l)
	}
	return out
}
