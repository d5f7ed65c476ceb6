package cmd

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/prebake/prebake/lock"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/prebake/prebake/internal/digest"
	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/pipeline"
)

// registryFlags reach a registry (bake image, inspect).
type registryFlags struct {
	auth string
	jobs int
}

func (f *registryFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.auth, "registry-auth", "", "credentials user:password for the registry pushed to or read (default $PREBAKE_REGISTRY_AUTH); other registries use the Docker config ($DOCKER_CONFIG/config.json and its credential helpers)")
}

// addJobs adds --jobs, for the commands that push (bake image, submit).
func (f *registryFlags) addJobs(fs *pflag.FlagSet) {
	fs.IntVar(&f.jobs, "jobs", 4, "blob uploads in flight")
}

// options turns the flags into layers options; rep (nil for none) gets the
// progress lines and bars.
func (f *registryFlags) options(rep *progress.Reporter) ([]layers.Option, error) {
	var opts []layers.Option
	if f.jobs > 0 {
		opts = append(opts, layers.WithJobs(f.jobs))
	}
	auth := f.auth
	if auth == "" {
		auth = os.Getenv("PREBAKE_REGISTRY_AUTH")
	}
	if auth != "" {
		user, pass, ok := strings.Cut(auth, ":")
		if !ok || user == "" {
			return nil, exitcode.Errorf(exitcode.Usage, "--registry-auth: want user:password")
		}
		redact.AddSecret(pass) // masked by value, also as a Basic header, in any output
		redact.AddSecret(base64.StdEncoding.EncodeToString([]byte(user + ":" + pass)))
		opts = append(opts, layers.WithBasicAuth(user, pass))
	}
	if rep != nil {
		opts = append(opts, layers.WithLogger(rep), layers.WithProgress(rep))
	}
	return opts, nil
}

type bakeImageOptions struct {
	resolve      resolveFlags
	registry     registryFlags
	base, target string
	tag          string
	jarsDir      string
	platforms    []string
	skipProvided bool
	layers       int
	addSelf      bool
	compression  string
	sparkHome    string
	strict       strictness
	sharedLock   string
}

