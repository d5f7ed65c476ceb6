package cmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/localfile"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/rewrite"
)

func newRewriteCmd(g *globals) *cobra.Command {
	var rf resolveFlags
	var imageFrom, manifest string
	var execProg bool
	var sf s3StoreFlags
	var reg registryFlags
	var urls storeURLFlags
	c := &cobra.Command{
		Use:   "rewrite [--image-from REF | --store URL] [--lock FILE] [resolution flags] -- <spark-submit args> | --exec [-- python3 app.py]",
		Short: "Rewrite a spark-submit command line so that Spark resolves nothing at run time",
		Long: `rewrite removes every --packages source from a spark-submit command line (the flags,
--conf, --properties-file and spark-defaults.conf), resolves the packages ahead of time, and
merges the jars into one jar list: the image's local:// jars (--image-from), the store's URLs
(--store), or local file: paths (client and local mode, YARN). Every other argument is kept,
in order. It prints the new arguments, shell-quoted on one line; -o json adds what changed and why.

With --exec, or with no arguments and $PYSPARK_SUBMIT_ARGS set, it rewrites $PYSPARK_SUBMIT_ARGS
(what a Python program that starts its own JVM passes to spark-submit) and prints
export PYSPARK_SUBMIT_ARGS='…' for eval; the .py files among the arguments after -- are checked
for packages they set themselves.`,
		Example: `  prebake rewrite --image-from registry.example/spark:3.5.0-prebake -- \
    --master k8s://https://k8s.example:6443 --deploy-mode cluster \
    --packages org.apache.hadoop:hadoop-aws:3.3.4 --class com.example.Main local:///opt/app.jar`,
		Args: func(c *cobra.Command, args []string) error {
			if execProg && manifest != "" {
				return exitcode.Errorf(exitcode.Usage, "--exec and --manifest: give one of them")
			}
			if execProg || len(args) == 0 && manifest == "" && os.Getenv(submit.EnvPySparkSubmitArgs) != "" {
				return nil
			}
			if manifest != "" {
				if len(args) > 0 {
					return exitcode.Errorf(exitcode.Usage, "--manifest %s: give no spark-submit arguments with it", manifest)
				}
				return nil
			}
			if len(args) == 0 {
				return exitcode.Errorf(exitcode.Usage, "rewrite: no spark-submit arguments; give them after --: prebake rewrite [prebake flags] -- --master … app.jar (or --manifest FILE, or --exec for $PYSPARK_SUBMIT_ARGS)")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			out, err := checkOutput(g, outText, outJSON)
			if err != nil {
				return err
			}
			if imageFrom != "" && sf.store != "" {
				return exitcode.Errorf(exitcode.Usage, "--image-from and --store: give one of them")
			}
			if sf.store != "" {
				if err := sf.check(); err != nil {
					return err
				}
			}
			var sub *submit.Submission
			pyEnv := manifest == "" && (execProg || len(args) == 0)
			switch {
			case manifest != "":
			case pyEnv:
				sub, err = submit.LoadPySparkSubmission(os.Environ())
			default:
				sub, err = submit.LoadSubmission(args, os.Environ())
			}
			if err != nil {
				return err
			}
			if sub != nil && sf.store != "" {
				// A driver that runs here reads the jars from the local
				// cache, as submit's does: a worker-wide $PREBAKE_STORE,
				// meant for its cluster jobs, is not asked.
				if kind, err := submit.Route(sub); err == nil && kind == submit.KindLocal {
					ignoreHere(g, c.Flags(), sub.Master(), c.ErrOrStderr(), hereTarget{"store", &sf.store})
				}
			}
			store := sf.store
			req, err := rf.request()
			if err != nil {
				return err
			}
			rep := g.reporter(c.ErrOrStderr())
			var finder pipeline.SetFinder
			opts := []rewrite.Option{rewrite.WithWorkDir(pipeline.RewriteWorkDir(rf.cache)), rewrite.WithSparkVersion(req.SparkVersion)}
			if imageFrom != "" {
				lopts, err := reg.options(rep)
				if err != nil {
					return err
				}
				finder = &pipeline.ImageFrom{Ref: imageFrom, Options: lopts}
				opts = append(opts, rewrite.WithImage(imageFrom))
			}
			if store != "" {
				t, err := urls.storeTarget(&sf, rep)
				if err != nil {
					return err
				}
				finder = t
			}
			lopts := func() ([]layers.Option, error) { return reg.options(rep) }
			if manifest != "" {
				src := pipeline.AppSource(req, finder, rep, manifestPython(&rf, imageFrom, lopts, rep))
				return rewriteManifest(c, g, manifest, out, append(opts, rewrite.WithJarSource(src)))
			}
			py, err := pythonShip(c.Context(), &rf, sub, imageFrom, lopts, rep)
			if err != nil {
				return err
			}
			if pyEnv {
				opts = append(opts, rewrite.WithPythonApps(pythonFiles(args)...))
			}
			var jars *rewrite.Jars
			fromLock := false
			if sub.Argv.Action == submit.ActionSubmit {
				fromLock = lockMatches(c.Context(), req, sub.Packages())
				if jars, err = pipeline.FindSet(c.Context(), req, py, sub, finder, rep); err != nil {
					return err
				}
			}
			r, err := rewrite.Apply(c.Context(), sub, jars, opts...)
			if err != nil {
				return err
			}
			if line := resolutionSummary(r, req.LockPath, fromLock); line != "" {
				rep.Printf("%s", line)
				rep.Wait()
			}
			withWarningHints("rewrite", r.Warnings)
			if pyEnv {
				text := exportLine(submit.EnvPySparkSubmitArgs, r.Env[submit.EnvPySparkSubmitArgs])
				if v, ok := r.Env[rewrite.EnvPythonPath]; ok {
					text += exportLine(rewrite.EnvPythonPath, v)
				}
				return printRewrite(c, g, out, r, r.Warnings, text)
			}
			if out != outJSON {
				printEnvNote(c.ErrOrStderr(), g.quiet, r)
			}
			return printRewrite(c, g, out, r, r.Warnings, r.Command+"\n")
		},
	}
	fs := c.Flags()
	rf.pythonWired = true
	rf.add(fs)
	rf.addSparkVersion(fs)
	fs.StringVar(&imageFrom, "image-from", "", "use the jars baked into this image (its dev.prebake.jars annotation); also sets spark.kubernetes.container.image")
	fs.BoolVar(&execProg, "exec", false, "rewrite $PYSPARK_SUBMIT_ARGS, for the Python program given after -- (its .py files are checked too), and print export PYSPARK_SUBMIT_ARGS=…")
	fs.StringVar(&manifest, "manifest", "", "rewrite a kubeflow spark-operator SparkApplication/ScheduledSparkApplication manifest (YAML, multi-document; - for stdin) instead of a command line")
	sf.add(fs)
	reg.add(fs)
	urls.add(fs)
	return c
}

// exportLine is `export K="V"` for a POSIX shell's eval: V double-quoted
// (its single-quoted words stay readable), with ", \, $ and ` escaped.
func exportLine(k, v string) string {
	return "export " + k + "=\"" + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`").Replace(v) + "\"\n"
}

// pythonFiles are the .py files among a program's arguments (python3
// app.py --date x), for the rewrite's check of the packages they set.
func pythonFiles(args []string) []string {
	var out []string
	for _, a := range args {
		if strings.HasSuffix(a, ".py") && !strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	return out
}

// maxManifestSize bounds a --manifest file (stdin included).
const maxManifestSize = 16 << 20

// rewriteManifest runs `prebake rewrite --manifest FILE`: the rewritten YAML
// on stdout, or -o json with the changes.
func rewriteManifest(c *cobra.Command, g *globals, file string, out outputFormat, opts []rewrite.Option) error {
	name, data, err := readManifest(c, file)
	if err != nil {
		return err
	}
	r, err := rewrite.Manifest(c.Context(), name, data, opts...)
	if err != nil {
		return err
	}
	withWarningHints("rewrite", r.Warnings)
	return printRewrite(c, g, out, r, r.Warnings, r.YAML)
}

// readManifest reads a --manifest FILE ("-": stdin, named <stdin>),
// bounded by maxManifestSize: 66 when it is missing, else 65.
func readManifest(c *cobra.Command, file string) (name string, data []byte, err error) {
	if file == "-" {
		data, err = io.ReadAll(io.LimitReader(c.InOrStdin(), maxManifestSize+1))
		if err == nil && len(data) > maxManifestSize {
			err = fmt.Errorf("<stdin>: larger than %d bytes", maxManifestSize)
		}
	} else {
		// A regular file (a FIFO or /dev/zero is refused before it is
		// read): 65, or 66 when missing.
		data, err = localfile.Read(file, maxManifestSize)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil, exitcode.New(exitcode.NotFound, fmt.Errorf("--manifest: %w", err))
	case err != nil:
		return "", nil, exitcode.New(exitcode.DataErr, fmt.Errorf("--manifest: %w", err))
	}
	name = file
	if file == "-" {
		name = "<stdin>"
	}
	return name, data, nil
}

// printRewrite prints a rewrite result: v as JSON with -o json, else the
// warnings on stderr and text on stdout.
func printRewrite(c *cobra.Command, g *globals, out outputFormat, v any, warnings []rewrite.Warning, text string) error {
	if out == outJSON {
		return printJSON(c.OutOrStdout(), v)
	}
	keepResult(c.OutOrStdout(), v)
	if !g.quiet {
		for _, w := range warnings {
			fmt.Fprintf(c.ErrOrStderr(), "prebake: warning: %s\n", w)
		}
	}
	_, err := io.WriteString(c.OutOrStdout(), text)
	return err
}
