package cmd

import (
	"io"
	"sort"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/submit/rewrite"
)

// pythonShip is the Python half of a command that ships it (rewrite,
// submit, prebake as spark-submit): nil without a Python input
// (--py-requirements, prebake.yaml's pyRequirements,
// $PREBAKE_PY_REQUIREMENTS), else the request with its target.
func pythonShip(f *resolveFlags, rep *progress.Reporter) (*pipeline.PythonRequest, error) {
	py, err := f.pythonRequest(f.maxRetryWait)
	if err != nil || py == nil {
		return nil, err
	}
	if rep != nil {
		py.Log = rep
	}
	return py, nil
}

// refusePythonManifest refuses the Python half for a --manifest rewrite:
// a SparkApplication's Python dependencies are not shipped yet.
func refusePythonManifest(f *resolveFlags, manifest string) error {
	if manifest != "" && f.python.set() {
		return exitcode.Errorf(exitcode.Usage, "--manifest %s: not yet with the Python half (--py-requirements): rewrite the command line instead", manifest)
	}
	return nil
}

// printEnvNote tells a user of `prebake rewrite` (text) what the rewritten
// command line needs in its environment: the PYTHONPATH of a driver that
// runs here (the wheels' directory). -o json carries it as "env".
func printEnvNote(w io.Writer, quiet bool, r *rewrite.Result) {
	if quiet {
		return
	}
	keys := make([]string, 0, len(r.Env))
	for k := range r.Env {
		if k != rewrite.EnvPythonPath {
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		io.WriteString(w, "prebake: note: run spark-submit with "+exportLine(k, r.Env[k])[len("export "):])
	}
}
