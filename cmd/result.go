package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/prebake/prebake/internal/atomicfile"
	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/redact"
)

// resultJSON is what a command prints with -o json when it fails before it
// has printed its own result, and what --result-file holds when the
// command has no JSON result of its own (documented in the README):
//
//	{"exitCode": 66, "meaning": "not found", "source": "prebake",
//	 "error": "…", "warnings": ["…"]}
type resultJSON struct {
	ExitCode int      `json:"exitCode"`
	Meaning  string   `json:"meaning"`
	Source   string   `json:"source"`
	Error    string   `json:"error,omitempty"`
	Warnings []string `json:"warnings"`
}

// stdoutRecorder passes stdout through and keeps what was written (up to a
// bound) for --result-file.
type stdoutRecorder struct {
	w   io.Writer
	mu  sync.Mutex
	n   int64
	buf bytes.Buffer
}

const maxRecorded = 64 << 20

func (r *stdoutRecorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.n += int64(len(p))
	if r.buf.Len()+len(p) <= maxRecorded {
		r.buf.Write(p)
	}
	r.mu.Unlock()
	return r.w.Write(p)
}

// warningSink collects the warnings printed by a run's reporters.
type warningSink struct {
	mu   sync.Mutex
	list []string
}

func (s *warningSink) add(w string) {
	s.mu.Lock()
	s.list = append(s.list, w)
	s.mu.Unlock()
}

func (s *warningSink) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string{}, s.list...)
}

// finishResult prints the failure JSON (-o json, nothing printed yet) and
// writes --result-file. It returns a non-nil error only when the result
// file could not be written.
func finishResult(g *globals, rec *stdoutRecorder, err error, code int) error {
	doc := func() []byte {
		r := resultJSON{ExitCode: code, Meaning: codeMeaning(code), Source: "prebake", Warnings: g.warnings.all()}
		if err != nil {
			r.Error = redact.Line(err.Error())
			r.Source = exitcode.SourceOf(err)
		}
		data, _ := json.MarshalIndent(r, "", "  ")
		return append(data, '\n')
	}
	own := g.output == outJSON && rec.n > 0 && rec.n == int64(rec.buf.Len()) && json.Valid(rec.buf.Bytes())
	if err != nil && g.output == outJSON && rec.n == 0 {
		_, _ = rec.Write(doc())
		own = true
	}
	if g.resultFile == "" {
		return nil
	}
	data := doc()
	if own {
		data = rec.buf.Bytes()
	}
	return writeAtomic("--result-file", g.resultFile, data)
}

// writeAtomic writes data to path through a temp file and a rename
// (atomicfile.Write), so a reader never sees half a file; what names the
// file in the error (e.g. "--result-file").
func writeAtomic(what, path string, data []byte) error {
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return exitcode.New(exitcode.CantCreate, fmt.Errorf("%s %s: %w", what, path, err))
	}
	return nil
}
