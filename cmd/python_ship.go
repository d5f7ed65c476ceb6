package cmd

import (
	"context"
	"io"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/rewrite"
)

// pythonShip is the Python half of a command that ships it (rewrite,
// submit, prebake as spark-submit): nil without a Python input
// (--py-requirements, prebake.yaml's pyRequirements,
// $PREBAKE_PY_REQUIREMENTS), else the request with its target. Without
// --python-version and --python-platform the target is read from the
// job's image (image: --image-from's, else the submission's
// spark.kubernetes.container.image), else, for a driver that runs here,
// from the python3 that runs it, else from the lock.
func pythonShip(ctx context.Context, f *resolveFlags, sub *submit.Submission, image string, lopts func() ([]layers.Option, error), rep *progress.Reporter) (*pipeline.PythonRequest, error) {
	return pythonShipFor(ctx, f, sub, image, "", imageTargetWith(lopts), rep)
}

// pythonShipFor is pythonShip; doc, when set, names the manifest document
// the request is for (sub is then nil); imageTarget reads an image's
// target (imageTargetWith).
func pythonShipFor(ctx context.Context, f *resolveFlags, sub *submit.Submission, image, doc string, imageTarget imageTargetFunc, rep *progress.Reporter) (*pipeline.PythonRequest, error) {
	if !f.python.set() {
		return nil, nil
	}
	if image == "" && sub != nil {
		image = jobImage(sub)
	}
	from := "flags"
	py, err := f.pythonRequestWith(f.maxRetryWait, func(p pythonFlags) (string, string, error) {
		if image != "" {
			from = "image " + image
			return imageTarget(ctx, image)
		}
		if sub != nil && pipeline.DriverHere(sub) {
			if v, tag, bin, ok := localPythonTarget(ctx, sub); ok {
				from = "this host's " + bin
				return v, tag, nil
			}
		}
		if v, tag, ok := lockPythonTarget(f.lock); ok {
			from = "lock"
			return v, tag, nil
		}
		if doc != "" {
			return "", "", exitcode.Errorf(exitcode.Usage, "--py-requirements %s: %s names no image (spec.image, spec.driver.image) to read the wheels' target from, no --image-from is given, and no --lock records one: give --python-version (the job's python3 major.minor) and --python-platform (its glibc and machine as a tag, e.g. manylinux_2_36_x86_64)", p.requirements, doc)
		}
		return "", "", exitcode.Errorf(exitcode.Usage, "--py-requirements %s: the submission names no image (spark.kubernetes.container.image) to read the wheels' target from, no python3 runs its driver here, and no --lock records one: give --python-version (the job's python3 major.minor) and --python-platform (its glibc and machine as a tag, e.g. manylinux_2_36_x86_64)", p.requirements)
	})
	if err != nil {
		return nil, err
	}
	rep.Printf("python %s, %s (target from %s)", py.Version, py.Platform, from)
	py.Log = rep
	return py, nil
}

// An imageTargetFunc reads the wheels' target from an image's python3:
// its version and platform tag.
type imageTargetFunc func(ctx context.Context, image string) (version, platform string, err error)

// imageTargetWith is imagePythonTarget with the registry options lopts
// gives.
func imageTargetWith(lopts func() ([]layers.Option, error)) imageTargetFunc {
	return func(ctx context.Context, image string) (string, string, error) {
		opts, err := lopts()
		if err != nil {
			return "", "", err
		}
		return imagePythonTarget(ctx, image, opts)
	}
}

// imagePythonTarget is the wheels' target read from image's python3
// (pipeline.PythonTargetFromImage): its version and platform tag.
func imagePythonTarget(ctx context.Context, image string, opts []layers.Option) (version, platform string, err error) {
	t, err := pipeline.PythonTargetFromImage(ctx, image, opts...)
	if err != nil {
		return "", "", err
	}
	return t.PythonVersion, pipeline.PythonPlatformTag(t), nil
}

