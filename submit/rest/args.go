package rest

import (
	"fmt"
	"path"
	"strings"

	"github.com/prebake/prebake/submit"
)

// restArgs is what the REST backend reads from a (rewritten) submission,
// loaded once by the caller (submit.LoadSubmission): what
// CreateSubmissionRequest carries.
type restArgs struct {
	master, deployMode, class, name string
	resource                        string
	appArgs                         []string
	supervise                       bool
	conf                            map[string]string // the effective Spark conf (--conf over the files)
	opts                            map[string]string // spark-submit options by name, e.g. "--jars" (the last one)
}

// newRestArgs reads sub, with Spark's precedence for the master and the
// deploy mode (flag, conf, $MASTER, $DEPLOY_MODE).
func newRestArgs(sub *submit.Submission) (*restArgs, error) {
	if sub.Argv.Action != submit.ActionSubmit {
		return nil, fmt.Errorf("spark-submit --%s: use prebake status/kill ID --master URL", sub.Argv.Action)
	}
	a := &restArgs{conf: sub.SparkConf(), opts: map[string]string{}, class: sub.MainClass(), supervise: sub.Supervise(),
		deployMode: sub.DeployMode()}
	a.master, _ = sub.GivenMaster()
	a.name, _ = sub.Flag("--name")
	for _, o := range sub.Argv.Options {
		if !o.Switch() && o.Name != "--conf" {
			a.opts[o.Name] = o.Value
		}
	}
	if p, ok := sub.Primary(); ok {
		a.resource = p
		a.appArgs = sub.AppArgs()
	}
	return a, nil
}

// restIsPython reports whether the primary resource is a Python file.
func restIsPython(resource string) bool { return strings.HasSuffix(resource, ".py") }

// restIsUserJar is SparkSubmit.restIsUserJar: not a shell, Python, R or internal resource.
func restIsUserJar(resource string) bool {
	return resource != "" && resource != "spark-shell" && resource != "pyspark-shell" &&
		resource != "sparkr-shell" && resource != "spark-internal" && !restIsPython(resource) &&
		!strings.HasSuffix(strings.ToLower(resource), ".r")
}

// restBaseName is new File(resource).getName for a path or URL.
func restBaseName(resource string) string {
	if i := strings.Index(resource, "://"); i >= 0 {
		resource = resource[i+3:]
		if j := strings.IndexByte(resource, '/'); j >= 0 {
			resource = resource[j:]
		}
	}
	return path.Base(resource)
}
