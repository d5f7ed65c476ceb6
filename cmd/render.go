package cmd

import (
	"fmt"
	"io"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/k8s"
	"github.com/prebake/prebake/submit/local"
	"github.com/prebake/prebake/submit/rest"
)

// The backends return their outcomes; each adapter's Render is the one
// renderer of its backend. A result's message is the library's; with -o
// json the renderer adds the hints naming the CLI's flags
// (withHintMessage), as the CLI adds them to the error it prints. The one
// classifier (exitcode.Outcome) gives the run's exit code and its source,
// which the CLI prints with the result (jsondoc.Outcome); the backends say
// only what failed.

// outcome is r with the exit code and source of its error.
func outcome[R interface{ Err() error }](r R) jsondoc.Outcome[R] {
	code, source := exitcode.Outcome(r.Err())
	return jsondoc.Outcome[R]{ExitCode: code, Source: source, Result: r}
}

// Render prints a K8s run: JSON, or the summary on stdout and, when the
// run failed, the container statuses and the log tail on stderr. err is the
// run's error, returned unless the JSON could not be written.
func (b *k8sAdapter) Render(run *run, o submit.Outcome, err error) error {
	r, ok := o.(*k8s.Result)
	if !ok {
		return noRenderer(o)
	}
	out := outcome(r)
	if err == nil && r.Phase == k8s.PhaseSubmitted {
		out.Source = exitcode.SourcePrebake // no driver has ended
	}
	r.Message = withHintMessage(r.Message, err)
	if run.out == outJSON {
		if werr := printJSON(run.stdout, out); werr != nil && err == nil {
			return exitcode.New(exitcode.Internal, werr)
		}
		return err
	}
	keepResult(run.stdout, out)
	writeK8sText(out, run.stdout, run.stderr)
	return err
}

// Render prints a REST run: JSON, or the summary on stdout. It returns the
// run's error.
func (b *restAdapter) Render(run *run, o submit.Outcome, _ error) error {
	r, ok := o.(*rest.Result)
	if !ok {
		return noRenderer(o)
	}
	out := outcome(r)
	r.Message = withHintMessage(r.Message, r.Err())
	if run.out == outJSON {
		if err := printJSON(run.stdout, out); err != nil {
			return exitcode.New(exitcode.Internal, err)
		}
		return r.Err()
	}
	keepResult(run.stdout, out)
	writeRESTText(out, run.stdout)
	writeLogTail(run.stderr, r.LogTail)
	return r.Err()
}

// Render prints a local run: with -o json the result; in text,
// spark-submit's own output was the run's, the CLI prints the error, and
// --result-file holds the result.
func (localAdapter) Render(run *run, o submit.Outcome, err error) error {
	r, ok := o.(*local.Result)
	if !ok {
		return noRenderer(o)
	}
	out := outcome(r)
	r.Message = withHintMessage(r.Message, err)
	if run.out != outJSON {
		keepResult(run.stdout, out)
		return err
	}
	if werr := printJSON(run.stdout, out); werr != nil && err == nil {
		return exitcode.New(exitcode.Internal, werr)
	}
	return err
}

func noRenderer(o submit.Outcome) error {
	return exitcode.Errorf(exitcode.Internal, "no renderer for %T", o)
}

// writeK8sKillText prints Kill's answer as spark-submit --kill does.
func writeK8sKillText(w io.Writer, tried []k8s.DriverStatus) {
	for _, s := range tried {
		fmt.Fprintf(w, "Deleting driver pod: %s.\n", s.Pod)
	}
	if len(tried) == 0 {
		fmt.Fprintln(w, "No applications found.")
	}
}
