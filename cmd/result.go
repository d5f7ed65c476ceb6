package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/prebake/prebake/internal/atomicfile"
	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/internal/redact"
)

// stdoutRecorder passes stdout through and keeps what was written (up to a
// bound) for --result-file, and the command's own result (printJSON,
// keepResult), which --result-file holds whatever -o is.
type stdoutRecorder struct {
	w      io.Writer
	g      *globals
	mu     sync.Mutex
	n      int64
	buf    bytes.Buffer
	result any
}

// printJSON prints v, a command's result, as JSON on w: one line with
// -o json (BashOperator's XCom is stdout's last line), indented with -o
// json-pretty. On the CLI's stdout it also keeps v for --result-file.
func printJSON(w io.Writer, v any) error {
	keepResult(w, v)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if r, ok := w.(*stdoutRecorder); ok && r.g != nil && r.g.output == outJSONPretty {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}

// keepResult keeps v, a command's result, for --result-file, when w is the
// CLI's stdout: a command printing text calls it with the object -o json
// would print.
func keepResult(w io.Writer, v any) {
	if r, ok := w.(*stdoutRecorder); ok {
		r.mu.Lock()
		r.result = v
		r.mu.Unlock()
	}
}

// wantsResult reports whether w is the CLI's stdout and --result-file was
// given: a text command then builds its JSON result for keepResult.
func wantsResult(w io.Writer) bool {
	r, ok := w.(*stdoutRecorder)
	return ok && r.g != nil && r.g.resultFile != ""
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
// writes --result-file: the command's own result (printJSON, keepResult)
// whatever -o is, else the exit code document. It returns a non-nil error
// only when the result file could not be written.
func finishResult(g *globals, rec *stdoutRecorder, err error, code int) error {
	doc := func() jsondoc.Error {
		r := jsondoc.Error{ExitCode: code, Meaning: codeMeaning(code), Source: "prebake", Warnings: g.warnings.all()}
		if err != nil {
			r.Error = redact.Line(err.Error())
			r.Source = exitcode.SourceOf(err)
		}
		return r
	}
	jsonOut := g.output == outJSON || g.output == outJSONPretty
	own := jsonOut && rec.n > 0 && rec.n == int64(rec.buf.Len()) && json.Valid(rec.buf.Bytes())
	if err != nil && jsonOut && rec.n == 0 {
		_ = printJSON(rec, doc())
		own = true
	}
	if g.resultFile == "" {
		return nil
	}
	var data []byte
	rec.mu.Lock()
	result := rec.result
	rec.mu.Unlock()
	switch {
	case own:
		data = rec.buf.Bytes()
	case result != nil:
		var b bytes.Buffer
		if err := printJSON(&b, result); err != nil {
			return exitcode.New(exitcode.Internal, fmt.Errorf("--result-file: %w", err))
		}
		data = b.Bytes()
	default:
		data, _ = json.Marshal(doc())
		data = append(data, '\n')
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
