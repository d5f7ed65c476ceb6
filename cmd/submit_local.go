package cmd

import (
	"os"
	"os/exec"

	"github.com/spf13/pflag"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/local"
)

// localAdapter is the local backend's adapter (local.New): the real
// spark-submit runs the rewritten argv when the driver runs here (local
// masters, YARN, client mode on spark:// and mesos://: submit.Route's
// KindLocal). spark-submit's exit code is the result.
type localAdapter struct{}

// localOutcome is a local run as the CLI prints it.
type localOutcome = jsondoc.Outcome[*local.Result]

// Describe declares the local backend: every master whose driver runs
// here (submit.RunsHere); it refuses status and kill.
func (localAdapter) Describe() backendInfo {
	return backendInfo{
		Kind:       submit.KindLocal,
		SubmitDocs: []jsondoc.Doc{{Name: "submit-local", Command: "prebake submit -o json, local, YARN and client mode", Type: jsondoc.TypeOf[localOutcome]()}},
		OptionHints: map[string]string{
			"local.WithSparkSubmit": "pass --spark-submit PATH",
			"local.WithTimeout":     "the limit is --timeout",
		},
	}
}

func (localAdapter) AddFlags(*pflag.FlagSet) {}

// AddIDFlags adds nothing: the backend refuses status and kill.
func (localAdapter) AddIDFlags(*pflag.FlagSet) {}

// New maps the flags onto local.New; a spark-submit that is prebake
// itself is refused.
func (localAdapter) New(r *run) (submit.Backend, error) {
	if r.f == nil { // status, kill: the backend refuses them
		return local.New()
	}
	bin := sparkSubmitBin(r.f.sparkSubmit, os.Getenv, exec.LookPath)
	if self, err := os.Executable(); err == nil && bin != "" && local.SameFile(bin, self) {
		return nil, exitcode.Errorf(exitcode.Usage, "spark-submit %s is prebake itself: set $SPARK_HOME to the Spark distribution (or pass --spark-submit PATH) so that prebake runs the real one", bin)
	}
	return local.New(
		local.WithSparkSubmit(bin),
		local.WithTimeout(r.f.timeout),
		local.WithJSON(r.out == outJSON),
		local.WithStdio(os.Stdin, r.stdout, r.stderr),
	)
}

// RenderStates returns err: the backend refuses status and kill.
func (localAdapter) RenderStates(_ *run, _ string, _ []submit.DriverState, err error) error {
	return err
}
