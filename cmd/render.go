package cmd

import (
	"io"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/k8s"
	"github.com/prebake/prebake/submit/local"
	"github.com/prebake/prebake/submit/rest"
)

// The backends return their outcomes; render is the one renderer of each.
// A result's message is the library's; with -o json render adds the hints
// naming the CLI's flags (withHintMessage), as the CLI adds them to the
// error it prints.

// render prints a backend's outcome with -o out and returns the run's error
// (err), unless the output could not be written.
func render(out outputFormat, o submit.Outcome, err error, stdout, stderr io.Writer) error {
	// The one classifier (exitcode.Code) gives the run's exit code and its
	// source; the backends say only what failed.
	code, source := exitcode.Outcome(o.Err())
	switch r := o.(type) {
	case *k8s.Result:
		r.ExitCode, r.Source = code, source
		if err == nil && r.Phase == k8s.PhaseSubmitted {
			r.Source = exitcode.SourcePrebake // no driver has ended
		}
		return renderK8s(out, r, err, stdout, stderr)
	case *rest.Result:
		r.ExitCode, r.Source = code, source
		return renderREST(out, r, stdout, stderr)
	case *local.Result:
		r.ExitCode, r.Source = code, source
		r.Message = withHintMessage(r.Message, err)
		// Text: spark-submit's own output was the run's; the CLI prints the
		// error, and --result-file holds the result.
		if out != outJSON {
			keepResult(stdout, r)
			return err
		}
		if werr := printJSON(stdout, r); werr != nil && err == nil {
			return exitcode.New(exitcode.Internal, werr)
		}
		return err
	}
	return exitcode.Errorf(exitcode.Internal, "no renderer for %T", o)
}

// renderK8s prints a K8s run: JSON, or the summary on stdout and, when the
// run failed, the container statuses and the log tail on stderr. err is the
// run's error, returned unless the JSON could not be written.
func renderK8s(out outputFormat, r *k8s.Result, err error, stdout, stderr io.Writer) error {
	r.Message = withHintMessage(r.Message, err)
	if out == outJSON {
		if werr := printJSON(stdout, r); werr != nil && err == nil {
			return exitcode.New(exitcode.Internal, werr)
		}
		return err
	}
	keepResult(stdout, r)
	writeK8sText(r, stdout, stderr)
	return err
}

// renderREST prints a REST run: JSON, or the summary on stdout. It returns
// the run's error.
func renderREST(out outputFormat, r *rest.Result, stdout, stderr io.Writer) error {
	r.Message = withHintMessage(r.Message, r.Err())
	if out == outJSON {
		if err := printJSON(stdout, r); err != nil {
			return exitcode.New(exitcode.Internal, err)
		}
		return r.Err()
	}
	keepResult(stdout, r)
	writeRESTText(r, stdout)
	writeLogTail(stderr, r.LogTail)
	return r.Err()
}
