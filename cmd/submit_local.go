package cmd

import (
	"context"
	"os"
	"os/exec"

	"github.com/spf13/pflag"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/submit"
)

// localBackend runs the real spark-submit with the rewritten argv when the
// driver runs here: local masters, YARN, client mode on spark:// and
// mesos:// (submit.RunsHere). spark-submit's exit code is the result.
type localBackend struct{}

func init() { registerBackend("local", localBackend{}) }

func (localBackend) AddFlags(*pflag.FlagSet) {}

func (localBackend) Submit(ctx context.Context, req *submitRequest) error {
	bin := sparkSubmitBin(req.Flags.sparkSubmit, os.Getenv, exec.LookPath)
	if self, err := os.Executable(); err == nil && bin != "" && submit.SameFile(bin, self) {
		return exitcode.Errorf(exitcode.Usage, "spark-submit %s is prebake itself: set $SPARK_HOME to the Spark distribution (or pass --spark-submit PATH) so that prebake runs the real one", bin)
	}
	_, err := submit.SubmitLocal(ctx, req.Args, submit.LocalOptions{
		SparkSubmit: bin,
		Timeout:     req.Flags.timeout,
		Output:      req.Output,
		Stdin:       os.Stdin,
		Stdout:      req.Stdout,
		Stderr:      req.Stderr,
	})
	return err
}

func (localBackend) Status(context.Context, *idRequest) error {
	return exitcode.Errorf(exitcode.Usage, "status: a local, YARN or client-mode driver runs under spark-submit, which has no submission ID to ask about")
}

func (localBackend) Kill(context.Context, *idRequest) error {
	return exitcode.Errorf(exitcode.Usage, "kill: a local, YARN or client-mode driver runs under spark-submit: stop that process")
}