func newBakeImageCmd(g *globals) *cobra.Command {
	o := &bakeImageOptions{}
	c := &cobra.Command{
		Use:   "image --base REF --target REF [coordinates...]",
		Short: "Append the resolved jars to a Spark image as a reproducible layer and print the Spark settings",
		Long: `bake image resolves (or reads --lock), appends the jars to the base image under
--jars-dir and pushes the result to --target under a tag derived from the base
digest and the lock hash (or --tag). If the target already has that tag, it
prints it and stops: no download, no push. REF is a registry reference or
oci:PATH[:tag], an OCI image layout on disk (no Docker daemon is used).

An index base gets the layer on every platform, or only on --platform (one
platform gives a plain image). The same base digest and lock always give the
same image digest (SOURCE_DATE_EPOCH sets the file times).

A PySpark job's wheels (--py-requirements FILE, or a --lock that has wheels)
are installed into one more layer, under ` + layers.DefaultPythonDir + `, which the
image's PYTHONPATH gets. They are chosen for the target --python-version and
--python-platform name, else for the base's own python3: its major.minor, its C
library (glibc X.Y: manylinux_X_Y; musl: musllinux_1_2) and its architecture,
read from the base's layers; a base without python3 needs both flags.

stdout: the digest reference, then spark.kubernetes.container.image=… and
spark.jars=local:///… in the lock's order. stderr: progress and the classpath
conflict report against the base's /opt/spark/jars.`,
		Example: `  prebake bake image --base oci:testdata/base-image:3.5.0 --target oci:.demo/image \
    --lock .demo/prebake.lock
  prebake bake image --base apache/spark:3.5.0 --target registry.example.com/team/spark-jobs \
    --packages org.apache.spark:spark-avro_2.12:3.5.0 --lock prebake.lock
  # a PySpark job: its wheels too, for the base's python3
  prebake bake image --base apache/spark:3.5.0 --target registry.example.com/team/spark-jobs \
    --py-requirements requirements.txt --lock prebake.lock`,
		RunE: func(c *cobra.Command, args []string) error {
			return runBakeImage(c.Context(), g, o, c.Flags(), args, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	fs := c.Flags()
	o.resolve.pythonWired = true
	o.resolve.add(fs)
	o.registry.add(fs)
	o.registry.addJobs(fs)
	fs.StringVar(&o.base, "base", "", "base image: registry reference or oci:PATH[:tag]")
	fs.StringVar(&o.target, "target", "", "target repository (registry reference or oci:PATH); a tag in it is used as --tag")
	fs.StringVar(&o.tag, "tag", "", "target tag (default: prebake-<hash of base digest, lock hash and options>)")
	fs.StringVar(&o.jarsDir, "jars-dir", layers.DefaultJarsDir, "directory of the jars in the image")
	fs.StringSliceVar(&o.platforms, "platform", nil, "for an index base: only these platforms (os/arch[/variant]; repeat or comma-separate)")
	fs.BoolVar(&o.skipProvided, "skip-provided", false, "leave out jars the base already has at the same version")
	fs.BoolVar(&o.addSelf, "add-self", false, "also add this prebake binary as "+selfPath+" (linux only; the base platform must match), so the image can run prebake submit")
	fs.StringVar(&o.compression, "compression", string(layers.DefaultCompression), "layer compression: none (plain tar: one hash pass; jars are already deflated), gzip, zstd (OCI manifests only) or estargz (gzip that lazy-pulling snapshotters mount before the pull ends); see docs/design.md, \"Layer compression\"")
	fs.StringVar(&o.sparkHome, "spark-home", "", "where the base image keeps Spark (default /opt/spark): the conflict report reads its jars/")
	addStrictFlag(fs, &o.strict)
	fs.StringVar(&o.sharedLock, "shared-lock", "", "lock FILE of a shared (platform) set, e.g. the packages common to a team's jobs: the jars of this bake that it also has go into one layer below the per-job layer, the same layer digest for every job that has them all, so a node pulls it once; see docs/design.md, \"Shared layers\"")
	fs.IntVar(&o.layers, "layers", 1, fmt.Sprintf("split the jars into up to N layers (1..%d; big jars alone) so a re-bake re-uploads only what changed", layers.MaxLayers))
	return c
}

func runBakeImage(ctx context.Context, g *globals, o *bakeImageOptions, fs *pflag.FlagSet, args []string, stdout, stderr io.Writer) error {
	out, err := checkOutput(g, outText, outJSON)
	if err != nil {
		return err
	}
	if o.base == "" || o.target == "" {
		return exitcode.Errorf(exitcode.Usage, "bake image: --base and --target are required")
	}
	if o.layers < 1 || o.layers > layers.MaxLayers {
		return exitcode.Errorf(exitcode.Usage, "--layers %d: must be 1..%d", o.layers, layers.MaxLayers)
	}
	comp, err := layers.ParseCompression(o.compression)
	if err != nil {
		return err
	}
	rep := g.reporter(stderr)
	defer rep.Wait()
	opts, err := o.registry.options(rep)
	if err != nil {
		return err
	}
	opts = append(opts, layers.WithLayers(o.layers), layers.WithCompression(comp))
	opts = append(opts, pipeline.LayerCache(o.resolve.cache)...)
	in := layers.BakeInput{
		Base: o.base, Target: o.target, Tag: o.tag,
		JarsDir: o.jarsDir, Platforms: o.platforms, SkipProvided: o.skipProvided,
		SparkHome: o.sparkHome, Strict: o.strict.on, StrictKinds: o.strict.kinds,
	}
	if o.addSelf {
		if in.Extra, in.ExtraPlatform, err = selfFile(); err != nil {
			return err
		}
	}
	if o.sharedLock != "" {
		if in.Shared, err = lock.Read(o.sharedLock); err != nil {
			return err
		}
	}
	set, err := resolveBakeSet(ctx, &o.resolve, fs, "bake image", args, rep, o.base, opts)
	if err != nil {
		return err
	}
	in.Lock, in.Jars, in.Wheels = set.lock, set.jars, set.wheels
	res, err := layers.Bake(ctx, in, opts...)
	rep.Wait()
	if err != nil {
		return err
	}
	conf := res.SparkConf()
	js := jsondoc.BakeImage{Result: res, SparkConf: map[string]string{}, Python: set.python(res.PythonDir, "")}
	for _, kv := range conf {
		js.SparkConf[kv[0]] = kv[1]
	}
	if out == outJSON {
		return printJSON(stdout, js)
	}
	keepResult(stdout, js)
	if !g.quiet {
		printBakeSummary(stderr, res, g.verbose)
		printBakePython(stderr, js.Python, "in "+res.PythonDir+", on the image's PYTHONPATH", g.verbose)
	}
	// A Scala or Spark mismatch changes the outcome: -q does not hide it,
	// and a cache hit repeats the verdict stored with the image.
	printBakeWarnings(g, stderr, res.Warnings)
	fmt.Fprintln(stdout, res.Ref)
	for _, kv := range conf {
		fmt.Fprintf(stdout, "%s=%s\n", kv[0], kv[1])
	}
	return nil
}

// selfPath is where --add-self puts the prebake binary.
const selfPath = "/usr/local/bin/prebake"

// selfFile is the running prebake binary as a layer file.
func selfFile() ([]layers.File, string, error) {
	if runtime.GOOS != "linux" {
		return nil, "", exitcode.Errorf(exitcode.Usage, "--add-self: this prebake is built for %s/%s; run a linux build", runtime.GOOS, runtime.GOARCH)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, "", exitcode.New(exitcode.Internal, fmt.Errorf("--add-self: %w", err))
	}
	sum, _, err := digest.File(exe)
	if err != nil {
		return nil, "", exitcode.New(exitcode.Internal, fmt.Errorf("--add-self: reading %s: %w", exe, err))
	}
	lf, err := layers.FileFromPath(selfPath, exe, 0o755, sum)
	if err != nil {
		return nil, "", err
	}
	return []layers.File{lf}, runtime.GOOS + "/" + runtime.GOARCH, nil
}

// strictHelp is --strict's help (bake image, submit).
const strictHelp = "fail (exit 65) on a warning that changes the outcome: a Scala, Spark-line or Hadoop mismatch with the base image (submit: or with $SPARK_HOME/jars in local mode), or a base without Spark; =KIND,… fails on those kinds only (scala-binary, spark-version, spark-patch, hadoop-version, no-spark; a bare --strict is all but spark-patch, another patch of the base's Spark line); also strict: in prebake.yaml"

// printBakeWarnings prints a bake's verdict (also on a cache hit) and
// adds it to the run's warnings.
func printBakeWarnings(g *globals, w io.Writer, ws []layers.Warning) {
	for _, x := range ws {
		msg := x.Message
		if x.Kind == layers.WarnNoSpark {
			msg += "; give --spark-home DIR for an image that keeps Spark elsewhere"
		}
		fmt.Fprintf(w, "WARNING (%s): %s\n", x.Kind, msg)
		g.warnings.add(x.Kind + ": " + msg)
	}
}

// printBakeSummary prints what a bake did and its conflict report: the
// jars the base has at another version one by one (which copy Spark
// loads), those it has at the same version as one line (each with -v).
func printBakeSummary(w io.Writer, r *layers.Result, verbose bool) {
	if r.CacheHit {
		fmt.Fprintf(w, "cache hit: %s (%d registry requests, %s)\n", r.Tag, r.Requests, r.Duration.Round(1e6))
		return
	}
	sent := fmt.Sprintf("%d bytes uploaded", r.BytesUploaded)
	if strings.HasPrefix(r.Tag, "oci:") {
		sent = "written to the OCI layout" // no upload to count
	}
	fmt.Fprintf(w, "baked %d jars in %d layer(s) onto %s: %s, %s\n", len(r.Files), len(r.Layers), r.BaseDigest, r.Tag, sent)
	for _, l := range r.Layers {
		if l.Role != "" {
			fmt.Fprintf(w, "  %s layer %s: %d file(s), %d bytes\n", l.Role, l.Digest, len(l.Files), l.Size)
		}
	}
	if r.Report == nil {
		return
	}
	rep := r.Report
	fmt.Fprintf(w, "base: Spark %s, Scala %s, ", orNone(rep.BaseSparkVersion), orNone(rep.BaseScalaBinary))
	if rep.BaseHadoopVersion != "" {
		fmt.Fprintf(w, "Hadoop %s, ", rep.BaseHadoopVersion)
	}
	if rep.BaseJavaVersion != "" {
		fmt.Fprintf(w, "Java %s, ", rep.BaseJavaVersion)
	}
	fmt.Fprintf(w, "%d jars\n", rep.BaseJars)
	var same, skipped int
	for _, c := range rep.Conflicts {
		switch {
		case c.SameVersion && c.Skipped:
			skipped++
		case c.SameVersion:
			same++
		}
		if !c.SameVersion {
			fmt.Fprintf(w, "conflict: %s (%s) vs base %s (%s): different version; the base's copy wins (Spark's own jars come first on the classpath unless spark.driver.userClassPathFirst / spark.executor.userClassPathFirst is true), so the layer's is unused\n", c.Coord, c.Version, c.BasePath, c.BaseVersion)
		} else if verbose {
			fmt.Fprintf(w, "same version in the base: %s (%s)\n", c.Coord, c.BasePath)
		}
	}
	switch {
	case same > 0:
		fmt.Fprintf(w, "%d jar(s) the base already has at the same version are in the layer too (-v lists them; --skip-provided leaves them out)\n", same)
	case skipped > 0:
		fmt.Fprintf(w, "%d jar(s) the base already has at the same version left out (--skip-provided)\n", skipped)
	}
}

func orNone(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
