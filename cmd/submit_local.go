package cmd

import (
	"context"
	"os"
	"os/exec"

	"github.com/spf13/pflag"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/local"
)

// localBackend runs the real spark-submit with the rewritten argv when the
// driver runs here: local masters, YARN, client mode on spark:// and
// mesos:// (local.RunsHere). spark-submit's exit code is the result.
type localBackend struct{}

func (localBackend) AddFlags(*pflag.FlagSet) {}

func (localBackend) Submit(ctx context.Context, req *submitRequest) error {
	bin := sparkSubmitBin(req.Flags.sparkSubmit, os.Getenv, exec.LookPath)
	if self, err := os.Executable(); err == nil && bin != "" && local.SameFile(bin, self) {
		return exitcode.Errorf(exitcode.Usage, "spark-submit %s is prebake itself: set $SPARK_HOME to the Spark distribution (or pass --spark-submit PATH) so that prebake runs the real one", bin)
	}
	out, err := local.Backend{Options: []local.Option{
		local.WithSparkSubmit(bin),
		local.WithTimeout(req.Flags.timeout),
		local.WithJSON(req.Output == outJSON),
		local.WithStdio(os.Stdin, req.Stdout, req.Stderr),
	}}.Submit(ctx, req.Sub)
	return render(req.Output, out, err, req.Stdout, req.Stderr)
}

func (localBackend) Status(context.Context, *idRequest) error {
	return exitcode.Errorf(exitcode.Usage, "status: a local, YARN or client-mode driver runs under spark-submit, which has no submission ID to ask about")
}

func (localBackend) Attach(context.Context, *submitRequest) error {
	return exitcode.Errorf(exitcode.Usage, "--status-poll-only: a local, YARN or client-mode driver runs under spark-submit: there is no submission to attach to")
}

func (localBackend) Kill(context.Context, *idRequest) error {
	return exitcode.Errorf(exitcode.Usage, "kill: a local, YARN or client-mode driver runs under spark-submit: stop that process")
}

// runsHere switches a spark:// or mesos:// submission in client mode (the
// driver runs under spark-submit here) to the local backend
// (--status-poll-only attaches before this).
func (bs backends) runsHere(b backend, sub *submit.Submission) backend {
	if _, rest := b.(*restBackend); rest && local.RunsHere(sub) {
		return bs["local"]
	}
	return b
}