// lockPythonTarget is the wheels' target the lock at path records
// (inputs.python); ok is false for no path, no readable lock or none
// recorded.
func lockPythonTarget(path string) (version, platform string, ok bool) {
	if path == "" {
		return "", "", false
	}
	lf, err := lock.Read(path)
	if err != nil || lf.Inputs.Python == nil || len(lf.Inputs.Python.Platforms) == 0 {
		return "", "", false
	}
	return lf.Inputs.Python.Version, lf.Inputs.Python.Platforms[0], true
}

// jobImage is the image a submission's Python runs in: the driver's
// (spark.kubernetes.driver.container.image), else the job's
// (spark.kubernetes.container.image); "" off Kubernetes.
func jobImage(sub *submit.Submission) string {
	if submit.ClusterKind(sub.Master()) != submit.ClusterK8s {
		return ""
	}
	for _, k := range []string{"spark.kubernetes.container.image", "spark.kubernetes.driver.container.image", "spark.kubernetes.executor.container.image"} {
		if v, _, _ := sub.Conf(k); v != "" {
			return v
		}
	}
	return ""
}

// localPythonScript prints what a platform tag needs: major.minor, the C
// library (glibc's version, else "" ) and the machine.
const localPythonScript = `import sys, platform
print("%d.%d" % sys.version_info[:2]); lib, v = platform.libc_ver(); print(v if lib == "glibc" else "-"); print(platform.machine())`

// localPythonTarget asks the python3 that runs a driver here
// ($PYSPARK_DRIVER_PYTHON, $PYSPARK_PYTHON, else python3 on the
// submission's PATH) for its version and glibc; ok is false when there is
// none, it says something else, or its C library is not glibc.
func localPythonTarget(ctx context.Context, sub *submit.Submission) (version, tag, bin string, ok bool) {
	bin = "python3"
	for _, k := range []string{"PYSPARK_DRIVER_PYTHON", "PYSPARK_PYTHON"} {
		if v := sub.Getenv(k); v != "" {
			bin = v
			break
		}
	}
	if conf, _, _ := sub.Conf("spark.pyspark.driver.python"); conf != "" {
		bin = conf
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, bin, "-c", localPythonScript)
	c.Env = sub.Environ()
	out, err := c.Output()
	f := strings.Fields(string(out))
	if err != nil || len(f) != 3 || f[1] == "-" {
		return "", "", bin, false
	}
	tag = pipeline.ImagePlatformTag(&layers.ImagePython{Version: f[0], Glibc: f[1], Machine: f[2]})
	if _, err := pipeline.ParsePythonTarget(f[0], tag); err != nil {
		return "", "", bin, false
	}
	return f[0], tag, bin, true
}

// manifestPython is the Python half of a --manifest rewrite, asked once
// per SparkApplication: nil without a Python input. Without
// --python-version and --python-platform the wheels' target is read from
// the image: --image-from's (the rewrite sets it), else the document's
// (spec.image, spec.driver.image, spec.executor.image); else from the lock.
// Each image is read once for the whole manifest (the documents of one
// job often share it; --image-from is every document's).
func manifestPython(f *resolveFlags, imageFrom string, lopts func() ([]layers.Option, error), rep *progress.Reporter) func(context.Context, rewrite.ManifestApp) (*pipeline.PythonRequest, error) {
	if !f.python.set() {
		return nil
	}
	read := imageTargetWith(lopts)
	seen := map[string][2]string{}
	imageTarget := func(ctx context.Context, image string) (string, string, error) {
		if t, ok := seen[image]; ok {
			return t[0], t[1], nil
		}
		v, tag, err := read(ctx, image)
		if err == nil {
			seen[image] = [2]string{v, tag}
		}
		return v, tag, err
	}
	return func(ctx context.Context, app rewrite.ManifestApp) (*pipeline.PythonRequest, error) {
		image := imageFrom
		if image == "" {
			image = app.Image
		}
		doc := app.Where
		if doc == "" {
			doc = "the manifest"
		}
		return pythonShipFor(ctx, f, nil, image, doc, imageTarget, rep)
	}
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
		if k == rewrite.EnvPythonPath {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		io.WriteString(w, "prebake: note: run spark-submit with "+strings.TrimPrefix(exportLine(k, r.Env[k]), "export "))
	}
}
